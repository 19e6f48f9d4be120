// Upstream tvm-ffi's tests/python/test_error.py, its behaviours checked of
// webffi's JS errors, on upstream's own testing library
// (src/ffi/testing/testing.cc beside the include folder, or
// WEBFFI_UPSTREAM_TESTING_SRC) built by `webffi build --module
// -gline-tables-only` against upstream's headers: TestRaiseError and
// TestApply are upstream's C++ (TVMFFIBacktrace with file and line, a
// packed call of a JS function). tests/support/errors_suite.mjs checks the
// same of webffi's own fixtures in `npm test`. Upstream's tree never enters
// this repository: WEBFFI_UPSTREAM_INCLUDE names its include/ folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as webffi from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const upstream = process.env.WEBFFI_UPSTREAM_INCLUDE;
if (!upstream || !existsSync(join(upstream, 'tvm/ffi/c_api.h'))) {
  throw new Error('WEBFFI_UPSTREAM_INCLUDE must name the include/ folder of an upstream tvm-ffi checkout');
}
const testingSource = process.env.WEBFFI_UPSTREAM_TESTING_SRC ?? join(upstream, '../src/ffi/testing/testing.cc');
if (!existsSync(testingSource)) throw new Error(`no upstream testing library at ${testingSource} (set WEBFFI_UPSTREAM_TESTING_SRC)`);

const dir = mkdtempSync(join(tmpdir(), 'webffi-upstream-errors-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const built = spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), 'build', '--module', '-gline-tables-only',
  '--tvm-ffi-include', upstream, '-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1', testingSource,
  '-o', join(dir, 'tvm_ffi_testing.wasm')], { encoding: 'utf8' });
assert.equal(built.status, 0, built.stderr);

const rt = await webffi.load();
await rt.loadModule(join(dir, 'tvm_ffi_testing.wasm'));
const g = (name) => rt.getGlobal(name);
const count = (text, word) => text.split('\n').filter((line) => line.includes(word)).length;
const at = (text, word) => text.split('\n').findIndex((line) => line.includes(word));
const caught = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

test('test_error_from_cxx: kind, message and the TestRaiseError frame, with its file and line', () => {
  const raise = g('testing.test_raise_error');
  const e = caught(() => raise('ValueError', 'error XYZ'));
  assert.ok(e instanceof webffi.ValueError);
  assert.deepEqual([e.kind, e.message], ['ValueError', 'error XYZ']);
  assert.equal(count(e.backtrace, 'TestRaiseError'), 1, e.backtrace);
  assert.match(e.backtrace, /^ {2}File "[^"]*src\/ffi\/testing\/testing\.cc", line \d+, in .*TestRaiseError/, e.backtrace);
  const fapply = rt.toFFI((f, ...args) => f(...args));
  const typeError = caught(() => fapply(raise, 'TypeError', 'error XYZ'));
  assert.ok(typeError instanceof TypeError && typeError.kind === 'TypeError');
});

test('test_error_from_nested_pyfunc: TestRaiseError, the JS lambda and TestApply once each, in order', () => {
  const raise = g('testing.test_raise_error');
  const apply = g('testing.apply');
  const lambda = (f, ...args) => f(...args);
  const fapply = rt.toFFI(lambda);
  let recorded = null;
  function raiseError() {
    try {
      fapply(raise, 'ValueError', 'error XYZ');
    } catch (e) {
      assert.equal(count(e.backtrace, 'TestRaiseError'), 1, e.backtrace);
      recorded = e;
      throw e;
    }
  }
  const e = caught(() => apply(raiseError));
  assert.equal(e, recorded);
  const bt = e.backtrace;
  assert.equal(count(bt, 'TestRaiseError'), 1, bt);
  assert.equal(count(bt, 'TestApply'), 1, bt);
  assert.equal(count(bt, 'in lambda'), 1, bt);
  assert.ok(at(bt, 'TestRaiseError') < at(bt, 'in lambda'), bt);
  assert.ok(at(bt, 'in lambda') < at(bt, 'TestApply'), bt);
});

test('test_error_traceback_update: a JS error converted carries its raising frame; a C error gains its JS frames', () => {
  function raiseError() {
    throw new webffi.ValueError('error XYZ');
  }
  const js = caught(() => raiseError());
  assert.equal(rt.toFFI(js), js);
  assert.notEqual(at(js.backtrace, 'in raiseError'), -1, js.backtrace);
  const fecho = g('testing.echo');
  function raiseCxxError() {
    g('testing.test_raise_error')('ValueError', 'error XYZ');
  }
  const e = caught(() => raiseCxxError());
  assert.equal(at(e.backtrace, 'raiseCxxError'), -1, e.backtrace);
  assert.equal(rt.toFFI(e), e);
  assert.equal(count(e.backtrace, 'raiseCxxError'), 1, e.backtrace);
  assert.equal(fecho(e), e);
  assert.equal(count(e.backtrace, 'raiseCxxError'), 1, e.backtrace);
  assert.equal(count(e.backtrace, 'TestRaiseError'), 1, e.backtrace);
});

test('test_error_no_cyclic_reference: errors raised and dropped leave nothing held', () => {
  const live = rt.liveJSValues;
  const map = rt.toFFI(new Map());
  for (let i = 0; i < 1000; i++) {
    const e = caught(() => g('ffi.MapGetItem')(map, 'a'));
    assert.ok(e instanceof webffi.KeyError);
  }
  assert.equal(rt.liveJSValues, live);
});
