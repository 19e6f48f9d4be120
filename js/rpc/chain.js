// Chained sessions, as TVM chains them: a client's kInitServer names the
// session constructor rpc.Connect(url, port, key, enable_logging, ...rest),
// and the server it reached connects to that server (sending `rest` as its
// own session constructor) and forwards the session there. Handles, tensors
// and errors are the last server's, untouched on the way. A device forwards
// only where its owner allows (the forward option).
//
// A worker session can be a hop too: serve(rpcSession, port) (this file's
// RPCServed, registered with serve() below) answers a worker session's
// calls from a TVM RPC session, so a page reaches a remote device through
// its worker (page -> worker -> device), with the worker session's remote
// objects and errors: the device's objects stay there, named by ids in this
// worker's table.
import { makeError, FFITypeError, FFIError } from '../errors.js';
import { encodeValue, decodeValue } from '../clone.js';
import { FloatValue, IntValue } from '../values.js';
import { registerServeAdapter, SESSION_LIMITS } from '../session.js';
import { CODE, T, Writer, utf8 } from './wire.js';
import { openTransport } from './transport.js';
import { RPCSession, RPCObject, RPCTensor, RPCModule } from './client.js';

/**
 * Where a device may forward sessions to: options.forward is true (anywhere),
 * a list of 'host:port', 'host:*' or ws:// URLs, or a predicate
 * ({ host, port, key, target }) => boolean. Absent or false: nowhere (null).
 */
export function forwardPolicy(forward) {
  if (forward === undefined || forward === false || forward === null) return null;
  if (forward === true) return () => true;
  if (typeof forward === 'function') return (hop) => forward(hop) === true;
  if (Array.isArray(forward)) {
    for (const f of forward) {
      if (typeof f !== 'string' || f === '') throw new FFITypeError('RPC: forward lists \'host:port\', \'host:*\' or ws:// URLs');
    }
    return ({ host, port, target }) => forward.some((f) => f === target || f === `${host}:*` || f === `${host}:${port}`);
  }
  throw new FFITypeError('RPC: forward is true, a list of \'host:port\' / \'host:*\' / ws:// URLs, or a function ({ host, port, key, target }) => boolean');
}

/**
 * Serves a session constructor: connects to the next server and opens the
 * session there. Resolves with { transport, target }: the connection, its
 * handshake and kInitServer done, ready to carry the client's packets.
 */
export async function openNextHop(name, args, allowed, options = {}) {
  if (name !== 'rpc.Connect') {
    throw makeError('ValueError', `RPC kInitServer: session constructor ${name} is not served (a webffi device serves rpc.Connect and rpc.LocalSession)`);
  }
  const [url, portArg, key, , ...rest] = args;
  const port = Number(portArg);
  if (typeof url !== 'string' || url === '' || !Number.isInteger(port) || port < 0 || port > 65535 || typeof key !== 'string') {
    throw new FFITypeError('RPC kInitServer: rpc.Connect takes (url, port, key, enable_logging, ...next session constructor)');
  }
  const ws = /^wss?:\/\//.test(url);
  const target = ws ? url : `${url.includes(':') ? `[${url}]` : url}:${port}`;
  const hop = { host: url, port, key, target };
  if (!allowed(hop)) throw makeError('RPCError', `RPC: this device does not forward sessions to ${target} (its owner lists where: the forward option)`);
  const transport = await openTransport(target, options);
  const session = new RPCSession(transport, { timeout: options.forwardTimeout ?? 0 });
  try {
    await session._open(key, rest);
  } catch (e) {
    transport.destroy?.() ?? transport.close();
    const err = makeError(e?.kind ?? 'RPCError', `${target}: ${e?.message ?? e}`);
    err.cause = e;
    throw err;
  }
  return { transport: session._detach(), target };
}

/** A kException packet carrying "Kind: message", as a webffi device sends errors. */
export function exceptionPacket(kind, message) {
  const w = new Writer();
  w.begin(CODE.Exception);
  w.u32(1);
  w.u32(T.RawStr);
  w.lenBytes(utf8.encode(`${kind}: ${message}`.replaceAll('\0', ' ')));
  return w.end().slice();
}

/**
 * Counts whole packets in a byte stream (the next hop's replies), checking
 * each length against a limit; midPacket says whether one is half through.
 */
