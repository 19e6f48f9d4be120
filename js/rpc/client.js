// A TVM RPC client: connectRPC(url | 'host:port', key) gives a session on a
// remote TVM RPC server (TVM's own tvm_rpc, or a webffi device), with remote
// objects as handles (dispose(), [Symbol.dispose]), remote functions as
// async callables and remote tensors read with `await t.data()`.
// TVM's protocol answers one request at a time, so requests queue in order.
import { makeError, FFITypeError } from '../errors.js';
import { IntValue, FloatValue, Device, DataType } from '../values.js';
import {
  CODE, T, RPC_SUCCESS, RPC_MISMATCH, RPC_DUPLICATE, RPC_PROTOCOL_VERSION, Writer, Reader,
  handshakeBytes, deviceOf, dtypeOf, utf8,
} from './wire.js';
import { openTransport } from './transport.js';
import { viewBytes, arrayBufferLength } from '../buffers.js';
import { RPC_LIMITS } from './constants.js';
import { PacketReader } from './packet_reader.js';
// serve(session, port) forwards a worker session to an RPC session (its
// adapter registers there): wherever a session can exist, so can serve it.
import './chain.js';

const CPU = deviceOf('cpu');
// the default stream, sent as TVM's client sends it (OpaquePtr 0)
const DEFAULT_STREAM = Object.freeze({ opaquePtr: 0 });
const TYPED = {
  'int8': Int8Array, 'int16': Int16Array, 'int32': Int32Array, 'int64': BigInt64Array,
  'uint8': Uint8Array, 'uint16': Uint16Array, 'uint32': Uint32Array, 'uint64': BigUint64Array,
  'float16': Uint16Array, 'bfloat16': Uint16Array, 'float32': Float32Array, 'float64': Float64Array,
  'bool': Uint8Array,
};
const DTYPE_OF_ARRAY = new Map([
  [Int8Array, 'int8'], [Int16Array, 'int16'], [Int32Array, 'int32'], [BigInt64Array, 'int64'],
  [Uint8Array, 'uint8'], [Uint16Array, 'uint16'], [Uint32Array, 'uint32'], [BigUint64Array, 'uint64'],
  [Float32Array, 'float32'], [Float64Array, 'float64'],
]);

/** A kException message as an error of its kind ("Kind: message"; TVM's own server sends the message alone). */
function remoteError(text) {
  const m = /^([A-Z][A-Za-z0-9_]*(?:Error|Exception|Interrupt)): ([\s\S]*)$/.exec(text);
  return m ? makeError(m[1], m[2]) : makeError('RPCError', text);
}

const registry = new FinalizationRegistry(({ session, handle, code, device }) => session._release(handle, code, device));

/** A remote object: an id on the server, freed by dispose() (or, as a backstop, by the GC). */
export class RPCObject {
  #session;
  #handle;

  #code;
  #device;

  constructor(session, handle, typeIndex, freeCode = CODE.FreeHandle, device = undefined) {
    this.#session = session;
    this.#handle = handle;
    this.#code = freeCode;
    this.#device = device;
    this.typeIndex = typeIndex;
    registry.register(this, { session, handle, code: freeCode, device }, this);
  }

  get session() {
    return this.#session;
  }

