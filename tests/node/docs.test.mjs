// Docs are code: every code block in README.md and docs/*.md runs here
// (browser blocks in tests/browser/docs.test.mjs), in order, each document
// in a sandbox folder of its own where `webffi` is the package under test.
// Blocks marked `output` must be exactly what the block before printed.
// See tests/support/doc_blocks.mjs for the directives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { blocksOf, documents, proseOf, repoRoot, roleOf, where } from '../support/doc_blocks.mjs';

const sandboxRoot = join(repoRoot, 'build', 'docs');

/** A fresh folder for one document, with `webffi` installed as a link to the repository. */
function sandbox(doc) {
  const dir = join(sandboxRoot, doc.replace(/[/.]/g, '_'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(repoRoot, join(dir, 'node_modules', 'webffi'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  // `npx webffi` runs this repository's CLI (`npx esbuild`, ... its dev
  // dependencies); `npm install webffi` is the link made above.
  const bin = join(dir, '.bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'npx'), `#!/bin/sh
case "$1" in
  webffi) shift; exec node ${JSON.stringify(join(repoRoot, 'bin', 'webffi.mjs'))} "$@" ;;
  esbuild|vite|webpack|tsc) tool=$1; shift; exec ${JSON.stringify(join(repoRoot, 'node_modules', '.bin'))}/$tool "$@" ;;
  *) echo "docs: npx $1 is neither this package nor one of its dev dependencies" >&2; exit 2 ;;
esac
`);
  writeFileSync(join(bin, 'npm'), `#!/bin/sh\n[ "$1" = install ] && [ "$2" = webffi ] && [ $# -eq 2 ] && exit 0\necho "docs: only 'npm install webffi' runs here" >&2\nexit 2\n`);
  chmodSync(join(bin, 'npx'), 0o755);
  chmodSync(join(bin, 'npm'), 0o755);
  return dir;
}

function run(command, args, cwd) {
  const r = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: 120000,
    env: { ...process.env, PATH: `${join(cwd, '.bin')}:${process.env.PATH}`, WEBFFI_DOCS: '1' },
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}

function runBlock(block, dir) {
  const role = roleOf(block);
  const name = `block-${block.line}`;
  if (role === 'node') {
    writeFileSync(join(dir, `${name}.mjs`), block.code);
    return run(process.execPath, [`${name}.mjs`], dir);
  }
  if (role === 'c') {
    const ext = block.lang === 'c' ? 'c' : 'cc';
    writeFileSync(join(dir, `${name}.${ext}`), block.code);
    return run(process.execPath, [join(repoRoot, 'bin', 'webffi.mjs'), 'build', '--module', `${name}.${ext}`, '-o', `${name}.wasm`], dir);
  }
  if (role === 'sh') return run('bash', ['-euo', 'pipefail', '-c', block.code], dir);
  if (role === 'cmake') {
    writeFileSync(join(dir, 'CMakeLists.txt'), block.code);
    const configured = run('cmake', ['-S', '.', '-B', `build-${block.line}`], dir);
    return configured.status === 0 ? run('cmake', ['--build', `build-${block.line}`], dir) : configured;
  }
  throw new Error(`${where(block)}: no runner for a ${block.lang} block`);
}

for (const doc of documents()) {
  test(`${doc}: every code block runs`, async () => {
    const blocks = blocksOf(doc);
    const dir = sandbox(doc);
    let last = null; // { block, result } of the last block run
    let ran = 0;
    const failures = []; // every block runs; all failures are reported together
    for (const [i, block] of blocks.entries()) {
      const role = roleOf(block);
      assert.notEqual(role, 'unknown', `${where(block)}: a \`${block.lang}\` block has no runner (tag it text if it is not code)`);
      if (role === 'file') {
        const path = join(dir, block.directives.file);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, block.code);
        const used = blocks.slice(i + 1).some((b) => b.code.includes(block.directives.file));
        assert.ok(used, `${where(block)}: file ${block.directives.file} is written but no later block uses it`);
      } else if (role === 'output') {
        if (last?.block && roleOf(last.block) === 'browser') continue; // checked by the browser test
        assert.ok(last, `${where(block)}: an output block must follow a block that runs`);
        if (last.result.stdout !== block.code) {
          failures.push(`${where(block)}: ${where(last.block)} printed\n${last.result.stdout}\ninstead of\n${block.code}`);
        }
      } else if (role === 'not-run') {
        assert.ok(['sh', 'bash'].includes(block.lang), `${where(block)}: only shell blocks may be not-run`);
        last = null;
      } else if (role === 'text') {
        // not code
      } else if (role === 'browser') {
        last = { block };
      } else {
        const stop = block.directives.fixture ? await prepareFixture(block.directives.fixture, dir) : null;
        let result;
        try {
          result = runBlock(block, dir);
        } finally {
          stop?.();
        }
        const kind = block.directives['expect-error'];
        if (kind && (result.status === 0 || !new RegExp(`\\b${kind}\\b`).test(result.stderr))) {
          failures.push(`${where(block)}: expected an uncaught ${kind}:\n${result.stderr}`);
        } else if (!kind && result.status !== 0) {
          failures.push(`${where(block)} failed:\n${result.stdout}\n${result.stderr}`);
        }
        last = { block, result };
        ran += 1;
      }
    }
    assert.deepEqual(failures, [], failures.join('\n\n'));
    assert.ok(ran > 0 || blocks.every((b) => roleOf(b) === 'text'), `${doc}: no block ran`);
  });
}

/**
 * What a block uses that a document cannot hold (`<!-- doc: fixture=NAME -->`);
 * returns a function that stops what it started, or nothing.
 * arctic-s: web-llm's snowflake-arctic-embed-s model library as arctic-s.wasm
 * and a tensor cache of seeded random weights for it in arctic-s-weights/.
 * rpc-tracker: a stand-in for TVM's RPC tracker on 127.0.0.1:9190, in a
 * process of its own (the block runs synchronously).
 */
async function prepareFixture(name, dir) {
  if (name === 'rpc-tracker') return startTrackerProcess(9190);
  if (name !== 'arctic-s') throw new Error(`no docs fixture ${name}`);
  const library = join(dir, 'arctic-s.wasm');
  if (existsSync(join(dir, 'arctic-s-weights', 'tensor-cache.json'))) return;
  const { modelPath, ARCTIC_S, libraryParams, makeTensorCache, writeTensorCache } = await import('../support/model_fixture.mjs');
  symlinkSync(modelPath(ARCTIC_S), library);
  writeTensorCache(join(dir, 'arctic-s-weights'), makeTensorCache(await libraryParams(library)));
}

async function startTrackerProcess(port) {
  const script = `const { startTracker } = await import(${JSON.stringify(join(repoRoot, 'tests/support/rpc_tracker.mjs'))});
await startTracker({ port: ${port} });
console.log('ready');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`the stand-in tracker exited (${code})`)));
  });
  return () => child.kill();
}

// A document cites only files that exist: `path/to/file.ext` (from the
// repository, the document's folder or include/) and links.
test('the docs cite only files that exist', () => {
  for (const doc of documents()) {
    const text = proseOf(doc);
    const cited = new Set();
    for (const m of text.matchAll(/`((?:\.\.?\/)?(?:[\w.-]+\/)+[\w.-]*\.[a-z]+|[\w-]+\.md)`/g)) cited.add(m[1]);
    for (const m of text.matchAll(/\]\(((?!https?:|#)[^)#\s]+)/g)) cited.add(m[1]);
    for (const path of cited) {
      const ok = [repoRoot, join(repoRoot, dirname(doc)), join(repoRoot, 'include')].some((base) => existsSync(join(base, path))) ||
        GENERATED.some((g) => path.startsWith(g));
      assert.ok(ok, `${doc} cites ${path}, which does not exist`);
    }
  }
});

// A link into a document names a heading of it (`file.md#heading`, `#heading`):
// the anchor GitHub and npm make of the heading's text.
test('the docs link only to headings that exist', () => {
  const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
  const anchors = (doc) => new Set(proseOf(doc).split('\n').flatMap((l) => /^#{1,6} /.test(l) ? [slug(l.replace(/^#+ /, ''))] : []));
  const broken = [];
  let checked = 0;
  for (const doc of documents()) {
    for (const m of proseOf(doc).matchAll(/\]\(((?!https?:)[^)#\s]*)#([^)\s]+)\)/g)) {
      const target = m[1] === '' ? doc : join(dirname(doc), m[1]);
      if (!target.endsWith('.md') || !existsSync(join(repoRoot, target))) continue; // files: the test above
      checked += 1;
      if (!anchors(target).has(m[2])) broken.push(`${doc} -> ${m[1]}#${m[2]}`);
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked >= 10, `only ${checked} links to headings`);
});

// Made by the build, or by the user's own commands in the docs.
const GENERATED = ['dist/', 'build/', 'node_modules/'];