export class PacketCounter {
  #head = new Uint8Array(8);
  #have = 0; // header bytes seen
  #left = 0; // body bytes still to come

  constructor(maxPacketBytes) {
    this.max = maxPacketBytes;
  }

  get midPacket() {
    return this.#have > 0 || this.#left > 0;
  }

  /** The packets the chunk completes; throws on a length outside [4, max]. */
  push(chunk) {
    let done = 0;
    let at = 0;
    while (at < chunk.length) {
      if (this.#left > 0) {
        const k = Math.min(this.#left, chunk.length - at);
        this.#left -= k;
        at += k;
        if (this.#left === 0) done++;
        continue;
      }
      const k = Math.min(8 - this.#have, chunk.length - at);
      this.#head.set(chunk.subarray(at, at + k), this.#have);
      this.#have += k;
      at += k;
      if (this.#have < 8) break;
      this.#have = 0;
      const v = new DataView(this.#head.buffer);
      const len = v.getUint32(0, true) + v.getUint32(4, true) * 2 ** 32;
      if (len < 4 || len > this.max) throw makeError('RPCError', `a packet length of ${len} (the limit is ${this.max} bytes)`);
      this.#left = len;
    }
    return done;
  }
}

// ------------------------------------------------ a worker session's hop
const CPU_TYPE = 1;
// tvm-ffi's static type indices: the type key a peer sees for a device's object (others are registered at run time)
const TYPE_NAMES = new Map([[64, 'ffi.Object'], [65, 'ffi.String'], [66, 'ffi.Bytes'], [67, 'ffi.Error'],
  [68, 'ffi.Function'], [69, 'ffi.Shape'], [70, 'ffi.Tensor'], [71, 'ffi.Array'], [72, 'ffi.Map'],
  [73, 'ffi.Module'], [75, 'ffi.List'], [76, 'ffi.Dict']]);
/** Globals looked up on the device, kept for later calls (TVM's client looks each up by name). */
const MAX_GLOBALS = 256;

/** A remote function of an RPC session (a callable with its RPCObject). */
const isRPCFunction = (v) => typeof v === 'function' && v._object instanceof RPCObject;
const isRPCValue = (v) => v instanceof RPCObject || isRPCFunction(v);

/** What the peer learns about an object of the device (RemoteObject's meta). */
function describeRPC(v) {
  if (isRPCFunction(v)) return { kind: 'function', type: 'ffi.Function' };
  if (v instanceof RPCTensor) {
    return { kind: 'tensor', type: 'ffi.Tensor', shape: v.shape.map(Number), dtype: String(v.dtype), device: String(v.device) };
  }
  if (v instanceof RPCModule) return { kind: 'module', type: 'ffi.Module' };
  if (v instanceof RPCObject) return { kind: 'object', type: TYPE_NAMES.get(v.typeIndex) ?? `ffi.Object (type index ${v.typeIndex})` };
  if (typeof v === 'function') return { kind: 'function', type: 'function' };
  return { kind: 'object', type: v?.constructor?.name || 'Object' };
}

function dispose(v) {
  try {
    if (isRPCValue(v)) v.dispose();
  } catch {
    // the session has ended: nothing left to free
  }
}

/** An error's encoded form (one whose parts cannot travel is sent as a RuntimeError saying so). */
function encodeError(e) {
  try {
    return encodeValue(e);
  } catch (refusal) {
    try {
      if (refusal instanceof FFIError) return encodeValue(refusal);
    } catch {
      // below
    }
    return ['E', 'RuntimeError', 'webffi session: the error could not be encoded', ''];
  }
}

/**
 * A TVM RPC session behind serve(): the worker session's calls (globals,
 * remote functions, module functions, tensors, module loading) run on the
 * device; its objects (functions, modules, tensors, other objects) go to
 * the peer as remote references, released (freed on the device) when the
 * peer disposes of them or ends its session. A typed array argument (but
 * Uint8Array, which is bytes) is copied to a CPU tensor on the device for
 * the call, as worker sessions pass typed arrays as CPU tensors.
 */
export class RPCServed {
  #s;
  #max;
  #transferAll;
  #next = 1;
  #byId = new Map(); // id -> { value, refs, meta }
  #byObject = new Map();
  #globals = new Map(); // name -> the device's global as an RPC callable (looked up on its first call)

  constructor(session, { maxRemotes = SESSION_LIMITS.remotes, transferResults = false } = {}) {
    this.#s = session;
    this.#max = maxRemotes;
    this.#transferAll = transferResults;
  }

  /** The RPC session it serves from. */
  get session() {
    return this.#s;
  }

  get remoteCount() {
    return this.#byId.size;
  }

  #lookup = (id) => {
    const e = this.#byId.get(id);
    if (e === undefined) {
      throw makeError('ValueError', `webffi session: remote object #${id} does not exist in this session (it was disposed, or never made here)`);
    }
    return e.value;
  };

  #keep(v, kept) {
    let id = this.#byObject.get(v);
    if (id !== undefined) {
      const e = this.#byId.get(id);
      if (!kept.has(v)) {
        e.refs++;
        kept.set(v, id);
      }
      return ['R', id, e.meta];
    }
    if (this.#byId.size >= this.#max) {
      throw makeError('RPCError', `webffi session: too many remote objects alive in this session (at most ${this.#max}); dispose some`);
    }
    id = this.#next++;
    const meta = describeRPC(v);
    this.#byId.set(id, { value: v, refs: 1, meta });
    this.#byObject.set(v, id);
    kept.set(v, id);
    return ['R', id, meta];
  }

  /** serve(): releases ids the peer disposed of. */
  releaseRemote(ids) {
    for (const id of ids) this.#release(id);
  }

  #release(id) {
    const e = this.#byId.get(id);
    if (e === undefined || --e.refs > 0) return;
    this.#byId.delete(id);
    this.#byObject.delete(e.value);
    dispose(e.value);
  }

  /** serve(): the peer ended its session; what it held is freed on the device. */
  peerClosed() {
    const values = [...this.#byId.values()];
    this.#byId.clear();
    this.#byObject.clear();
    for (const e of values) dispose(e.value);
  }

  /** serve(): one call, its arguments encoded; resolves with an encoded reply (never rejects). */
  async callEncoded(name, args, { signal, op, result = 'auto' } = {}) {
    const temps = []; // device tensors made for typed-array arguments, freed after the call
    const kept = new Map(); // what this reply put in the table: value -> id
    let r;
    try {
      const list = this.#decodeArgs(args);
      if (op === undefined || op === 'call') {
        for (let i = 0; i < list.length; i++) list[i] = await this.#argument(list[i], temps);
      }
      r = await this.#run(name, op, list);
      const fresh = r.fresh;
      let value = r.value;
      const transfer = [];
      try {
        if (result === 'value' || op === 'fetch') {
          value = await this.#asValue(value, transfer);
        } else if (result === 'remote' && value !== null && (typeof value === 'object' || typeof value === 'function')) {
          value = this.#keep(value, kept);
        } else {
          value = encodeValue(value, {
            keep: (v) => this.#keep(v, kept), ...(this.#transferAll ? { transfer } : {}),
          });
        }
      } finally {
        if (fresh && !kept.has(r.value)) dispose(r.value);
      }
      const rollback = () => {
        for (const id of kept.values()) this.#release(id);
        kept.clear();
      };
      if (signal?.aborted) {
        rollback();
        return { ok: false, error: encodeError(signal.reason) };
      }
      return { ok: true, value, transfer, rollback };
    } catch (e) {
      for (const id of kept.values()) this.#release(id);
      return { ok: false, error: encodeError(this.#explain(e)) };
    } finally {
      for (const t of temps) dispose(t);
    }
  }

  /** An RPCError of a session that has ended says it is the worker's session to the device. */
  #explain(e) {
    if (!this.#s.closed || e?.kind !== 'RPCError' || / worker's TVM RPC session /.test(e.message)) return e;
    const out = makeError('RPCError', `webffi session: the worker's TVM RPC session to the device has ended: ${e.message}`);
    out.cause = e;
    return out;
  }

  /** The arguments, decoded (floats stay floats: TVM's protocol tells them from ints). */
  #decodeArgs(args) {
    const list = decodeValue(args, { remote: this.#lookup });
    for (let i = 0; i < list.length; i++) {
      const d = args[i + 1];
      if (Array.isArray(d) && d[0] === 'f') list[i] = new FloatValue(list[i]);
      else if (Array.isArray(d) && d[0] === 'i') list[i] = new IntValue(list[i]);
    }
    return list;
  }

  /** A typed array or a CPU tensor's description becomes a tensor on the device, for this call. */
  async #argument(v, temps) {
    let t = null;
    if (ArrayBuffer.isView(v) && !(v instanceof Uint8Array) && !(v instanceof DataView)) {
      t = await this.#s.tensor(v);
    } else if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype && Object.keys(v).length === 3
      && Array.isArray(v.shape) && v.shape.length <= 64 && v.shape.every((n) => Number.isSafeInteger(n) && n >= 0)
      && typeof v.dtype === 'string' && ArrayBuffer.isView(v.data) && !(v.data instanceof DataView)) {
      t = await this.#s.tensor(v.data, { shape: v.shape, dtype: v.dtype }); // a CPU tensor sent by value
    }
    if (t === null) return v;
    temps.push(t);
    return t;
  }

  /** Runs the call on the device: { value, fresh } (fresh: made by this call, freed unless kept). */
  async #run(name, op, args) {
    const s = this.#s;
    switch (op) {
      case undefined: {
        let f = this.#globals.get(name);
        if (f === undefined) {
          if (this.#globals.size >= MAX_GLOBALS) {
            const [oldest, g] = this.#globals.entries().next().value;
            this.#globals.delete(oldest);
            g.dispose();
          }
          this.#globals.set(name, f = s.getGlobal(name));
        }
        return { value: await f(...args), fresh: true };
      }
      case 'call': {
        const [f, ...rest] = args;
        if (!isRPCFunction(f)) throw new FFITypeError('webffi session: the remote object called is not a function');
        return { value: await f(...rest), fresh: true };
      }
      case 'fetch':
        return { value: args[0], fresh: false };
      case 'tensor': {
        const [data, opts = {}] = args;
        if (!ArrayBuffer.isView(data) || data instanceof DataView) throw new FFITypeError('webffi session: tensor(data, options): data is a typed array');
        if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new FFITypeError('webffi session: tensor(data, options): options is an object');
        const { shape, dtype, device } = opts;
        return { value: await s.tensor(data, { shape, dtype, device: device ?? 'cpu' }), fresh: true };
      }
      case 'getFunction': {
        const [m, fname, optional] = args;
        if (!(m instanceof RPCModule)) throw new FFITypeError('webffi session: getFunction is asked of a remote module');
        if (typeof fname !== 'string') throw new FFITypeError('webffi session: getFunction(name): name is a string');
        return { value: await m.getFunction(fname, { optional: optional === true }), fresh: true };
      }
      case 'loadModule': {
        let source = args[0];
        if (typeof source === 'string') {
          // fetched here only for a device that takes uploads
          const upload = await s.lookupGlobal('tvm.rpc.server.upload');
          if (upload === null) throw makeError('RPCError', 'RPC: the server does not serve tvm.rpc.server.upload (uploads are off on a webffi device unless it enables them)');
          upload.dispose();
          const res = await fetch(source);
          if (!res.ok) throw makeError('ValueError', `webffi session: loadModule: fetching ${source} answered ${res.status}`);
          source = await res.arrayBuffer();
        }
        if (source instanceof ArrayBuffer) source = new Uint8Array(source);
        else if (ArrayBuffer.isView(source)) source = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
        else throw new FFITypeError('webffi session: loadModule(source): source is a URL string or the module\'s bytes');
        return { value: await s.loadModule(source), fresh: true };
      }
      default: // 'info'
        return { value: { remotes: this.#byId.size }, fresh: false };
    }
  }

  /** A value by value: a device tensor is downloaded (through the worker) and sent as a CPU tensor's description. */
  async #asValue(v, transfer) {
    if (v instanceof RPCTensor) {
      const data = await v.data();
      if (data.byteOffset === 0 && data.buffer.byteLength === data.byteLength) transfer.push(data.buffer);
      return ['X', 'ffi.Tensor', { shape: [...v.shape], dtype: String(v.dtype), data }];
    }
    if (v instanceof RPCObject) return v.fetch(); // rejects: TVM's protocol moves objects by handle only
    return encodeValue(v, this.#transferAll ? { transfer } : { fresh: transfer });
  }
}

registerServeAdapter((t, options) => (t instanceof RPCSession ? new RPCServed(t, options) : null));
