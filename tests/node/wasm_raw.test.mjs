// The wasm builds instantiated with webffi's own WASI shim and host
// imports, driven through raw exports only (no JS runtime layer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rawRuntime, runCommand } from '../support/raw_runtime.mjs';
import { loadTestingRaw } from '../support/testing_module.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const BUILDS = {
  emscripten: `${root}build/wasm`,
  wasi: `${root}build/wasi`,
};

const load = (dir, file = 'webffi.wasm') => rawRuntime(readFileSync(`${dir}/${file}`));
// The test fixtures (testing.*) are a module of their own (src/testing/).
const emscripten = await load(BUILDS.emscripten);
await loadTestingRaw(emscripten.exports);

test('ABI metadata matches the layouts the ABI fixes', () => {
  const { meta } = emscripten;
  assert.equal(meta.metadata_version, 1);
  assert.deepEqual(meta.tvm_ffi_version, [0, 1, 14]);
  assert.equal(meta.pointer_size, 4);
  assert.equal(meta.sizeof.TVMFFIAny, 16);
  assert.equal(meta.sizeof.TVMFFIObject, 24);
  assert.equal(meta.offsetof['TVMFFIAny.v_int64'], 8);
  assert.equal(meta.type_index['ffi.String'], 65);
  assert.equal(meta.type_index['ffi.Function'], 68);
  assert.equal(meta.device_type.webgpu, 15);
});

test('the shipping runtime has no testing.* globals; loading the fixtures module adds them', async () => {
  for (const [toolchain, dir] of Object.entries(BUILDS)) {
    const fresh = await load(dir);
    assert.ok(!Object.keys(fresh.meta.type_index).some((key) => key.startsWith('testing.')), toolchain);
    for (const name of ['testing.echo', 'testing.add_one', 'testing.test_raise_error', 'testing.trap']) {
      assert.throws(() => fresh.call(name), new RegExp(`^Error: ${name.replace('.', '\\.')} is not registered$`), `${toolchain}: ${name}`);
    }
  }
  const fresh = await load(BUILDS.emscripten);
  await loadTestingRaw(fresh.exports);
  assert.deepEqual(fresh.call('testing.add_one', 41), { value: 42n });
  assert.deepEqual(fresh.call('testing.echo', 'back'), { value: 'back' });
});

test('testing.echo returns ints, floats and strings unchanged', () => {
  const { call } = emscripten;
  assert.deepEqual(call('testing.echo', 42), { value: 42n });
  assert.deepEqual(call('testing.echo', -2.5), { value: -2.5 });
  assert.deepEqual(call('testing.echo', 'hi'), { value: 'hi' });
  assert.deepEqual(call('testing.echo', 'a string longer than seven bytes, ünïcödé'), {
    value: 'a string longer than seven bytes, ünïcödé',
  });
  assert.deepEqual(call('testing.echo', null), { value: null });
});

test('testing.add_one adds one and rejects a float with the upstream message', () => {
  const { call } = emscripten;
  assert.deepEqual(call('testing.add_one', 41), { value: 42n });
  const { error } = call('testing.add_one', 1.5);
  assert.equal(error.kind, 'TypeError');
  assert.equal(
    error.message,
    'Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. ' +
      'Expected `int` but got `float`',
  );
});

test('errors raised in wasm carry C frames named from the name section', () => {
  const { call } = emscripten;
  const { error } = call('testing.test_raise_error', 'ValueError', 'boom');
  assert.equal(error.kind, 'ValueError');
  assert.equal(error.message, 'boom');
  const lines = error.backtrace.trimEnd().split('\n');
  assert.match(lines[0], /^ {2}File "[^"]*wasm-function\[\d+\]:0x[0-9a-f]+", line unknown, in webffi_testing\.testing_raise_error$/);
  // runtime-internal frames are filtered out
  assert.ok(!/in (wf_|TVMFFI|WebFFI)/.test(error.backtrace), error.backtrace);
  const typed = call('testing.add_one', 'x').error;
  assert.match(typed.backtrace, /in webffi_testing\.testing_add_one\n/);
});

test('the runtime keeps working after errors', () => {
  const { call } = emscripten;
  for (let i = 0; i < 100; i++) call('testing.add_one', 'bad');
  assert.deepEqual(call('testing.add_one', 1), { value: 2n });
});

test('the clang + wasi-libc build loads and answers the same calls', async () => {
  // it loads no modules: its runtime with the fixtures linked in
  const wasi = await load(BUILDS.wasi, 'webffi_with_testing.wasm');
  assert.equal(wasi.meta.sizeof.TVMFFIAny, 16);
  assert.deepEqual(wasi.call('testing.add_one', 41), { value: 42n });
  assert.deepEqual(wasi.call('testing.echo', 'from wasi-libc'), { value: 'from wasi-libc' });
  assert.equal(wasi.call('testing.add_one', 2.5).error.kind, 'TypeError');
});

for (const [toolchain, dir] of Object.entries(BUILDS)) {
  test(`the ABI example program runs in wasm (${toolchain})`, async () => {
    const { code, stdout } = await runCommand(readFileSync(`${dir}/abi_example.wasm`));
    assert.equal(code, 0);
    assert.equal(
      stdout,
      'example.add(40, 2) = 42\nexample.add(40, 2.5) raised TypeError: add expects two ints\n',
    );
  });
}