  /** The server's handle; throws once disposed. */
  get handle() {
    if (this.#handle === null) throw makeError('ValueError', `Cannot use a disposed remote ${this.constructor.name}`);
    return this.#handle;
  }

  get disposed() {
    return this.#handle === null;
  }

  #uses = 0; // requests under way that use the object (a copy asked for before a dispose)
  #freeLater = null;

  /** Frees the remote object (queued after the requests before it, and after those using it). */
  dispose() {
    if (this.#handle === null) return;
    registry.unregister(this);
    const h = this.#handle;
    this.#handle = null;
    if (this.#uses > 0) this.#freeLater = h;
    else this.#session._release(h, this.#code, this.#device);
  }

  /** Runs fn (async) with the object kept alive on the server until it settles. */
  async _using(fn) {
    this.handle; // throws when disposed
    this.#uses++;
    try {
      return await fn();
    } finally {
      if (--this.#uses === 0 && this.#freeLater !== null) {
        const h = this.#freeLater;
        this.#freeLater = null;
        this.#session._release(h, this.#code, this.#device);
      }
    }
  }

  [Symbol.dispose]() {
    this.dispose();
  }

  /** TVM's protocol moves objects by handle only: there is no value to fetch. */
  async fetch() {
    throw makeError('RPCError', `TVM RPC keeps ${this.constructor.name} objects on the server (type index ${this.typeIndex}): call remote functions on the handle instead`);
  }
}

/** A remote ffi.Module: its functions, and timers over them. */
export class RPCModule extends RPCObject {
  /**
   * The module's function `name` as an async callable; when it has none, an
   * AttributeError, or null with `{ optional: true }` (as ModuleObject).
   */
  async getFunction(name, { queryImports = true, optional = false } = {}) {
    const f = await this.session._serverFunction('tvm.rpc.server.ModuleGetFunction');
    const r = await f(this, String(name), Boolean(queryImports));
    if (r == null && !optional) throw makeError('AttributeError', `Module has no function '${name}'`);
    return r ?? null;
  }

  /** runtime.RPCTimeEvaluator over one of the module's functions (see RPCSession.timeEvaluator). */
  timeEvaluator(name, device, options) {
    return this.session._timeEvaluator(this, name, device, options);
  }
}

/** A tensor in the server's memory. */
export class RPCTensor extends RPCObject {
  constructor(session, handle, typeIndex, desc, owner) {
    super(session, owner ?? handle, typeIndex, owner ? CODE.FreeHandle : CODE.DevFreeData, desc.device);
    this.data_handle = desc.data;
    this.device = desc.device;
    this.dtype = desc.dtype;
    this.shape = Object.freeze([...desc.shape]);
    this.byteOffset = desc.byteOffset ?? 0;
    this.ownsData = !owner;
  }

  get size() {
    return this.shape.reduce((a, b) => a * b, 1);
  }

  get nbytes() {
    return this.size * Math.ceil((this.dtype.bits * this.dtype.lanes) / 8);
  }

  /**
   * The tensor's contents, downloaded, as a typed array of its dtype; into
   * `out` (a typed array of the tensor's byte size) when given, which a
   * large copy over TCP is read straight into by the socket: as with
   * fs.read, out's buffer must not be transferred until this settles (a
   * wasm memory may grow: its memory stays). A dispose() right after this
   * call frees the tensor once the copy is done.
   */
  async data(out) {
    this.handle; // throws when disposed
    if (out !== undefined) {
      if (!ArrayBuffer.isView(out) || out.byteLength !== this.nbytes) {
        throw makeError('TypeError', `RPCTensor.data(out): out must be a typed array of ${this.nbytes} bytes`);
      }
      const into = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
      await this._using(() => this.session._copyFrom(this, into));
      return out;
    }
    const bytes = await this._using(() => this.session._copyFrom(this));
    const Typed = TYPED[this.dtype.text] ?? Uint8Array;
    const b = bytes.byteOffset % Typed.BYTES_PER_ELEMENT === 0 ? bytes : bytes.slice();
    return new Typed(b.buffer, b.byteOffset, b.byteLength / Typed.BYTES_PER_ELEMENT);
  }

  /** Writes a typed array (of the same byte size) into the tensor. */
  async set(values) {
    this.handle;
    const bytes = ArrayBuffer.isView(values) ? viewBytes(values, 'RPCTensor.set') : null; // a detached one is our TypeError
    if (!bytes || bytes.byteLength !== this.nbytes) {
      throw makeError('ValueError', `RPCTensor.set: ${bytes ? bytes.byteLength : 'no'} bytes for a tensor of ${this.nbytes}`);
    }
    await this._using(() => this.session._copyTo(this, bytes));
  }
}

function remoteFunction(session, handle) {
  const obj = new RPCObject(session, handle, T.Function);
  const f = (...args) => session._callHandle(obj.handle, args);
  f.handle = handle;
  f.dispose = () => obj.dispose();
  f[Symbol.dispose] = () => obj.dispose();
  f._object = obj;
  Object.defineProperty(f, 'disposed', { get: () => obj.disposed });
  return f;
}

/** A session on a TVM RPC server. Made by connectRPC. */
export class RPCSession {
  #t;
  #reader = new PacketReader();
  #w = new Writer();
  #queue = Promise.resolve();
  #waiter = null; // resolves with the next packet
  #closed = false;
  #closeError = null;
  #timeout;
  #serverFns = new Map();
  #maxChunk = null;
  #handshake = null;
  /** The server's key (after the handshake), e.g. 'server:webffi'. */
  serverKey = '';

  #maxPacket;

  constructor(transport, { timeout = 0, maxPacketBytes = RPC_LIMITS.maxPacketBytes } = {}) {
    if (!Number.isSafeInteger(maxPacketBytes) || maxPacketBytes < 64 * 1024) {
      throw new FFITypeError('connectRPC: options.maxPacketBytes is an integer of at least 65536');
    }
    this.#t = transport;
    this.#timeout = timeout;
    this.#maxPacket = maxPacketBytes;
    transport.onData((chunk) => this.#onData(chunk));
    // a large reply's bytes are read straight into the memory they go to
    transport.readInto?.(() => this.#reader.readTarget());
    transport.onClose((error) => this.#fail(error ?? makeError('RPCError', 'RPC: the server closed the connection')));
  }

  /** Whether the session has ended. */
  get closed() {
    return this.#closed;
  }

  // ---------------------------------------------------------------- input
  #onData(chunk) {
    if (this.#closed) return;
    this.#reader.push(chunk);
    try {
      this.#drain();
    } catch (e) {
      this.#fail(e, true);
    }
    // what is kept of a borrowed chunk is copied before the transport reuses it
    if (this.#t.borrowed) this.#reader.own(chunk.buffer);
  }

  // Bounded before anything is buffered for it: a server cannot make us hold more than one packet's limit.
  #checkLength = (len) => {
    if (len < 4 || len > this.#maxPacket) {
      throw makeError('RPCError', `RPC: the server sent a packet length of ${len} (the limit is ${this.#maxPacket} bytes: options.maxPacketBytes)`);
    }
  };

  // A copy's payload goes straight into the caller's memory when the reply awaited asks for as many bytes.
  #sink = (n, code) => {
    const into = this.#waiter?.into;
    return code === CODE.CopyAck && into && into.length === n ? into : null;
  };

  #drain() {
    const r = this.#reader;
    if (this.#handshake) {
      const hs = this.#handshake;
      if (hs.code === undefined && r.size >= 4) hs.code = new DataView(r.take(4).slice().buffer).getInt32(0, true);
      if (hs.code === undefined) return;
      if (hs.code !== RPC_SUCCESS) {
        this.#handshake = null;
        hs.reject(hs.code === RPC_MISMATCH
          ? makeError('RPCError', `RPC: the server (or proxy) has no match for key '${hs.key}'`)
          : hs.code === RPC_DUPLICATE
            ? makeError('RPCError', `RPC: key '${hs.key}' is already in use`)
            : makeError('RPCError', `RPC: 0x${(hs.code >>> 0).toString(16)} is not a TVM RPC server's answer`));
        return;
      }
      if (hs.len === undefined && r.size >= 4) {
        hs.len = new DataView(r.take(4).slice().buffer).getInt32(0, true);
        if (hs.len < 0 || hs.len > 4096) throw makeError('RPCError', `RPC handshake: key length ${hs.len}`);
      }
      if (hs.len === undefined || r.size < hs.len) return;
      this.serverKey = new TextDecoder().decode(r.take(hs.len));
      this.#handshake = null;
      hs.resolve();
    }
    for (;;) {
      const body = r.nextBody(this.#checkLength, this.#sink);
      if (body === null) return;
      // a body read (without a copy) into a borrowed chunk is copied: it is decoded later
      const copy = !r.copied && this.#t.borrowed;
      const reader = new Reader(copy ? body.slice() : body);
      reader.owned = r.copied || copy; // the body's memory is this packet's alone
      reader.sunk = r.sunk; // its payload is in the waiter's `into` already
      const code = reader.i32('the code');
      const w = this.#waiter;
      if (!w) throw makeError('RPCError', `RPC: the server sent a packet (code ${code}) nobody asked for`);
      this.#waiter = null;
      w.resolve({ code, reader });
    }
  }

  #fail(error, protocol = false) {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeError = protocol ? makeError('RPCError', `RPC: closing the connection: the server broke the protocol: ${error.message}`) : error;
    const w = this.#waiter;
    this.#waiter = null;
    w?.reject(this.#closeError);
    // TVM's tvm_rpc hangs up without an answer on a key shorter than its own
    this.#handshake?.reject(protocol || error?.kind === 'RPCSessionTimeoutError' ? this.#closeError : makeError('RPCError',
      `RPC: the server closed the connection during the handshake without answering key '${this.#handshake.key}' (a TVM server does so for a key it does not serve, and when it is at its connection limit): ${error.message}`));
    this.#handshake = null;
    try {
      this.#t.destroy?.() ?? this.#t.close();
    } catch {
      // already gone
    }
  }

  // ---------------------------------------------------------------- output
  /**
   * The handshake with `key`, then kInitServer with `init` (TVM's
   * session_constructor_args: empty for the server's own session).
   */
  async _open(key, init = []) {
    const done = new Promise((resolve, reject) => {
      this.#handshake = { key, resolve, reject };
    });
    done.catch(() => {}); // the write below may fail first (the server went): that error is the one thrown
    await this.#t.write(handshakeBytes(`client:${key}`));
    await this.#withTimeout(done, 'the handshake');
    const w = this.#w;
    w.begin(CODE.InitServer);
    w.lenBytes(utf8.encode(RPC_PROTOCOL_VERSION));
    this.#writeArgs(w, init);
    await this.#request(w.end(), null, init.length ? `kInitServer (session constructor ${init[0]})` : 'kInitServer');
  }

  /**
   * Hands the connection over (a chained session forwards its bytes): the
   * session ends without closing it. Only between requests.
   */
  _detach() {
    if (this.#closed) throw this.#closeError;
    this.#t.readInto?.(null); // the next owner keeps chunks
    this.#closed = true;
    this.#closeError = makeError('RPCError', 'RPC: the session handed its connection over');
    return this.#t;
  }

  #withTimeout(promise, what) {
    if (!this.#timeout) return promise;
    let timer;
    return Promise.race([
      promise,
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          const e = makeError('RPCSessionTimeoutError', `RPC: ${what} timed out after ${this.#timeout} ms`);
          this.#fail(e);
          reject(e);
        }, this.#timeout);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** Runs fn (which sends one request and awaits its reply) after the requests before it. */
  #enqueue(fn) {
    const run = this.#queue.then(() => {
      if (this.#closed) throw this.#closeError;
      return fn();
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Sends bytes (and `extra` bytes after them) and awaits the reply packet. */
  async #request(bytes, extra, what, into = null) {
    const reply = new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject, into };
    });
    reply.catch(() => {}); // the server may go while the request is written: awaited below
    const a = this.#t.write(bytes);
    const b = extra ? this.#t.write(extra) : undefined;
    if (a || b) await Promise.all([a, b]);
    const { code, reader } = await this.#withTimeout(reply, what);
    if (code === CODE.Exception) {
      const args = reader.args('kException');
      const msg = args[0]?.value;
      throw remoteError(typeof msg === 'string' ? msg : 'unknown remote error');
    }
    if (code === CODE.CopyAck) {
      if (reader.sunk) return into; // the payload went straight there
      const data = reader.rest();
      // bytes that share a socket chunk with other data are copied out
      return reader.owned ? data : data.slice();
    }
    if (code !== CODE.Return) throw this.#protocol(`the server answered ${what} with code ${code}`);
    const args = reader.args('kReturn');
    reader.done('kReturn');
    return args;
  }

  #protocol(why) {
    const e = makeError('RPCError', `RPC: closing the connection: ${why}`);
    this.#fail(e);
    return e;
  }

  _release(handle, code, device) {
    if (this.#closed) return;
    this.#enqueue(() => {
      const w = this.#w;
      w.begin(code);
      if (code === CODE.DevFreeData) {
        w.u32(2);
        w.u32(T.Device);
        w.device(device);
      } else {
        w.u32(1);
      }
      w.u32(T.OpaquePtr);
      w.u64(handle);
      return this.#request(w.end(), null, code === CODE.DevFreeData ? 'kDevFreeData' : 'kFreeHandle');
    }).catch(() => {}); // a free that fails (the session ended) has nothing left to free
  }

  #syscall(code, args, what) {
    return this.#enqueue(() => {
      const w = this.#w;
      w.begin(code);
      this.#writeArgs(w, args);
      return this.#request(w.end(), null, what);
    });
  }

  #writeArgs(w, args) {
    w.u32(args.length);
    for (const v of args) this.#writeValue(w, v);
  }

  #writeValue(w, v) {
    if (v === null || v === undefined) return w.u32(T.None);
    if (v === DEFAULT_STREAM) {
      w.u32(T.OpaquePtr);
      return w.u64(0);
    }
    switch (typeof v) {
      case 'boolean': w.u32(T.Bool); return w.u64(v ? 1 : 0);
      case 'number':
        if (Number.isInteger(v)) { w.u32(T.Int); return w.i64(v); }
        w.u32(T.Float); return w.f64(v);
      case 'bigint': w.u32(T.Int); return w.i64(v);
      case 'string': {
        if (v.includes('\0')) throw new FFITypeError('RPC: a string argument holds a NUL (TVM sends strings as C strings)');
        w.u32(T.RawStr); return w.lenBytes(utf8.encode(v));
      }
      case 'function':
        if (v._object instanceof RPCObject) {
          if (v._object.session !== this) throw new FFITypeError('RPC: a remote function of another session');
          w.u32(T.Function); return w.u64(v._object.handle);
        }
        throw new FFITypeError('RPC: local functions cannot be passed to a TVM RPC server');
      default: break;
    }
    if (v instanceof IntValue) { w.u32(T.Int); return w.i64(v.value); }
    if (v instanceof FloatValue) { w.u32(T.Float); return w.f64(v.value); }
    if (v instanceof Device) { w.u32(T.Device); return w.device(v); }
    if (v instanceof DataType) { w.u32(T.DataType); w.dtype(v); return w.u32(0); }
    if (v instanceof Uint8Array || v instanceof ArrayBuffer) {
      w.u32(T.ByteArrayPtr);
      // through the engine's accessors: a detached one is our TypeError
      return w.lenBytes(v instanceof ArrayBuffer ? new Uint8Array(v, 0, arrayBufferLength(v, 'RPC argument')) : viewBytes(v, 'RPC argument'));
    }
    if (v instanceof RPCObject) {
      if (v.session !== this) throw new FFITypeError('RPC: a remote object of another session');
      if (v instanceof RPCTensor) {
        w.u32(T.DLTensorPtr);
        return w.tensor(v.data_handle, v.device, v.dtype, v.shape, v.byteOffset);
      }
      if (v instanceof RPCModule) { w.u32(T.Module); return w.u64(v.handle); }
      w.u32(T.ObjectRef); w.u32(T.ObjectRef); return w.u64(v.handle);
    }
    throw new FFITypeError(`RPC: cannot send a ${v?.constructor?.name ?? typeof v} to a TVM RPC server (numbers, strings, bytes, devices, dtypes and remote objects travel)`);
  }

  /** A kCallFunc reply ([type index, value] or a tensor's three) as a JS value. */
  #result(args) {
    if (args.length === 0) return undefined;
    const ti = args[0].value;
    const v = args[1];
    if (args.length === 1 || v.type === T.None) return null;
    switch (ti) {
      case T.Int: case T.Bool: case T.Float: case T.DataType: case T.Device:
      case T.RawStr: case T.Str: case T.SmallStr: return v.value;
      case T.Bytes: case T.SmallBytes: case T.ByteArrayPtr: return v.value;
      case T.Function: return remoteFunction(this, v.value);
      case T.Module: return new RPCModule(this, v.value, ti);
      case T.Tensor: return new RPCTensor(this, v.value.data, ti, v.value, args[2]?.value);
      case T.OpaquePtr: return v.value;
      default: return new RPCObject(this, v.value, ti);
    }
  }

  _callHandle(handle, args) {
    return this.#enqueue(() => {
      const w = this.#w;
      w.begin(CODE.CallFunc);
      w.u64(handle);
      this.#writeArgs(w, args);
      return this.#request(w.end(), null, 'a remote call');
    }).then((r) => this.#result(r));
  }

  /** The remote global `name` as an async callable, or null when the server has (or exposes) none. */
  async lookupGlobal(name) {
    const [h] = await this.#syscall(CODE.GetGlobalFunc, [String(name)], `kGetGlobalFunc ${name}`);
    return h.value === 0 ? null : remoteFunction(this, h.value);
  }

  /**
   * An async function calling the remote global `name` (looked up on the
   * first call; a missing name is a ValueError then).
   */
  getGlobal(name) {
    let f = null;
    const first = async (...args) => {
      f ??= await this.lookupGlobal(name);
      if (f === null) throw makeError('ValueError', `Cannot find global function ${name} on the RPC server`);
      return f(...args);
    };
    const call = (...args) => (f ? f(...args) : first(...args));
    call.dispose = () => f?.dispose();
    call[Symbol.dispose] = call.dispose;
    return call;
  }

  /** Calls the remote global `name` with args (as worker sessions' call). */
  async call(name, args = []) {
    const f = await this.lookupGlobal(name);
    if (f === null) throw makeError('ValueError', `Cannot find global function ${name} on the RPC server`);
    try {
      return await f(...args);
    } finally {
      f.dispose();
    }
  }

  async _serverFunction(name) {
    if (!this.#serverFns.has(name)) {
      const f = await this.lookupGlobal(name);
      if (f === null) throw makeError('RPCError', `RPC: the server does not serve ${name}${/upload|download|remove|listdir|load_module/.test(name) ? ' (uploads are off on a webffi device unless it enables them)' : ''}`);
      this.#serverFns.set(name, f);
    }
    return this.#serverFns.get(name);
  }

  // ------------------------------------------------------------- devices
  /** Whether the server has the device. */
  async deviceExists(device) {
    return (await this.deviceAttr(device, 0)) ? true : false;
  }

  /** A device attribute (TVM's DeviceAttrKind number), or null. */
  async deviceAttr(device, kind) {
    const [v] = await this.#syscall(CODE.DevGetAttr, [deviceOf(device), Number(kind)], 'kDevGetAttr');
    return v?.value ?? null;
  }

  /** Waits for the device's work to finish. */
  async sync(device = CPU) {
    await this.#syscall(CODE.DevStreamSync, [deviceOf(device), DEFAULT_STREAM], 'kDevStreamSync');
  }

  /** An uninitialised tensor on the server. */
  async empty(shape, dtype = 'float32', device = CPU) {
    const desc = { data: 0, device: deviceOf(device), dtype: dtypeOf(dtype), shape: [...shape].map(Number), byteOffset: 0 };
    const [h] = await this.#enqueue(() => {
      const w = this.#w;
      w.begin(CODE.DevAllocDataWithScope);
      w.u32(2);
      w.u32(T.DLTensorPtr);
      w.tensor(0, desc.device, desc.dtype, desc.shape, 0);
      w.u32(T.None);
      return this.#request(w.end(), null, 'kDevAllocDataWithScope');
    });
    desc.data = h.value;
    return new RPCTensor(this, h.value, T.Tensor, desc, undefined);
  }

  /** A tensor on the server holding a copy of a typed array. */
  async tensor(values, { shape, dtype, device = CPU } = {}) {
    if (!ArrayBuffer.isView(values)) throw new FFITypeError('RPCSession.tensor: values is a typed array');
    viewBytes(values, 'RPCSession.tensor'); // a detached one is our TypeError, before the device allocates
    const dt = dtype ?? DTYPE_OF_ARRAY.get(values.constructor) ?? 'uint8';
    const dims = [...(shape ?? [values.length])].map(Number);
    const { bits, lanes } = dtypeOf(dt);
    // checked here, before the device allocates anything
    const nbytes = dims.reduce((a, b) => a * b, 1) * Math.ceil((bits * lanes) / 8);
    if (nbytes !== values.byteLength) {
      throw makeError('ValueError', `RPCSession.tensor: ${values.byteLength} bytes for a tensor of ${nbytes}`);
    }
    const t = await this.empty(dims, dt, device);
    try {
      await t.set(values);
    } catch (e) {
      t.dispose();
      throw e;
    }
    return t;
  }

  async #maxTransfer() {
    if (this.#maxChunk === null) {
      const f = await this.lookupGlobal('tvm.rpc.server.GetCRTMaxPacketSize');
      // Copies are split so that no reply exceeds what we accept (room left for the packet's own fields).
      this.#maxChunk = this.#maxPacket - 1024;
      if (f) {
        const n = Number(await f());
        f.dispose();
        if (n > 0) this.#maxChunk = Math.min(this.#maxChunk, Math.max(4096, n - 1024));
      }
    }
    return this.#maxChunk;
  }

  async _copyTo(t, bytes) {
    const chunk = this.#maxChunk ?? await this.#maxTransfer(); // known: queued at once, before a later close()
    const jobs = [];
    for (let at = 0; at < bytes.length; at += chunk) {
      const part = bytes.subarray(at, Math.min(bytes.length, at + chunk));
      jobs.push(this.#enqueue(() => {
        const w = this.#w;
        w.begin(CODE.CopyToRemote);
        w.tensor(t.data_handle, t.device, t.dtype, t.shape, t.byteOffset + at);
        w.u64(part.length);
        return this.#request(w.end(part.length), part, 'kCopyToRemote');
      }));
    }
    await Promise.all(jobs);
    if (t.device.deviceType !== 1) await this.sync(t.device);
  }

  /** The tensor's bytes: into `out` (a Uint8Array of t.nbytes) when given, else new memory. */
  async _copyFrom(t, out = null) {
    const n = t.nbytes;
    const chunk = this.#maxChunk ?? await this.#maxTransfer(); // known: queued at once, before a later close()
    if (n <= chunk && out === null) return this.#copyFromOnce(t, 0, n, null);
    out ??= new Uint8Array(n);
    const jobs = [];
    for (let at = 0; at < n; at += chunk) {
      const k = Math.min(chunk, n - at);
      const into = out.subarray(at, at + k);
      jobs.push(this.#copyFromOnce(t, at, k, into).then((b) => {
        if (b !== into) into.set(b);
      }));
    }
    await Promise.all(jobs);
    return out;
  }

  #copyFromOnce(t, at, k, into) {
    return this.#enqueue(() => {
      const w = this.#w;
      w.begin(CODE.CopyFromRemote);
      w.tensor(t.data_handle, t.device, t.dtype, t.shape, t.byteOffset + at);
      w.u64(k);
      return this.#request(w.end(), null, 'kCopyFromRemote', into);
    }).then((bytes) => {
      if (!(bytes instanceof Uint8Array) || bytes.length !== k) {
        throw this.#protocol(`kCopyFromRemote of ${k} bytes answered with ${bytes?.length ?? 'no'} bytes`);
      }
      return bytes;
    });
  }

  // --------------------------------------------------- server functions
  /** Stores a file in the server's work directory. */
  async upload(name, bytes) {
    const f = await this._serverFunction('tvm.rpc.server.upload');
    await f(String(name), bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
  }

  /** A file of the server's work directory. */
  async download(name) {
    return (await this._serverFunction('tvm.rpc.server.download'))(String(name));
  }

  async remove(name) {
    await (await this._serverFunction('tvm.rpc.server.remove'))(String(name));
  }

  /** The names in the server's work directory. */
  async listdir(path = '.') {
    const text = await (await this._serverFunction('tvm.rpc.server.listdir'))(String(path));
    return String(text).split(',').filter(Boolean);
  }

  /**
   * Loads a module on the server: a file name in its work directory, or
   * bytes (uploaded first as options.name, default 'module.wasm').
   */
  async loadModule(source, { name = 'module.wasm' } = {}) {
    if (typeof source !== 'string') {
      await this.upload(name, source);
      source = name;
    }
    return (await this._serverFunction('tvm.rpc.server.load_module'))(source);
  }

  /**
   * A timer for the remote global `name` (TVM's time_evaluator): an async
   * function taking the call's arguments and resolving to a Float64Array of
   * `repeat` measurements, seconds per call.
   */
  timeEvaluator(name, device, options) {
    return this._timeEvaluator(null, name, device, options);
  }

  _timeEvaluator(module, name, device = CPU, { number = 10, repeat = 1, minRepeatMs = 0, limitZeroTimeIterations = 100 } = {}) {
    const dev = deviceOf(device);
    let timer = null;
    const call = async (...args) => {
      if (timer === null) {
        const make = await this._serverFunction('runtime.RPCTimeEvaluator');
        timer = await make(module, String(name), dev.deviceType, dev.deviceId, number, repeat,
          minRepeatMs, limitZeroTimeIterations, 0, 1, 0, '');
      }
      const bytes = await timer(...args);
      return new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    };
    call.dispose = () => timer?.dispose();
    call[Symbol.dispose] = call.dispose;
    return call;
  }

  /** Ends the session (kShutdown) and closes the connection. */
  async close() {
    if (this.#closed) return;
    try {
      await this.#enqueue(async () => {
        const w = this.#w;
        w.begin(CODE.Shutdown);
        await this.#t.write(w.end().slice());
      });
    } catch {
      // the connection went first
    }
    this.#closed = true;
    this.#closeError = makeError('RPCError', 'RPC: the session is closed');
    this.#t.close();
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}

