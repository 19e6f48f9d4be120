// Builds the demo page's C kernel (web/matmul.c) twice, each when it is
// missing or older than its inputs: web/dist/matmul.wasm with `webffi build
// --module` (loaded into the single-threaded runtime on the page and in its
// worker), and web/dist/matmul_mt.wasm with `webffi build --threads` (the
// threaded runtime with the kernel linked in, for load({ threads })). Run by
// scripts/demo.mjs and by tests/browser/web_demo.test.mjs; by hand:
// `node web/build_kernels.mjs`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../', import.meta.url));
const source = join(root, 'web/matmul.c');
export const kernelPath = join(root, 'web/dist/matmul.wasm');
export const threadedKernelPath = join(root, 'web/dist/matmul_mt.wasm');

const mtime = (file) => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
};

function build(out, inputs, args) {
  if (mtime(out) > Math.max(...inputs.map(mtime))) return out;
  mkdirSync(join(root, 'web/dist'), { recursive: true });
  const r = spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), 'build', ...args, '-O2', '-msimd128',
    '-Wall', '-Wextra', '-Werror', source, '-o', out], { encoding: 'utf8', cwd: root });
  if (r.status !== 0) {
    throw new Error(`building ${source} into ${out} failed (exit ${r.status}):\n${r.stderr}${r.stdout}`);
  }
  return out;
}

const commonInputs = () => [source, fileURLToPath(import.meta.url), join(root, 'bin/webffi.mjs'),
  join(root, 'include/webffi/typed_call.h'), join(root, 'include/webffi/parallel.h')];

/** Builds the module if needed; returns its path. Throws with the compiler's output on failure. */
export function buildKernels() {
  // -gline-tables-only: the error panel shows file and line for its C frames
  return build(kernelPath, [...commonInputs(), join(root, 'bin/debug_build.mjs'), join(root, 'bin/line_table.mjs')],
    ['--module', '-gline-tables-only']);
}

/**
 * Builds the threaded runtime with the kernel linked in if needed; returns
 * its path. Throws with the compiler's output on failure.
 */
export function buildThreadedKernels() {
  return build(threadedKernelPath, [...commonInputs(), join(root, 'dist/libwebffi-mt.a')], ['--threads']);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${buildKernels()}`);
  console.log(`built ${buildThreadedKernels()}`);
}
