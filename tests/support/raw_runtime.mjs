// Test support: one runtime instance driven through raw wasm exports only
// (no JS runtime layer), reading every layout from the ABI metadata. Runs in
// Node and in browsers alike.
import { createWasi, WasiExit } from '../../js/wasi.js';
import { createHostImports } from '../../js/host_imports.js';

/** Instantiates wasm bytes (or a WebAssembly.Module) with webffi's WASI shim and host imports. */
async function instantiate(bytes, write) {
  const wasi = createWasi({ write });
  let memory;
  const imports = {
    wasi_snapshot_preview1: wasi.imports,
    ...createHostImports(() => memory),
  };
  // bytes give { module, instance }; a compiled WebAssembly.Module gives the instance
  const instantiated = await WebAssembly.instantiate(bytes, imports);
  const instance = instantiated.instance ?? instantiated;
  memory = instance.exports.memory;
  wasi.setMemory(memory);
  return instance;
}

/**
 * Runs a wasm command (a program with main) to its end: { code, stdout }.
 */
export async function runCommand(bytes) {
  let stdout = '';
  const instance = await instantiate(bytes, (fd, text) => {
    if (fd === 1) stdout += text;
  });
  let code = 0;
  try {
    instance.exports._start();
  } catch (e) {
    if (!(e instanceof WasiExit)) throw e;
    code = e.code;
  }
  return { code, stdout };
}

