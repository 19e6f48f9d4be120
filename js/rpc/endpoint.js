// The TVM RPC server endpoint of one connection: a thin adapter over the C
// engine (src/rpc_endpoint.c, reached through `webffi.rpc.EndpointCreate`,
// src/rpc_functions.c). Transports hand it the bytes they receive and send
// what it gives back; it decides what the peer may reach and answers the
// device's asynchronous work (WebGPU waits and downloads) when it is done.
import { PEER_DENIED } from '../session.js';
import { makeError, FFITypeError } from '../errors.js';
import { moduleLoader } from '../dylink.js';
import { createLibraryEndpoint } from './library_endpoint.js';
import { RPC_LIMITS } from './constants.js';

export { RPC_LIMITS };

const WEBGPU = 15;
const DIRECT_FEED = 4096; // chunks at least this large are written into the endpoint's input
// Replies of at least POOLED_SEND bytes (a tensor's bytes) leave wasm memory
// in SEND_CHUNK pieces copied into buffers reused once the transport is done
// with them: a fresh buffer of 16 MiB costs V8 several times its copy (the
// pages are new), and a reused one just the copy.
const POOLED_SEND = 64 * 1024;
const SEND_CHUNK = 1024 * 1024;
const SEND_POOL = 32; // idle chunks kept, at most
const PENDING = 2;
const HELD = 3; // a tensor's bytes handed to the transport as they lie in wasm memory
// Names the engine itself serves (rpc_server.c); never resolved as globals.
const SERVER_NAME = /^(tvm\.rpc\.server\.|runtime\.RPCTimeEvaluator$)/;
// TVM's DeviceAttrKind values answered for WebGPU.
const ATTR = { maxThreadsPerBlock: 1, warpSize: 2, maxSharedMemoryPerBlock: 3, deviceName: 5, maxThreadDimensions: 8 };

function matcher(patterns) {
  const exact = new Set();
  const prefixes = [];
  for (const p of patterns) {
    if (typeof p !== 'string' || p === '') throw new FFITypeError('RPC: expose lists names and `prefix*` patterns (non-empty strings)');
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p));
}
const deniedByDefault = matcher(PEER_DENIED);

/**
 * What the peer may reach, as serve's `expose` in js/session.js: names and
 * `prefix*` patterns, or a predicate (name, exposedByDefault) => boolean;
 * default every global but PEER_DENIED.
 */
export function exposure(expose) {
  if (expose === undefined) return (name) => !deniedByDefault(name);
  if (Array.isArray(expose)) return matcher(expose);
  if (typeof expose === 'function') return (name) => expose(name, !deniedByDefault(name)) === true;
  throw new FFITypeError('RPC: expose is an array of names and `prefix*` patterns, or a function (name, exposedByDefault) => boolean');
}

function limitsOf(limits = {}) {
  const out = { ...RPC_LIMITS };
  for (const [k, v] of Object.entries(limits ?? {})) {
    if (!Object.hasOwn(RPC_LIMITS, k)) throw new FFITypeError(`RPC: unknown limit ${k}`);
    if (!Number.isSafeInteger(v) || v <= 0) throw new FFITypeError(`RPC: limit ${k} is a positive integer`);
    out[k] = v;
  }
  return out;
}

/**
 * One server endpoint. options: key (the server key, default 'webffi'),
 * send(bytes, release?) (required; a large reply comes in pieces whose
 * memory is reused once release() is called: a sender that keeps the bytes
 * past the call calls it when done with them, or never), sendView(bytes,
 * release) (optional: a CPU tensor's bytes for a copy to the client, a view
 * of wasm memory: returns false when the transport cannot take them now
 * (they are copied and sent), else true and calls release() once, when it
 * no longer reads them; until then the endpoint serves nothing, frees
 * nothing and, once closed, waits to be destroyed), expose, allowUpload (serve tvm.rpc.server.upload,
 * load_module, ...; default false), limits, functions ({ name: fn }, served
 * by name before the rest: the owner's own server functions), onClose(error?)
 * (called once when the session ends: kShutdown, a protocol error, or an
 * asynchronous completion that failed), construct(name, args) and
 * forward(bytes) (chained sessions: kInitServer with a session constructor
 * other than rpc.LocalSession awaits construct; once it resolves, every
 * later packet goes, whole, to forward; without them such an init is
 * answered with an error).
 * Returns { feed(bytes) -> 'open' | 'closed', close(), handleCount }.
 * feed throws an RPCError when the peer broke the protocol: close the
 * connection (the endpoint is closed already).
 */