/**
 * TVM's session_constructor_args for a session through `hops`: each hop's
 * server connects to the next (rpc.Connect), the last one serves.
 */
export function chainConstructor(hops) {
  if (!Array.isArray(hops)) throw new FFITypeError('connectRPC: options.chain is an array of { target, key }');
  const out = [];
  for (const hop of hops) {
    const target = String(hop?.target ?? '');
    const key = String(hop?.key ?? '');
    if (/^wss?:\/\//.test(target)) {
      out.push('rpc.Connect', target, 0, key, false);
      continue;
    }
    const m = /^(?:tcp:\/\/)?(\[[^\]]+\]|[^:/]+):(\d+)$/.exec(target);
    if (!m) throw makeError('ValueError', `connectRPC: chain target ${target} is neither host:port nor a ws:// URL`);
    out.push('rpc.Connect', m[1].replace(/^\[|\]$/g, ''), Number(m[2]), key, false);
  }
  return out;
}

/**
 * Connects to a TVM RPC server: `target` is 'host:port' (TCP, Node) or a
 * ws:// URL (a TVM proxy's /ws, browsers and Node with options.WebSocket);
 * `key` is the server's key (TVM's client sends 'client:' + key). options:
 * timeout (ms per request; past it the session ends with an
 * RPCSessionTimeoutError), maxPacketBytes (the largest packet accepted from
 * the server; copies are split to fit), WebSocket (a WebSocket class), transport (an
 * open transport, js/rpc/transport.js), chain ([{ target, key }, ...]: the
 * session is on the last of these servers, each reached from the one
 * before, as TVM chains sessions with rpc.Connect; the servers on the way
 * must allow it), sessionConstructor (TVM's session_constructor_args as
 * they are, e.g. ['rpc.LocalSession']).
 */
export async function connectRPC(target, key = '', options = {}) {
  const init = options.chain !== undefined ? chainConstructor(options.chain) : options.sessionConstructor ?? [];
  if (!Array.isArray(init)) throw new FFITypeError('connectRPC: options.sessionConstructor is an array (a name, then its arguments)');
  const transport = options.transport ?? await openTransport(target, { ...options, directReads: true });
  let session;
  try {
    session = new RPCSession(transport, options);
    await session._open(String(key), init);
  } catch (e) {
    transport.destroy?.() ?? transport.close();
    throw e;
  }
  return session;
}
