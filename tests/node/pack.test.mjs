// The package as a new user gets it: `npm pack`, the tarball installed
// offline into a new project in a temporary folder (package.json as
// `npm init -y` writes it, "type": "commonjs"), and the documents' first
// paths run there as they are written, with nothing of this repository on
// the module path: README's quick start (ES module and CommonJS, and a C
// function built with `npx webffi build`), a C module built with `-g` and
// its error with file and line (debugging.md), `webffi types` under
// `tsc --strict` (c-and-cpp.md), and onnxruntime-web and TensorFlow.js on
// webffi's GPU through webffi/node-gpu (tensors-and-webgpu.md). Packed and
// installed once for every subtest; what npm packs is package.test.mjs's.
// The user's own installs (webgpu, onnxruntime-web, tfjs, typescript) are
// links to this repository's dev dependencies: no network.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { blocksOf, documents, proseOf, repoRoot, roleOf, where } from '../support/doc_blocks.mjs';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
let work; // the temporary folder: the tarball and the project
let app; // the project

// The environment of a user's shell: no NODE_PATH, npm offline and quiet.
const env = { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false',
  npm_config_update_notifier: 'false' };
delete env.NODE_PATH;
delete env.NODE_OPTIONS;

function run(command, args, cwd, extra = {}) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300000, env: { ...env, ...extra } });
  return { status: r.status, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}

function ok(r, what) {
  assert.equal(r.status, 0, `${what} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

before(() => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'webffi-pack-')));
  const packed = JSON.parse(ok(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], repoRoot),
    'npm pack').stdout)[0];
  app = join(work, 'app');
  mkdirSync(app);
  // what `npm init -y` writes, less what does not matter here
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', main: 'index.js', type: 'commonjs', license: 'ISC' }, null, 2)}\n`);
  ok(run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, packed.filename)], app), 'npm install');
  // the user's own `npm install webgpu onnxruntime-web @tensorflow/... typescript`, from this repository's dev dependencies
  mkdirSync(join(app, 'node_modules', '@tensorflow'));
  for (const name of ['webgpu', 'onnxruntime-web', '@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-webgpu', 'typescript']) {
    symlinkSync(join(repoRoot, 'node_modules', name), join(app, 'node_modules', name), 'dir');
  }
  symlinkSync('../typescript/bin/tsc', join(app, 'node_modules', '.bin', 'tsc'));
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('npm in a clone warns about nothing in the project\'s config (onnxruntime-node\'s install flag is an env var of scripts/setup.sh)', () => {
  const r = ok(run('npm', ['pkg', 'get', 'version'], repoRoot), 'npm pkg get version');
  assert.equal(r.stdout.trim(), JSON.stringify(pkg.version));
  assert.doesNotMatch(r.stderr, /Unknown (project|user|env) config/);
  assert.match(readFileSync(join(repoRoot, 'scripts', 'setup.sh'), 'utf8'), /ONNXRUNTIME_NODE_INSTALL=skip npm ci /);
});

test('the tarball installs as a package of its own: webffi is a copy in node_modules, its command on the PATH npx uses', () => {
  const installed = join(app, 'node_modules', 'webffi');
  assert.ok(!lstatSync(installed).isSymbolicLink());
  assert.equal(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version, pkg.version);
  const where = ok(run(process.execPath, ['-e', 'console.log(require.resolve("webffi"))'], app), 'resolve');
  assert.equal(where.stdout.split('\n')[0], join(installed, 'dist', 'webffi.cjs'));
  assert.match(ok(run('npx', ['--no', '--', 'webffi', '--help'], app), 'npx webffi --help').stdout, /webffi build/);
});

/** The lines of `doc` from the heading `heading` (a line of its own) to the next heading of that level or above. */
function section(doc, heading) {
  const lines = proseOf(doc).split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `${doc} has no heading ${heading}`);
  const level = /^#+/.exec(heading)[0].length;
  let end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)[0].length <= level);
  if (end < 0) end = lines.length;
  return [start + 1, end + 1];
}

/**
 * Runs the blocks of one section of a document in a folder of the project,
 * as tests/node/docs.test.mjs does in its sandbox: files written, js run as
 * an ES module file, C built with `npx webffi build`, sh with bash, each
 * output block compared with what the block before printed. Browser blocks
 * are left to the browser tests. Returns how many outputs were compared.
 */
