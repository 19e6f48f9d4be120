// Upstream tvm-ffi's quickstart, unchanged, built by `webffi build` against
// upstream's headers: examples/quickstart/compile/add_one_cpu.cc
// (TVM_FFI_DLL_EXPORT_TYPED_FUNC over TensorView) as a module and linked
// into the runtime, and examples/quickstart/load/load_cpp.cc, a C++ command
// program that loads build/add_one_cpu.so with ffi::Module::LoadFromFile
// and prints the result. Upstream's tree never enters this repository:
// WEBFFI_UPSTREAM_INCLUDE names its include/ folder (examples/ is beside
// it); without it this fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as webffi from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const upstream = process.env.WEBFFI_UPSTREAM_INCLUDE;
if (!upstream || !existsSync(join(upstream, 'tvm/ffi/c_api.h'))) {
  throw new Error('WEBFFI_UPSTREAM_INCLUDE must name the include/ folder of an upstream tvm-ffi checkout');
}
const quickstart = join(upstream, '../examples/quickstart');
if (!existsSync(join(quickstart, 'compile/add_one_cpu.cc'))) {
  throw new Error(`no upstream quickstart at ${quickstart}`);
}

const cli = (...args) => spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), ...args], { encoding: 'utf8' });
const build = (...args) => {
  const result = cli('build', '--tvm-ffi-include', upstream, ...args);
  assert.equal(result.status, 0, result.stderr);
  // No warnings from the flags webffi compiles upstream's headers with.
  assert.doesNotMatch(result.stderr, /warning/, result.stderr);
};

/** add_one_cpu(x, y) writes x + 1 into y; a non-tensor argument is upstream's TypeError. */
function checkAddOne(rt, addOne) {
  const x = rt.tensor(new Float32Array([1, 2, 3, 4, 5]));
  const y = rt.tensor(new Float32Array(5));
  addOne(x, y);
  assert.deepEqual(Array.from(y.toTypedArray()), [2, 3, 4, 5, 6]);
  assert.throws(() => addOne(x, 7), (e) => e.name === 'TypeError' && /add_one_cpu/.test(e.message));
  x.dispose();
  y.dispose();
}

test('quickstart add_one_cpu.cc: a module and linked in, both called from Node', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-quickstart-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const source = join(quickstart, 'compile/add_one_cpu.cc');
  build('--module', source, '-o', join(dir, 'add_one_cpu.wasm'));
  build(source, '-o', join(dir, 'add_one_lib.wasm'));
  // The module exports its function and no C++ (what nothing calls is gone).
  const bytes = readFileSync(join(dir, 'add_one_cpu.wasm'));
  const exported = WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name);
  assert.deepEqual(exported.filter((n) => n.startsWith('__tvm_ffi_')), ['__tvm_ffi_add_one_cpu']);
  assert.deepEqual(exported.filter((n) => n.startsWith('_Z')), []);
  assert.ok(bytes.length < 300000, `${bytes.length} bytes`);
  const rt = await webffi.load();
  const mod = await rt.loadModule(join(dir, 'add_one_cpu.wasm'));
  checkAddOne(rt, mod.getFunction('add_one_cpu'));
  const app = await webffi.load({ wasm: readFileSync(join(dir, 'add_one_lib.wasm')) });
  const lib = app.getGlobal('ffi.SystemLib')();
  checkAddOne(app, lib.getFunction('add_one_cpu'));
});

test('quickstart load_cpp.cc: a command program loads build/add_one_cpu.so and prints', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-quickstart-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'build'));
  build('--module', join(quickstart, 'compile/add_one_cpu.cc'), '-o', join(dir, 'add_one_cpu.wasm'));
  copyFileSync(join(dir, 'add_one_cpu.wasm'), join(dir, 'build/add_one_cpu.so'));
  build(join(quickstart, 'load/load_cpp.cc'), '-o', join(dir, 'load_cpp.wasm'));
  const result = spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), 'run', 'load_cpp.wasm'],
    { cwd: dir, encoding: 'utf8' });
  assert.equal(result.stderr, '');
  assert.equal(result.stdout, '[ 2 3 4 5 6 ]\n');
  assert.equal(result.status, 0);
});
