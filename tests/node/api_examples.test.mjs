// The API reference's examples are code: every `@example` in the .d.ts
// entry points (typedoc.json) type-checks with tsc --strict against the
// package's own types, and runs in Node (each in a folder of its own under
// build/api-examples/, importing the package by its name) with exactly the
// output its `output` block shows. An example that cannot run here says why
// (`<!-- doc: not-run="WHY" -->`) and is still type-checked. See
// tests/support/api_examples.mjs for the directives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { documentedDeclarations, examplesOf, isHidden } from '../support/api_examples.mjs';
import { repoRoot } from '../support/doc_blocks.mjs';

const root = join(repoRoot, 'build', 'api-examples');
const CODE = new Set(['ts', 'js', 'mjs']);

/** Every example: { id, decl, blocks, code (the block that runs), output (its expected stdout or null) }. */
function collect() {
  const examples = [];
  const taken = new Set();
  for (const decl of documentedDeclarations()) {
    if (isHidden(decl)) continue;
    examplesOf(decl).forEach((blocks, i) => {
      const module = decl.file.replace(/^js\//, '').replace(/(\/index)?\.d\.ts$/, '').replace(/\W+/g, '_');
      let id = `${module}.${decl.name.replace(/\W+/g, '_')}${i ? `.${i + 1}` : ''}`;
      // one folder each, also where names differ only in case (PeerBudget, peerBudget)
      while (taken.has(id.toLowerCase())) id += '_';
      taken.add(id.toLowerCase());
      const main = blocks.filter((b) => CODE.has(b.lang) && !b.directives.file && !b.directives.output);
      const output = blocks.find((b) => b.directives.output);
      examples.push({ id, decl, blocks, main, output: output ? output.code : null, where: `${decl.file}:${decl.line} ${decl.name}` });
    });
  }
  return examples;
}

const examples = collect();
const only = process.env.API_EXAMPLES ? new RegExp(process.env.API_EXAMPLES) : null;
const selected = only ? examples.filter((e) => only.test(e.id)) : examples;

test('each @example is one block of code, with at most one output block after it', () => {
  const bad = examples.filter((e) => e.main.length !== 1 ||
    (e.output !== null && e.blocks.indexOf(e.blocks.find((b) => b.directives.output)) < e.blocks.indexOf(e.main[0])));
  assert.deepEqual(bad.map((e) => e.where), []);
  const unexplained = examples.filter((e) => e.main[0]?.directives['not-run'] === true);
  assert.deepEqual(unexplained.map((e) => e.where), [], 'not-run needs a reason: not-run="WHY"');
});

/** The folder an example runs in, with the files it names. */
function prepare(example) {
  const dir = join(root, example.id);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const b of example.blocks) {
    if (b.directives.file) {
      mkdirSync(dirname(join(dir, b.directives.file)), { recursive: true });
      writeFileSync(join(dir, b.directives.file), b.code);
    }
  }
  writeFileSync(join(dir, 'example.ts'), example.main[0].code);
  return dir;
}

test('every @example type-checks with tsc --strict', () => {
  rmSync(root, { recursive: true, force: true });
  const files = [];
  for (const e of examples) {
    if (e.main.length !== 1) continue;
    prepare(e);
    files.push(`${e.id}/example.ts`);
  }
  // The configuration of tests/types/tsconfig.dom-node.json: DOM and Node types, strict.
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'],
      types: ['node'], strict: true, noEmit: true, skipLibCheck: false,
    },
    files,
  }, null, 2));
  const r = spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'tsconfig.json')], { cwd: root, encoding: 'utf8' });
  assert.equal(`${r.stdout}${r.stderr}`, '', 'tsc found errors in the examples (the paths name the declaration)');
  assert.equal(r.status, 0);
  assert.ok(files.length > 100, `only ${files.length} examples`);
});

/** Files an example uses that no comment can hold (`<!-- doc: fixture=NAME -->`). */
async function makeFixture(name, dir) {
  const modules = join(repoRoot, 'build', 'wasm', 'tests', 'modules');
  if (name === 'add_one' || name === 'typed') {
    copyFileSync(join(modules, `${name}.wasm`), join(dir, `${name}.wasm`));
  } else if (name === 'load_and_call') { // a command program, and the module it loads
    for (const m of ['load_and_call', 'add_one']) copyFileSync(join(modules, `${m}.wasm`), join(dir, `${m}.wasm`));
  } else if (name === 'arctic-s') {
    const { modelPath, ARCTIC_S, libraryParams, makeTensorCache, writeTensorCache } = await import('../support/model_fixture.mjs');
    symlinkSync(modelPath(ARCTIC_S), join(dir, 'arctic-s.wasm'));
    writeTensorCache(join(dir, 'arctic-s-weights'), makeTensorCache(await libraryParams(join(dir, 'arctic-s.wasm'))));
  } else {
    throw new Error(`no example fixture ${name}`);
  }
}

function runNode(file, cwd) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

test('every @example runs and prints its output', { concurrency: 2 }, async (t) => {
  assert.ok(existsSync(join(repoRoot, 'dist', 'webffi.wasm')), 'dist/: run scripts/build.sh');
  const runs = [];
  for (const e of selected) {
    const block = e.main[0];
    if (!block) continue; // reported above
    if (block.directives['not-run']) continue; // type-checked above
    runs.push(t.test(`${e.where} (${e.id})`, async () => {
      const dir = prepare(e);
      if (block.directives.fixture) await makeFixture(block.directives.fixture, dir);
      const js = ts.transpileModule(block.code, {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: false },
      }).outputText;
      writeFileSync(join(dir, 'example.mjs'), js);
      const r = await runNode('example.mjs', dir);
      assert.equal(r.status, 0, `${e.where}: the example failed (${r.signal ?? r.status}):\n${r.stdout}\n${r.stderr}`);
      if (e.output !== null) assert.equal(r.stdout, e.output, `${e.where}: printed\n${r.stdout}\ninstead of\n${e.output}`);
    }));
  }
  await Promise.all(runs);
  assert.ok(runs.length > 0, 'no example ran');
});

test('not-run examples are the few that need what the tests do not have', () => {
  const notRun = examples.filter((e) => e.main[0]?.directives['not-run']);
  for (const e of notRun) assert.ok(String(e.main[0].directives['not-run']).length > 10, `${e.where}: say why it cannot run`);
  assert.ok(notRun.length <= examples.length / 10, `${notRun.length} of ${examples.length} examples are not run`);
});