export function createEndpoint(rt, options = {}) {
  if (rt.coreKind === 'tvm-ffi') return createLibraryEndpoint(rt, options);
  const { key = 'webffi', send, sendView, expose, allowUpload = false, functions = {}, onClose, construct, forward } = options;
  if (typeof send !== 'function') throw new FFITypeError('RPC endpoint: send is a function (bytes) => void');
  if (typeof key !== 'string' || !/^[^\s]{1,4000}$/.test(key)) throw new FFITypeError('RPC endpoint: the key is a non-empty string without spaces');
  const limits = limitsOf(options.limits);
  const exposed = exposure(expose);
  if (allowUpload) moduleLoader(rt.exports); // registers ffi.Module.load_from_bytes.wasm, which load_module calls
  const own = new Map(Object.entries(functions));
  let closed = false;
  let ep = null;
  let held = false; // the transport reads a tensor's bytes in wasm memory: the engine waits
  const destroy = () => {
    try {
      // a disposed or poisoned runtime has nothing left to release: its memory goes with it
      if (rt.disposed || rt.poisoned !== null) return;
      ep?.(4);
    } finally {
      ep?.dispose?.();
    }
  };

  const finish = (error) => {
    if (closed) return;
    closed = true;
    try {
      // held bytes belong to tensors the engine frees: it goes once the transport lets go
      if (!held) destroy();
    } finally {
      onClose?.(error);
    }
  };
  const released = () => {
    held = false;
    if (closed) destroy();
    else settle(() => ep(7));
  };
  // An asynchronous completion: its replies go out now; a failure ends the session.
  const settle = (fn) => {
    if (closed) return;
    try {
      if (fn() === 1) finish();
    } catch (e) {
      finish(wrapProtocolError(e));
    }
  };
  const complete = (token, error) => settle(() => (error === undefined
    ? ep(1, token, null, '')
    : ep(1, token, String(error?.kind ?? error?.name ?? 'RuntimeError'), String(error?.message ?? error))));

  // the WebGPU engine (sync, info, device) behind the runtime's backend
  const backendOf = (type) => {
    const b = type === WEBGPU ? rt.backends?.get?.('webgpu') : null;
    const engine = b?.engine ?? b;
    return engine && typeof engine.sync === 'function' ? engine : null;
  };
  const streamSync = (token, device) => {
    const b = backendOf(device.deviceType);
    if (!b) return 0; // CPU: nothing to wait for
    b.sync().then(() => complete(token), (e) => complete(token, e));
    return PENDING;
  };
  const copyFrom = (token, device, handle, offset, nbytes) => {
    const dev = rt.backends?.deviceFor?.(device.deviceType);
    if (!dev) throw makeError('RuntimeError', `RPC: no backend serves ${device} for a copy to the client`);
    Promise.resolve()
      .then(() => dev.download(handle, offset, nbytes))
      .then((bytes) => settle(() => ep(2, token, bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))),
        (e) => complete(token, e));
    return PENDING;
  };
  const deviceAttr = (device, kind) => {
    const b = backendOf(device.deviceType);
    const info = b?.info?.();
    if (!info) return null;
    const l = info.limits;
    switch (kind) {
      case ATTR.maxThreadsPerBlock: return l.maxComputeInvocationsPerWorkgroup ?? null;
      case ATTR.warpSize: return 1;
      case ATTR.maxSharedMemoryPerBlock: return l.maxComputeWorkgroupStorageSize ?? null;
      case ATTR.deviceName: return [info.adapter.vendor, info.adapter.architecture, info.adapter.device].filter(Boolean).join(' ') || 'WebGPU';
      case ATTR.maxThreadDimensions: {
        const lim = b.device?.limits;
        return lim ? JSON.stringify([lim.maxComputeWorkgroupSizeX, lim.maxComputeWorkgroupSizeY, lim.maxComputeWorkgroupSizeZ]) : null;
      }
      default: return null;
    }
  };
  // a session constructor (a chained session): its reply waits for the next hop
  const constructHook = typeof construct === 'function' && typeof forward === 'function'
    ? (token, name, ...args) => {
      Promise.resolve()
        .then(() => construct(String(name), args))
        .then(() => complete(token), (e) => complete(token, e));
      return PENDING;
    }
    : null;
  const forwardHook = constructHook ? (bytes) => { forward(bytes); } : null;
  const globals = new Map(); // name -> callable, so a name is looked up once per session
  const lookup = (name) => {
    if (own.has(name)) return own.get(name);
    if (SERVER_NAME.test(name) || !exposed(name)) return null;
    if (!globals.has(name)) {
      if (globals.size >= 4096) globals.clear();
      globals.set(name, rt.getGlobal(name, { optional: true }));
    }
    return globals.get(name);
  };

  const memory = rt.exports.memory;
  const idle = []; // reusable SEND_CHUNK buffers
  // send(address, size): the bytes lie in wasm memory for this call only.
  let heap = new Uint8Array(memory.buffer); // refreshed when memory grows
  const sendOut = (at, n, stays) => {
    if (heap.buffer !== memory.buffer) heap = new Uint8Array(memory.buffer);
    if (stays === 1 && sendView) {
      // no copy: the transport hands the view to the socket now, and the
      // engine serves nothing (so frees and writes nothing) until release
      let inCall = true;
      let early = false;
      const took = sendView(new Uint8Array(memory.buffer, at, n), () => {
        if (inCall) early = true;
        else released();
      });
      inCall = false;
      if (took) {
        if (early) return 0;
        held = true;
        return HELD;
      }
    }
    if (n < POOLED_SEND) {
      send(heap.slice(at, at + n));
      return;
    }
    for (let off = 0; off < n; off += SEND_CHUNK) {
      const k = Math.min(SEND_CHUNK, n - off);
      const chunk = idle.pop() ?? new Uint8Array(SEND_CHUNK);
      chunk.set(heap.subarray(at + off, at + off + k));
      // release(): called by a transport once it no longer reads the bytes
      send(chunk.subarray(0, k), () => {
        if (idle.length < SEND_POOL) idle.push(chunk);
      });
    }
  };
  const create = rt.getGlobal('webffi.rpc.EndpointCreate');
  try {
    ep = create(key, sendOut, '', allowUpload ? 1 : 0,
      limits.maxPacketBytes, limits.maxHandles, limits.maxDeviceBytes, limits.maxUploadBytes,
      streamSync, copyFrom, deviceAttr, lookup, constructHook, forwardHook);
  } finally {
    create.dispose();
  }

  return {
    /** Serves bytes from the peer: 'open', or 'closed' once the peer shut down. */
    feed(bytes) {
      if (closed) throw makeError('RPCError', 'RPC: the session is closed');
      let status;
      try {
        if (bytes.length < DIRECT_FEED) {
          status = ep(0, bytes);
        } else {
          // written straight into the endpoint's input (one copy fewer)
          const at = ep(5, bytes.length);
          new Uint8Array(memory.buffer, at, bytes.length).set(bytes);
          status = ep(6, bytes.length);
        }
      } catch (e) {
        const err = wrapProtocolError(e);
        finish(err);
        throw err;
      }
      if (status === 1) finish();
      return closed ? 'closed' : 'open';
    },
    /** Ends the session, releasing everything the peer held. */
    close() {
      finish();
    },
    get closed() {
      return closed;
    },
    /** Handles the peer holds now. */
    get handleCount() {
      return closed ? 0 : ep(3);
    },
    /** Whether the server owes the peer a reply it is waiting to give (a device wait, a held send). */
    get pending() {
      return !closed && (held || ep(8) !== 0);
    },
  };
}

/** The engine's protocol errors arrive as ValueErrors: an RPCError says it is the peer's. */
function wrapProtocolError(e) {
  if (e?.kind === 'RPCError') return e;
  const err = makeError('RPCError', `RPC: closing the connection: ${e?.message ?? e}`);
  err.cause = e;
  return err;
}
