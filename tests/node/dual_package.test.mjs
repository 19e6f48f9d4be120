// One copy of the library in an app that both requires and imports webffi:
// require('webffi') is the ES module graph itself (Node's require of ES
// modules), so classes, error registry and value codecs are shared. Tested
// through the package name, from an app whose node_modules/webffi is this
// repository.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
let app;
before(() => {
  app = mkdtempSync(join(tmpdir(), 'webffi-dual-'));
  writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true }');
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(root, join(app, 'node_modules/webffi'), 'dir');
});
after(() => rmSync(app, { recursive: true, force: true }));

/** Runs file (written into the app) with node; returns its JSON output, stderr empty. */
function runApp(file, code) {
  writeFileSync(join(app, file), code);
  const r = spawnSync(process.execPath, [file], { cwd: app, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'no warnings');
  return JSON.parse(r.stdout);
}

// The same checks from either side; `cjs` and `esm` are the two views.
const checks = `
  const out = {};
  out.sameClasses = ['load', 'RuntimeError', 'ValueError', 'FFIError', 'registerError', 'registerValueCodec', 'Session']
    .filter((name) => cjs[name] !== esm[name]);
  class AppError extends cjs.RuntimeError {}
  cjs.registerError('AppError', AppError);
  // the test fixtures (testing.*) are a module the package ships
  const { loadTesting } = await import('webffi/js/testing.js');
  const rt = await loadTesting(await esm.load());
  try {
    rt.getGlobal('testing.test_raise_error')('AppError', 'raised in C');
  } catch (e) {
    out.registered = { kind: e.kind, app: e instanceof AppError, runtime: e instanceof esm.RuntimeError };
  }
  try {
    rt.getGlobal('testing.add_one')('x');
  } catch (e) {
    out.typeError = e instanceof cjs.FFITypeError;
  }
  esm.registerValueCodec('app.Point', { encode: (p) => p, decode: (d) => ({ point: d }) });
  out.codec = cjs.decodeValue(['X', 'app.Point', [1, 2]]);
  const decoded = esm.decodeValue(structuredClone(cjs.encodeValue(new cjs.IndexError('by value'))));
  out.decodedError = decoded instanceof esm.IndexError;
  console.log(JSON.stringify(out));
`;
const expected = {
  sameClasses: [],
  registered: { kind: 'AppError', app: true, runtime: true },
  typeError: true,
  codec: { point: [1, 2] },
  decodedError: true,
};

test('a CommonJS app that also imports webffi sees one library', () => {
  const out = runApp('app.cjs', `
    const cjs = require('webffi');
    (async () => {
      const esm = await import('webffi');
      ${checks}
    })();`);
  assert.deepEqual(out, expected);
});

test('an ES module app that also requires webffi sees one library', () => {
  const out = runApp('app.mjs', `
    import { createRequire } from 'node:module';
    import * as esm from 'webffi';
    const cjs = createRequire(import.meta.url)('webffi');
    ${checks}`);
  assert.deepEqual(out, expected);
});

test('main (dist/webffi.cjs) and the require condition are the same module', () => {
  const out = runApp('main.cjs', `
    const byName = require('webffi');
    const byMain = require('webffi/package.json').main;
    const viaMain = require(require('node:path').join(require.resolve('webffi/package.json'), '..', byMain));
    console.log(JSON.stringify({ same: viaMain === byName, load: typeof byName.load }));`);
  assert.deepEqual(out, { same: true, load: 'function' });
});
