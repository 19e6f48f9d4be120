// Loading under a module name already loaded: the same module is returned;
// a different one is refused, unless the caller asks to replace it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, ValueError } from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const wasm = new URL('../../build/wasm/webffi.wasm', import.meta.url);

/** Builds a module named `kernels` whose answer() returns ANSWER, into dir/file. */
function buildAnswer(dir, file, answer) {
  writeFileSync(`${dir}/k.c`, `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->v_int64 = ${answer}; return 0;
}`);
  const run = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module',
    '--name', 'kernels', `${dir}/k.c`, '-o', `${dir}/${file}`], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return `${dir}/${file}`;
}

test('a different module under a loaded name is a ValueError unless { replace: true }', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-reload-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = buildAnswer(dir, 'first.wasm', 1);
  const second = buildAnswer(dir, 'second.wasm', 2);
  const rt = await loadTesting(await load({ wasm }));
  const mod = await rt.loadModule(first);
  assert.equal(mod.getFunction('answer')(), 1);

  // the same bytes, from another file, as bytes or compiled: the loaded module
  copyFileSync(first, `${dir}/copy.wasm`);
  for (const source of [first, `${dir}/copy.wasm`, readFileSync(first)]) {
    assert.equal((await rt.loadModule(source)).getFunction('answer')(), 1);
  }

  // a different module named `kernels`: refused, the loaded one stays
  for (const source of [second, readFileSync(second), new WebAssembly.Module(readFileSync(second))]) {
    await assert.rejects(rt.loadModule(source), (e) => e instanceof ValueError &&
      /a different module named `kernels` is already loaded .*\{ replace: true \}/.test(e.message));
  }
  assert.throws(() => rt.getGlobal('ffi.ModuleLoadFromFile')(second),
    (e) => e instanceof ValueError && /a different module named `kernels`/.test(e.message));
  assert.equal((await rt.loadModule(first)).getFunction('answer')(), 1);

  // a file rebuilt in place is a different module too
  buildAnswer(dir, 'first.wasm', 3);
  await assert.rejects(rt.loadModule(first), /a different module named `kernels`/);

  // asked to, the new one replaces it in the table; the old handle still works
  const replaced = await rt.loadModule(second, { replace: true });
  assert.equal(replaced.getFunction('answer')(), 2);
  assert.equal((await rt.loadModule(readFileSync(second))).getFunction('answer')(), 2);
  assert.equal(mod.getFunction('answer')(), 1);

  // a compiled module is the same only as itself (its bytes are not at hand)
  const compiled = new WebAssembly.Module(readFileSync(first));
  assert.equal((await rt.loadModule(compiled, { replace: true })).getFunction('answer')(), 3);
  assert.equal((await rt.loadModule(compiled)).getFunction('answer')(), 3);
  await assert.rejects(rt.loadModule(new WebAssembly.Module(readFileSync(first))),
    /a different module named `kernels`.*pass its bytes to compare them/);
  assert.equal(rt.getGlobal('testing.add_one')(1), 2, 'the runtime still works');
});

test('where files cannot be read, ffi.ModuleLoadFromFile finds the module JavaScript loaded from that URL', async (t) => {
  const { rawRuntime } = await import('../support/raw_runtime.mjs');
  const { moduleLoader } = await import('../../js/dylink.js');
  const rt = await rawRuntime(readFileSync(wasm));
  // a host without synchronous file reads (a browser), serving one URL
  const loader = moduleLoader(rt.exports, { readFileSync: false });
  const url = 'https://example.test/add_one.wasm';
  const bytes = readFileSync(`${root}build/wasm/tests/modules/add_one.wasm`);
  const realFetch = globalThis.fetch;
  t.after(() => { globalThis.fetch = realFetch; });
  globalThis.fetch = async (where) => (where === url ? new Response(bytes) : new Response(null, { status: 404 }));
  const mod = await loader.load(url);
  assert.equal(rt.call('ffi.ModuleLoadFromFile', url).value.object, mod);
  assert.match(rt.call('ffi.ModuleLoadFromFile', 'https://example.test/other.wasm').error.message,
    /this host cannot read files synchronously/);
});