function runSection(doc, heading) {
  const [from, to] = section(doc, heading);
  const dir = join(app, doc.replace(/\W+/g, '_'));
  mkdirSync(dir, { recursive: true });
  let last = null;
  let compared = 0;
  for (const block of blocksOf(doc).filter((b) => b.line > from && b.line < to)) {
    const role = roleOf(block);
    if (role === 'file') {
      mkdirSync(dirname(join(dir, block.directives.file)), { recursive: true });
      writeFileSync(join(dir, block.directives.file), block.code);
    } else if (role === 'output') {
      if (last) {
        assert.equal(last.stdout, block.code, `${where(block)}: what ${where(last.block)} printed`);
        compared += 1;
      }
      last = null;
    } else if (role === 'node' || role === 'c' || role === 'sh') {
      let r;
      if (role === 'node') {
        writeFileSync(join(dir, `block-${block.line}.mjs`), block.code);
        r = run(process.execPath, [`block-${block.line}.mjs`], dir);
      } else if (role === 'c') {
        writeFileSync(join(dir, `block-${block.line}.c`), block.code);
        r = run('npx', ['--no', 'webffi', 'build', '--module', `block-${block.line}.c`, '-o', `block-${block.line}.wasm`], dir);
      } else {
        r = run('bash', ['-euo', 'pipefail', '-c', block.code], dir, { PATH: `${join(app, 'node_modules', '.bin')}:${env.PATH}` });
      }
      ok(r, where(block));
      last = { block, stdout: r.stdout };
    } else {
      last = null; // browser, not-run, text
    }
  }
  return compared;
}

test('README\'s quick start, from the package: ES module (index.mjs), CommonJS (index.cjs in a "type": "commonjs" project), a C function', () => {
  assert.equal(runSection('README.md', '## Quick start'), 3);
});

test('README\'s quick start saved as index.js where npm init made the project CommonJS fails as Node says, and README says why', () => {
  const esm = blocksOf('README.md').find((b) => roleOf(b) === 'node' && b.code.includes('loadTesting(rt)'));
  const dir = join(app, 'commonjs_index');
  mkdirSync(dir);
  writeFileSync(join(dir, 'index.js'), esm.code);
  const r = run(process.execPath, ['index.js'], dir);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /Cannot use import statement outside a module|await is only valid/);
  assert.match(proseOf('README.md'), /"type": "module"/);
});

test('debugging.md\'s first backtrace: a C module built with -g by the package\'s webffi build, its error with file and line', () => {
  assert.equal(runSection('docs/debugging.md', '## A first backtrace'), 1);
});

test('c-and-cpp.md\'s typed bindings: webffi types, then tsc --strict on the app that uses them, in a CommonJS project', () => {
  assert.equal(runSection('docs/c-and-cpp.md', '## Typed bindings: `webffi types`'), 2);
});

test('tensors-and-webgpu.md in Node: onnxruntime-web on webffi\'s device and webffi on tfjs\'s, through webffi/node-gpu, Dawn from the installed webgpu', () => {
  assert.equal(runSection('docs/tensors-and-webgpu.md', '### In Node'), 2);
  // the example's install line names the onnxruntime-web that ran it (this repository's dev dependency)
  const [from, to] = section('docs/tensors-and-webgpu.md', '### In Node');
  const ortExample = blocksOf('docs/tensors-and-webgpu.md').find((b) => b.line > from && b.line < to && b.code.includes('onnxruntime-web'));
  assert.match(ortExample.code, new RegExp(`^// npm install webffi webgpu onnxruntime-web@${pkg.devDependencies['onnxruntime-web'].replace(/\./g, '\\.')}\n`));
});

test('every jsdelivr/unpkg URL of webffi in README and docs names this version', () => {
  const urls = documents().flatMap((d) => [...readFileSync(join(repoRoot, d), 'utf8')
    .matchAll(/https:\/\/(?:cdn\.jsdelivr\.net\/npm|unpkg\.com)\/webffi(?=[@/])[^\s'")]*/g)].map((m) => `${d}: ${m[0]}`));
  assert.ok(urls.length >= 2);
  assert.deepEqual(urls.filter((u) => !u.includes(`/webffi@${pkg.version}/`)), []);
});