/** Raw access to the runtime in `bytes` (a webffi.wasm reactor). */
export async function rawRuntime(bytes) {
  const instance = await instantiate(bytes);
  const x = instance.exports;
  x._initialize();
  const utf8 = new TextEncoder();
  const text = new TextDecoder();
  const mem = () => new DataView(x.memory.buffer);
  const cstr = (ptr) => {
    const b = new Uint8Array(x.memory.buffer);
    return text.decode(b.subarray(ptr, b.indexOf(0, ptr)));
  };
  const meta = JSON.parse(cstr(x.WebFFIGetABIMetadata()));
  const off = meta.offsetof;
  const T = meta.type_index;
  const ANY = meta.sizeof.TVMFFIAny;
  // Test allocations are freed all together after each call.
  let live = [];
  const alloc = (n) => {
    const p = x.WebFFIHeapAlloc(n);
    if (p === 0) throw new Error('WebFFIHeapAlloc failed');
    live.push(p);
    return p;
  };
  /** Runs fn, then frees what it allocated with alloc. */
  const scratch = (fn) => {
    try {
      return fn();
    } finally {
      for (const p of live) x.WebFFIHeapFree(p);
      live = [];
    }
  };
  const putStr = (s) => {
    const b = utf8.encode(s);
    const p = alloc(b.length + 1);
    new Uint8Array(x.memory.buffer).set(b, p);
    new Uint8Array(x.memory.buffer)[p + b.length] = 0;
    return { ptr: p, size: b.length };
  };
  const byteArray = (s) => {
    const ba = alloc(meta.sizeof.TVMFFIByteArray);
    const { ptr, size } = putStr(s);
    mem().setUint32(ba + off['TVMFFIByteArray.data'], ptr, true);
    mem().setUint32(ba + off['TVMFFIByteArray.size'], size, true);
    return ba;
  };
  const byteArrayText = (p) => {
    const data = mem().getUint32(p + off['TVMFFIByteArray.data'], true);
    const size = mem().getUint32(p + off['TVMFFIByteArray.size'], true);
    return text.decode(new Uint8Array(x.memory.buffer, data, size));
  };
  const getGlobal = (name) => {
    const out = alloc(4);
    if (x.TVMFFIFunctionGetGlobal(byteArray(name), out) !== 0) throw new Error('lookup failed');
    return mem().getUint32(out, true);
  };
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
      m.setUint32(p + off['TVMFFIAny.v_int64'], putStr(v).ptr, true);
    } else if (typeof v === 'boolean') {
      m.setInt32(p, T.bool, true);
      m.setUint32(p + off['TVMFFIAny.v_int64'], v ? 1 : 0, true);
    } else if (v instanceof Uint8Array) {
      m.setInt32(p, T['TVMFFIByteArray*'], true);
      m.setUint32(p + off['TVMFFIAny.v_int64'], putBytes(v), true);
    } else if (v?.object !== undefined) {
      // a borrowed object handle: { object: ptr }
      m.setInt32(p, m.getInt32(v.object + off['TVMFFIObject.type_index'], true), true);
      m.setUint32(p + off['TVMFFIAny.v_int64'], v.object, true);
    } else if (v?.dltensor !== undefined) {
      m.setInt32(p, T['DLTensor*'], true);
      m.setUint32(p + off['TVMFFIAny.v_int64'], v.dltensor, true);
    } else {
      m.setInt32(p, T.None, true);
    }
  };
  const readAny = (p) => {
    const m = mem();
    const tindex = m.getInt32(p, true);
    const payload = p + off['TVMFFIAny.v_int64'];
    if (tindex === T.int) return m.getBigInt64(payload, true);
    if (tindex === T.float) return m.getFloat64(payload, true);
    if (tindex === T.None) return null;
    if (tindex === T.bool) return m.getInt32(payload, true) !== 0;
    if (tindex === T['ffi.SmallStr']) {
      const len = m.getUint32(p + off['TVMFFIAny.small_str_len'], true);
      return text.decode(new Uint8Array(x.memory.buffer, payload, len));
    }
    if (tindex === T['ffi.String']) {
      const obj = m.getUint32(payload, true);
      const s = byteArrayText(obj + meta.sizeof.TVMFFIObject);
      x.TVMFFIObjectDecRef(obj);
      return s;
    }
    // other objects come back as { object: ptr } (owned: release with decref)
    if (tindex >= T['ffi.Object']) return { object: m.getUint32(payload, true) };
    throw new Error(`unexpected type index ${tindex}`);
  };
  const putBytes = (bytes) => {
    const data = alloc(Math.max(bytes.length, 1));
    new Uint8Array(x.memory.buffer).set(bytes, data);
    const ba = alloc(meta.sizeof.TVMFFIByteArray);
    mem().setUint32(ba + off['TVMFFIByteArray.data'], data, true);
    mem().setUint32(ba + off['TVMFFIByteArray.size'], bytes.length, true);
    return ba;
  };
  /** Moves the raised error out: { kind, message, backtrace }. */
  const takeError = () => {
    const out = alloc(4);
    x.TVMFFIErrorMoveFromRaised(out);
    const err = mem().getUint32(out, true);
    const cell = err + meta.sizeof.TVMFFIObject;
    const error = {};
    for (const k of ['kind', 'message', 'backtrace']) {
      error[k] = byteArrayText(cell + off[`TVMFFIErrorCell.${k}`]);
    }
    x.TVMFFIObjectDecRef(err);
    return error;
  };
  /** Calls function handle F: { value } on success, { error: {kind, message, backtrace} } on failure. */
  const callFunction = (f, ...args) => scratch(() => {
    const argv = alloc(ANY * Math.max(args.length, 1));
    args.forEach((a, i) => writeAny(argv + i * ANY, a));
    const result = alloc(ANY);
    writeAny(result, null);
    const rc = x.TVMFFIFunctionCall(f, argv, args.length, result);
    return rc === 0 ? { value: readAny(result) } : { error: takeError() };
  });
  /** Calls global NAME, as callFunction. */
  const call = (name, ...args) => {
    const f = scratch(() => getGlobal(name));
    if (f === 0) throw new Error(`${name} is not registered`);
    try {
      return callFunction(f, ...args);
    } finally {
      x.TVMFFIObjectDecRef(f);
    }
  };
  const tensorCell = (t) => t + meta.sizeof.TVMFFIObject;
  /** A new 1-D float32 CPU ffi.Tensor (TVMFFIEnvTensorAlloc) holding values; release with decref. */
  const float32Tensor = (values) => scratch(() => {
    const proto = alloc(meta.sizeof.DLTensor);
    new Uint8Array(x.memory.buffer, proto, meta.sizeof.DLTensor).fill(0);
    const shape = alloc(8);
    const m = mem();
    m.setBigInt64(shape, BigInt(values.length), true);
    m.setInt32(proto + off['DLTensor.device'], meta.device_type.cpu, true);
    m.setInt32(proto + off['DLTensor.ndim'], 1, true);
    m.setUint8(proto + off['DLTensor.dtype'], 2); // DLDataType {code: kDLFloat, bits: 32, lanes: 1}
    m.setUint8(proto + off['DLTensor.dtype'] + 1, 32);
    m.setUint16(proto + off['DLTensor.dtype'] + 2, 1, true);
    m.setUint32(proto + off['DLTensor.shape'], shape, true);
    const out = alloc(4);
    if (x.TVMFFIEnvTensorAlloc(proto, out) !== 0) {
      const { kind, message } = takeError();
      throw new Error(`TVMFFIEnvTensorAlloc: ${kind}: ${message}`);
    }
    const t = mem().getUint32(out, true);
    const data = mem().getUint32(tensorCell(t) + off['DLTensor.data'], true);
    new Float32Array(x.memory.buffer, data, values.length).set(values);
    return t;
  });
  /** A copy of a 1-D float32 tensor's values (t: an ffi.Tensor handle). */
  const float32Values = (t) => {
    const m = mem();
    const cell = tensorCell(t);
    const n = Number(m.getBigInt64(m.getUint32(cell + off['DLTensor.shape'], true), true));
    const data = m.getUint32(cell + off['DLTensor.data'], true);
    return Array.from(new Float32Array(x.memory.buffer, data, n));
  };
  return {
    exports: x,
    meta,
    call,
    callFunction,
    float32Tensor,
    float32Values,
    /** The DLTensor* inside an ffi.Tensor handle, to pass as { dltensor }. */
    dltensorOf: tensorCell,
    decref: (obj) => x.TVMFFIObjectDecRef(obj),
    /** Registers function handle F as global NAME (TVMFFIFunctionSetGlobal); returns its status. */
    setGlobal: (name, f) => scratch(() => x.TVMFFIFunctionSetGlobal(byteArray(name), f, 0)),
    strongCount: (obj) => x.WebFFIObjectStrongCount(obj),
  };
}
