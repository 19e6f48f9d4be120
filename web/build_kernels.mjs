// Builds the demo page's C kernel (web/matmul.c) into web/dist/matmul.wasm
// with `webffi build --module`, when it is missing or older than its
// inputs. Run by scripts/demo.mjs and by tests/browser/web_demo.test.mjs;
// by hand: `node web/build_kernels.mjs`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../', import.meta.url));
const source = join(root, 'web/matmul.c');
export const kernelPath = join(root, 'web/dist/matmul.wasm');

const mtime = (file) => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
};

/** Builds the kernel if needed; returns its path. Throws with the compiler's output on failure. */
export function buildKernels() {
  const inputs = [source, fileURLToPath(import.meta.url), join(root, 'bin/webffi.mjs'),
    join(root, 'bin/debug_build.mjs'), join(root, 'bin/line_table.mjs'), join(root, 'include/webffi/typed_call.h')];
  if (mtime(kernelPath) > Math.max(...inputs.map(mtime))) return kernelPath;
  mkdirSync(join(root, 'web/dist'), { recursive: true });
  // -gline-tables-only: the error panel shows file and line for its C frames
  const r = spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), 'build', '--module', '-O2', '-msimd128',
    '-gline-tables-only', '-Wall', '-Wextra', '-Werror', source, '-o', kernelPath], { encoding: 'utf8', cwd: root });
  if (r.status !== 0) {
    throw new Error(`building ${source} failed (exit ${r.status}):\n${r.stderr}${r.stdout}`);
  }
  return kernelPath;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${buildKernels()}`);
}
