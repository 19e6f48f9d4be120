// The wasm builds instantiated with webffi's own WASI shim and host
// imports, driven through raw exports only (no JS runtime layer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createWasi, WasiExit } from '../../js/wasi.js';
import { createHostImports } from '../../js/host_imports.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const BUILDS = {
  emscripten: `${root}build/wasm`,
  wasi: `${root}build/wasi`,
};

async function instantiate(path, write) {
  const wasi = createWasi({ write });
  let memory;
  const imports = {
    wasi_snapshot_preview1: wasi.imports,
    ...createHostImports(() => memory),
  };
  const { instance } = await WebAssembly.instantiate(readFileSync(path), imports);
  memory = instance.exports.memory;
  wasi.setMemory(memory);
  return instance;
}

/** Raw access to one runtime instance, reading layouts from its metadata. */
async function rawRuntime(dir) {
  const instance = await instantiate(`${dir}/webffi.wasm`);
  const x = instance.exports;
  x._initialize();
  const mem = () => new DataView(x.memory.buffer);
  const cstr = (ptr) => {
    const bytes = new Uint8Array(x.memory.buffer);
    let end = ptr;
    while (bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(ptr, end));
  };
  const meta = JSON.parse(cstr(x.WebFFIGetABIMetadata()));
  const off = meta.offsetof;
  const T = meta.type_index;
  const alloc = (n) => {
    const p = x.WebFFIHeapAlloc(n);
    assert.notEqual(p, 0);
    return p;
  };
  const putStr = (s) => {
    const b = new TextEncoder().encode(s + '\0');
    const p = alloc(b.length);
    new Uint8Array(x.memory.buffer).set(b, p);
    return p;
  };
  const byteArray = (s) => {
    const ba = alloc(meta.sizeof.TVMFFIByteArray);
    const data = putStr(s);
    mem().setUint32(ba + off['TVMFFIByteArray.data'], data, true);
    mem().setUint32(ba + off['TVMFFIByteArray.size'], new TextEncoder().encode(s).length, true);
    return ba;
  };
  const getGlobal = (name) => {
    const out = alloc(4);
    assert.equal(x.TVMFFIFunctionGetGlobal(byteArray(name), out), 0);
    return mem().getUint32(out, true);
  };
  const ANY = meta.sizeof.TVMFFIAny;
  const writeAny = (p, v) => {
    const m = mem();
    m.setBigUint64(p + off['TVMFFIAny.v_int64'], 0n, true);
    m.setUint32(p + off['TVMFFIAny.small_str_len'], 0, true);
    if (typeof v === 'number' && Number.isInteger(v)) {
      m.setInt32(p, T.int, true);
      m.setBigInt64(p + off['TVMFFIAny.v_int64'], BigInt(v), true);
    } else if (typeof v === 'number') {
      m.setInt32(p, T.float, true);
      m.setFloat64(p + off['TVMFFIAny.v_int64'], v, true);
    } else if (typeof v === 'string') {
      m.setInt32(p, T['const char*'], true);
      m.setUint32(p + off['TVMFFIAny.v_int64'], putStr(v), true);
    } else {
      m.setInt32(p, T.None, true);
    }
  };
  const byteArrayText = (p) => {
    const data = mem().getUint32(p + off['TVMFFIByteArray.data'], true);
    const size = mem().getUint32(p + off['TVMFFIByteArray.size'], true);
    return new TextDecoder().decode(new Uint8Array(x.memory.buffer, data, size));
  };
  const readAny = (p) => {
    const m = mem();
    const tindex = m.getInt32(p, true);
    const payload = p + off['TVMFFIAny.v_int64'];
    if (tindex === T.int) return m.getBigInt64(payload, true);
    if (tindex === T.float) return m.getFloat64(payload, true);
    if (tindex === T.None) return null;
    if (tindex === T['ffi.SmallStr']) {
      const len = m.getUint32(p + off['TVMFFIAny.small_str_len'], true);
      return new TextDecoder().decode(new Uint8Array(x.memory.buffer, payload, len));
    }
    if (tindex === T['ffi.String']) {
      const obj = m.getUint32(payload, true);
      const text = byteArrayText(obj + meta.sizeof.TVMFFIObject);
      x.TVMFFIObjectDecRef(obj);
      return text;
    }
    throw new Error(`unexpected type index ${tindex}`);
  };
  /** Calls global NAME; returns the value or the raised error's fields. */
  const call = (name, ...args) => {
    const f = getGlobal(name);
    assert.notEqual(f, 0, `${name} is registered`);
    const argv = alloc(ANY * Math.max(args.length, 1));
    args.forEach((a, i) => writeAny(argv + i * ANY, a));
    const result = alloc(ANY);
    writeAny(result, null);
    const rc = x.TVMFFIFunctionCall(f, argv, args.length, result);
    x.TVMFFIObjectDecRef(f);
    if (rc === 0) return { value: readAny(result) };
    const out = alloc(4);
    x.TVMFFIErrorMoveFromRaised(out);
    const err = mem().getUint32(out, true);
    const cell = err + meta.sizeof.TVMFFIObject;
    const error = {
      kind: byteArrayText(cell + off['TVMFFIErrorCell.kind']),
      message: byteArrayText(cell + off['TVMFFIErrorCell.message']),
      backtrace: byteArrayText(cell + off['TVMFFIErrorCell.backtrace']),
    };
    x.TVMFFIObjectDecRef(err);
    return { error };
  };
  return { x, meta, call };
}

const emscripten = await rawRuntime(BUILDS.emscripten);

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
  assert.match(lines[0], /^ {2}File "[^"]*wasm-function\[\d+\]:0x[0-9a-f]+", line 0, in testing_raise_error$/);
  // runtime-internal frames are filtered out
  assert.ok(!/in (wf_|TVMFFI|WebFFI)/.test(error.backtrace), error.backtrace);
  const typed = call('testing.add_one', 'x').error;
  assert.match(typed.backtrace, /in testing_add_one\n/);
});

test('the runtime keeps working after errors', () => {
  const { call } = emscripten;
  for (let i = 0; i < 100; i++) call('testing.add_one', 'bad');
  assert.deepEqual(call('testing.add_one', 1), { value: 2n });
});

test('the clang + wasi-libc build loads and answers the same calls', async () => {
  const wasi = await rawRuntime(BUILDS.wasi);
  assert.equal(wasi.meta.sizeof.TVMFFIAny, 16);
  assert.deepEqual(wasi.call('testing.add_one', 41), { value: 42n });
  assert.deepEqual(wasi.call('testing.echo', 'from wasi-libc'), { value: 'from wasi-libc' });
  assert.equal(wasi.call('testing.add_one', 2.5).error.kind, 'TypeError');
});

for (const [toolchain, dir] of Object.entries(BUILDS)) {
  test(`the ABI example program runs in wasm (${toolchain})`, async () => {
    let stdout = '';
    const instance = await instantiate(`${dir}/abi_example.wasm`, (fd, text) => {
      if (fd === 1) stdout += text;
    });
    let code = 0;
    try {
      instance.exports._start();
    } catch (e) {
      if (!(e instanceof WasiExit)) throw e;
      code = e.code;
    }
    assert.equal(code, 0);
    assert.equal(
      stdout,
      'example.add(40, 2) = 42\nexample.add(40, 2.5) raised TypeError: add expects two ints\n',
    );
  });
}
