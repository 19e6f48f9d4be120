// Worker sessions: call a runtime's global functions from another thread
// with promises. Three layers, kept apart so another protocol (TVM's RPC, a
// browser tab as a remote device) can reuse the lower ones:
//   transport: any MessagePort-like object (browser Worker or self, Node
//              Worker or parentPort, a MessagePort) behind post/listen;
//   codec:     js/clone.js (arguments, results and errors by value);
//   session:   requests, replies, handshake, timeouts, cancellation.
// Messages are plain objects with a `wrpc` field (other traffic on the same
// port is ignored): hello {version, lock?}, call {id, name | op, args,
// result?}, ok {id, value}, err {id, error}, cancel {id}, release {refs},
// close {}. Values may hold remote references (['R', id, meta?], see
// js/remote.js) to objects the server keeps in the session's table.
//
// The peer is not trusted: every message is checked before it is used, a
// malformed call is answered with an error (or ignored when it has no id to
// answer to) and neither end stops serving; a peer reaches only the globals
// the server exposes (see serve()).
import { encodeValue, decodeValue } from './clone.js';
import { makeError, FFITypeError, FFIError, ValueError } from './errors.js';
import { backtraceStackLines, callerFrames } from './backtrace.js';
import { isHandle, INTERNALS } from './objects.js';
import { RemoteObject, makeRemote, endedError } from './remote.js';
import { asPeer, heldBytes, holdForPeer, releaseForPeer } from './peers.js';
import { PEER_DENIED } from './core/peer_guard.js';

/** The session protocol version; both ends must speak the same. */
export const PROTOCOL_VERSION = 2;

/** Bounds of the protocol (values themselves are bounded by decodeValue's LIMITS). */
export const SESSION_LIMITS = Object.freeze({
  /** Calls a server runs or waits on at once, by default (serve's `maxInFlight`). */
  inFlight: 1024,
  /** Characters of a global function's name. */
  name: 1024,
  /** Objects one peer may hold remote handles to at once, by default (serve's `maxRemotes`). */
  remotes: 65536,
  /** Ids in one release message. */
  release: 4096,
  /** ms connect() waits for the worker to answer the handshake, by default (its `handshakeTimeout`). */
  handshake: 30000,
});

/**
 * Globals a peer cannot call unless the server names them in `expose`, on
 * every kind of runtime: kept with the rest of what protects a runtime's
 * owner, in js/core/peer_guard.js.
 */
export { PEER_DENIED };

/** A predicate for a list of names and `prefix*` patterns. */
function matcher(patterns) {
  const exact = new Set();
  const prefixes = [];
  for (const p of patterns) {
    if (typeof p !== 'string' || p === '') throw new FFITypeError('serve: expose lists names and `prefix*` patterns (non-empty strings)');
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p));
}
const deniedByDefault = matcher(PEER_DENIED);

/**
 * What a peer may call, from serve's `expose` option (see serve), with the
 * answers cached (bounded) so the check costs a Map lookup per call.
 */
function exposure(expose) {
  let test;
  if (expose === undefined) test = (name) => !deniedByDefault(name);
  else if (Array.isArray(expose)) test = matcher(expose);
  else if (typeof expose === 'function') test = (name) => expose(name, !deniedByDefault(name)) === true;
  else throw new FFITypeError('serve: expose is an array of names and `prefix*` patterns, or a function (name, exposedByDefault) => boolean');
  const cache = new Map();
  return (name) => {
    let yes = cache.get(name);
    if (yes === undefined) {
      try {
        yes = test(name);
      } catch {
        yes = false; // a predicate that throws exposes nothing
      }
      if (cache.size < 4096) cache.set(name, yes);
    }
    return yes;
  };
}

/**
 * The answer to a call of a global the server does not expose (whether it
 * exists or not: the answer depends on the policy alone).
 */
const notExposed = (name) => makeError('ValueError',
  `webffi session: this worker does not expose \`${name}\` (serve's expose option lists the globals a peer may call)`);

/** A call id: what the client numbers its calls with (hello is 0). */
const isCallId = (id) => Number.isSafeInteger(id) && id > 0;

const REMOTE = '[remote] ';

// ------------------------------------------------------------ transport
/**
 * Wraps a MessagePort-like object: `post(message, transfer)` and
 * `listen(onMessage, onFailure)` (returns an unsubscribe function);
 * onFailure(text) reports that the other side is gone.
 */
export function transportOf(port) {
  if (typeof port?.postMessage !== 'function') {
    throw new FFITypeError('webffi session: expected a Worker, MessagePort or worker global (something with postMessage)');
  }
  return {
    post(message, transfer) {
      if (transfer?.length) port.postMessage(message, transfer);
      else port.postMessage(message);
    },
    listen(onMessage, onFailure) {
      if (typeof port.on === 'function') {
        // Node: Worker, parentPort and MessagePort are event emitters with the data itself.
        const onError = (e) => onFailure(LOAD_FAILURE.has(e?.code)
          ? `the worker failed to load its imports: ${e.message}` : `the worker crashed: ${e?.message ?? e}`);
        const onExit = (code) => onFailure(`the worker exited (exit code ${code})`);
        const onClose = () => onFailure('the port was closed by the other side');
        port.on('message', onMessage);
        port.on('error', onError);
        port.on('exit', onExit);
        port.on('close', onClose);
        return () => {
          port.off('message', onMessage);
          port.off('error', onError);
          port.off('exit', onExit);
          port.off('close', onClose);
        };
      }
      const message = (e) => onMessage(e.data);
      // A module Worker whose script or imports fail to load fires a plain
      // Event (no message); an uncaught error fires an ErrorEvent.
      const error = (e) => onFailure(typeof e?.message === 'string'
        ? `the worker crashed: ${e.message}` : WORKER_LOAD_FAILED);
      port.addEventListener('message', message);
      port.addEventListener('error', error);
      port.start?.();
      return () => {
        port.removeEventListener('message', message);
        port.removeEventListener('error', error);
      };
    },
  };
}

/** Node's codes for an import that did not resolve or load (a worker_threads Worker's `error` event). */
const LOAD_FAILURE = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND', 'ERR_UNSUPPORTED_DIR_IMPORT',
  'ERR_UNKNOWN_FILE_EXTENSION', 'ERR_UNSUPPORTED_ESM_URL_SCHEME', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);

const WORKER_LOAD_FAILED = 'the worker failed to load its imports (its script, or a module it imports, ' +
  'could not be fetched or did not resolve; the browser says no more). A module Worker does not see the ' +
  'page\'s import map, so `import ... from \'webffi\'` fails there: import webffi by its URL in the worker, ' +
  'or bundle the worker';

/** Web Locks show when a browser worker is gone (terminate() fires no event). */
const locks = () => globalThis.navigator?.locks ?? null;

// ------------------------------------------------------- remote objects
/** Operations a call message may name instead of a global (`op`); see serve(). */
const OPS = new Set(['call', 'fetch', 'tensor', 'getFunction', 'loadModule', 'info']);
/** How a call's result comes back (`result`): by value where it can, else remote; always remote; always by value. */
const RESULT_MODES = new Set(['auto', 'remote', 'value']);
const CPU = 1;
/** What outcome() is given for a call that threw nothing. */
const NO_ERROR = Symbol('no error');

/** What a client learns about an object the server keeps for it. */
function describeRemote(v) {
  if (isHandle(v)) {
    const type = v.typeKey;
    if (type === 'ffi.Tensor') {
      return { kind: 'tensor', type, shape: v.shape.map(Number), dtype: String(v.dtype), device: String(v.device) };
    }
    if (type === 'ffi.Module') return { kind: 'module', type };
    return { kind: typeof v === 'function' ? 'function' : 'object', type };
  }
  if (typeof v === 'function') return { kind: 'function', type: 'function' };
  let type = 'Object';
  try {
    const n = v?.constructor?.name;
    if (typeof n === 'string' && n !== '' && n.length <= 256) type = n;
  } catch {
    // a getter that throws: the default name
  }
  return { kind: 'object', type };
}

/**
 * One session's table of the objects its peer holds remote handles to:
 * id -> { value, refs, meta }. Ids count up and are never reused in the
 * session; an id from the peer is only ever looked up. Handing the same
 * object out again counts a reference (each handle the peer got releases one).
 */
class RemoteTable {
  constructor(max) {
    this.max = max;
    this.next = 1;
    this.byId = new Map();
    this.byValue = new Map();
    this.lookup = (id) => {
      const e = this.byId.get(id);
      if (e === undefined) {
        throw new ValueError(`webffi session: remote object #${id} does not exist in this session (it was disposed, or never made here)`);
      }
      return e.value;
    };
  }

  get size() {
    return this.byId.size;
  }

  has(v) {
    return this.byValue.has(v);
  }

  /** The reference of an object in the table (no new reference counted). */
  refOf(v) {
    const id = this.byValue.get(v);
    return ['R', id, this.byId.get(id).meta];
  }

  /** The reference for v, kept until released. */
  add(v) {
    let id = this.byValue.get(v);
    if (id !== undefined) {
      const e = this.byId.get(id);
      e.refs++;
      return ['R', id, e.meta];
    }
    if (this.byId.size >= this.max) {
      throw makeError('RPCError', `webffi session: too many remote objects alive in this session (at most ${this.max}); dispose some`);
    }
    const bytes = heldBytes(v);
    holdForPeer(bytes); // JS data kept for peers shares one budget (js/peers.js)
    id = this.next++;
    const meta = describeRemote(v);
    this.byId.set(id, { value: v, refs: 1, meta, bytes });
    this.byValue.set(v, id);
    return ['R', id, meta];
  }

  release(id) {
    const e = this.byId.get(id);
    if (e === undefined || --e.refs > 0) return;
    this.byId.delete(id);
    this.byValue.delete(e.value);
    releaseForPeer(e.bytes);
    release(e.value);
  }

  clear() {
    const entries = [...this.byId.values()];
    this.byId.clear();
    this.byValue.clear();
    for (const e of entries) {
      releaseForPeer(e.bytes);
      release(e.value);
    }
  }
}

/** The named JS functions serve() calls itself (its `functions` option). */
function servedFunctions(functions) {
  const out = new Map();
  if (functions === undefined || functions === null) return out;
  if (typeof functions !== 'object') throw new FFITypeError('serve: functions maps names to JS functions ({ name: fn })');
  for (const [name, fn] of Object.entries(functions)) {
    if (name === '' || name.length > SESSION_LIMITS.name) throw new FFITypeError(`serve: a served function's name is a non-empty string of at most ${SESSION_LIMITS.name} characters`);
    if (typeof fn !== 'function') throw new FFITypeError(`serve: functions.${name} is a function, not ${fn === null ? 'null' : typeof fn}`);
    out.set(name, fn);
  }
  return out;
}

/** Typed arrays (but Bytes) given to a JS function arrive as CPU tensors, as they would in C. */
function tensorArgs(rt, args, held) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (ArrayBuffer.isView(a) && !(a instanceof Uint8Array) && !(a instanceof DataView)) {
      args[i] = rt.tensor(a);
      held.push(args[i]);
    }
  }
  return args;
}

/** A device tensor as its downloaded value (shape, dtype, data), in the tensor codec's encoded form. */
const DOWNLOADED = Symbol('downloaded');

/** The result with device tensors brought to the CPU (a top-level tensor straight from its download). */
async function byValue(result, held) {
  const onDevice = (v) => isHandle(v) && v.typeKey === 'ffi.Tensor' && v.device.deviceType !== CPU;
  if (onDevice(result)) {
    const data = await result.data();
    return { [DOWNLOADED]: true, shape: result.shape, dtype: String(result.dtype), data };
  }
  if (Array.isArray(result)) {
    const out = result.slice();
    for (let i = 0; i < out.length; i++) {
      if (onDevice(out[i])) {
        out[i] = await out[i].toDevice('cpu');
        held.push(out[i]);
      }
    }
    return out;
  }
  return result;
}

// -------------------------------------------------------------- server
/**
 * Other kinds of sessions serve() forwards to: each adapter is
 * (target, serveOptions) => a forwarding target (callEncoded, releaseRemote,
 * peerClosed?) or null when the target is not its kind. js/rpc/chain.js adds
 * TVM RPC sessions (connectRPC), which this module does not import.
 */
const adapters = [];
export function registerServeAdapter(adapt) {
  adapters.push(adapt);
}
function adaptTarget(t, options) {
  for (const adapt of adapters) {
    const a = adapt(t, options);
    if (a) return a;
  }
  return t;
}

/**
 * Serves calls arriving on `port`. `target` is a runtime (its global
 * functions are called), a Session (calls are forwarded as they are:
 * client -> this worker -> the next), an RPCSession (connectRPC: calls go to
 * the TVM RPC server, whose objects the peer holds as remote handles), or a
 * promise of one (listening starts at once, calls wait for it).
 * @param {{ expose?: string[] | ((name: string, exposedByDefault: boolean) => boolean),
 *   functions?: Record<string, Function>, maxInFlight?: number, maxRemotes?: number,
 *   transferResults?: boolean }} [options]
 *   expose: the globals a peer may call: names and `prefix*` patterns
 *   (`'*'`: all), or a predicate. Default: every global except PEER_DENIED
 *   when serving a runtime, everything when forwarding (the next server
 *   decides). A global not exposed is answered with a ValueError saying
 *   so, whether it exists or not. Module
 *   loading (remote.loadModule) is `webffi.loadModule`, denied by default.
 *   functions: JS functions served by name (before the runtime's globals),
 *   called with the decoded arguments (typed arrays as CPU tensors) and
 *   `this` = { signal, runtime }; they may return a promise, which is
 *   awaited; `signal` aborts when the caller cancels or times out.
 *   maxInFlight: calls accepted at once, async ones included (default
 *   SESSION_LIMITS.inFlight); more are answered with an RPCError.
 *   maxRemotes: objects the peer may hold remote handles to at once
 *   (default SESSION_LIMITS.remotes).
 * @returns {{ close(): void, readonly remoteCount: number }}
 */
export function serve(target, port, options = {}) {
  const {
    transferResults = false, expose, functions, maxInFlight = SESSION_LIMITS.inFlight, maxRemotes = SESSION_LIMITS.remotes,
  } = options ?? {};
  if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1) throw new FFITypeError('serve: maxInFlight is a positive integer');
  if (!Number.isSafeInteger(maxRemotes) || maxRemotes < 0) throw new FFITypeError('serve: maxRemotes is a non-negative integer');
  const transport = transportOf(port);
  // The target as served (an RPCSession behind its adapter), resolved once.
  let resolved = null;
  const ready = Promise.resolve(target).then((t) => (resolved = adaptTarget(t, { maxRemotes, transferResults })));
  ready.catch(() => {}); // a target that fails is reported to each call instead
  const exposedHere = exposure(expose);
  const exposedNext = expose === undefined ? null : exposedHere; // forwarding: the next server decides
  const served = servedFunctions(functions);
  const table = new RemoteTable(maxRemotes);
  // Calls received and not yet answered: id -> the call's AbortController.
  // A cancelled call is dropped from here and never answered.
  const inFlight = new Map();
  let releaseLock = null;
  let lockName = null;
  const lockReady = (async () => {
    if (!locks()) return;
    lockName = `webffi-session-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    await new Promise((granted) => {
      locks().request(lockName, () => new Promise((release) => {
        releaseLock = release;
        granted();
      }));
    });
  })();

  /** Posts an encoded outcome ({ ok, value } or { ok, error }); one that cannot be posted is answered as an error. */
  const reply = (id, r, transfer, c) => {
    try {
      if (r.ok) transport.post({ wrpc: 'ok', id, value: r.value }, transfer);
      else transport.post({ wrpc: 'err', id, error: r.error });
    } catch (e) {
      if (c !== undefined) rollback(c);
      else r.rollback?.(); // a forwarded reply that kept objects
      try {
        transport.post({ wrpc: 'err', id, error: encodeFailure(e) });
      } catch {
        // the port is gone: nobody to answer
      }
    }
  };
  const refuseCall = (id, kind, message) => reply(id, { ok: false, error: encodeFailure(makeError(kind, `webffi session: ${message}`)) });

  /** Whether this server runs `op` (or the global `name`) for the peer. */
  const allowed = (op, name) => {
    if (op === undefined) return served.has(name) || exposedHere(name);
    return op !== 'loadModule' || exposedHere('webffi.loadModule');
  };

  // The call whose reply is being encoded (encodeValue is synchronous):
  // what its keep hook puts in the table is recorded there.
  let keeping = null;
  // One reference per object per reply (the client makes one handle per id in a reply).
  const keep = (v) => {
    if (keeping.kept?.has(v)) return table.refOf(v);
    const ref = table.add(v);
    (keeping.kept ??= new Set()).add(v);
    (keeping.ids ??= []).push(ref[1]);
    return ref;
  };
  /** Takes back what a reply that never went out had put in the table. */
  const rollback = (c) => {
    if (c.ids === null) return;
    for (const id of c.ids) table.release(id);
    c.ids = null;
  };
  const isKept = (c, v) => c.kept !== null && c.kept.has(v);

  /**
   * Runs a call here (target is a runtime): its encoded outcome, or a
   * promise of it when the function is asynchronous or the result is wanted
   * by value (a download); null when it was cancelled meanwhile. A
   * synchronous call finishes synchronously: no promise per call.
   */
  function runLocal(rt, c) {
    const held = []; // handles made for the call: released after it unless the reply keeps them
    let result;
    try {
      // the synchronous part is the peer's: charged to the runtime's peer budget (js/peers.js)
      result = asPeer(rt, runPeerPart, rt, c, held);
    } catch (error) {
      return outcome(c, result, held, error);
    }
    if (typeof result?.then === 'function' || c.mode === 'value') return runLocalAsync(c, result, held);
    return outcome(c, result, held, NO_ERROR);
  }

  /** A call's synchronous part: its arguments decoded, the function invoked. */
  function runPeerPart(rt, c, held) {
    const args = decodeValue(c.args, decodeOptions(rt)); // an array: checked to be an encoded one
    for (const h of args) if (isHandle(h) && !table.has(h)) held.push(h);
    return invoke(rt, c, args, held);
  }

  async function runLocalAsync(c, pending, held) {
    let result = pending;
    try {
      if (typeof result?.then === 'function') result = await result;
      if (c.mode === 'value') result = await byValue(result, held);
    } catch (error) {
      return outcome(c, result, held, error);
    }
    return outcome(c, result, held, NO_ERROR);
  }

  /**
   * The encoded outcome of a call that has run (`thrown`: what it threw, or
   * NO_ERROR); null when it was cancelled. Releases what the call made and
   * the reply does not keep.
   */
  function outcome(c, result, held, thrown) {
    let error = thrown;
    try {
      if (error === NO_ERROR) {
        if (!c.live()) return null;
        try {
          return { ok: true, value: encodeResult(c, result) };
        } catch (e) {
          error = e;
        }
      }
      rollback(c);
      if (!c.live()) return null;
      return { ok: false, error: encodeFailure(error) };
    } finally {
      for (const h of held) if (!isKept(c, h)) release(h);
      if (!isKept(c, result) && !table.has(result)) release(result);
    }
  }

  function encodeResult(c, result) {
    const type = typeof result;
    if (result === null || (type !== 'object' && type !== 'function' && type !== 'symbol')) return result; // its own encoding
    keeping = c;
    try {
      if (result[DOWNLOADED]) {
        const { shape, dtype, data } = result;
        if (data.byteOffset === 0 && data.buffer.byteLength === data.byteLength) c.transfer.push(data.buffer); // a fresh download
        return ['X', 'ffi.Tensor', { shape, dtype, data }];
      }
      if (c.mode === 'remote') return keep(result);
      return encodeValue(result, c.mode === 'auto' ? (c.transferAll ? { transfer: c.transfer, keep } : { fresh: c.transfer, keep }) : (c.transferAll ? { transfer: c.transfer } : { fresh: c.transfer }));
    } finally {
      keeping = null;
    }
  }

  // decodeValue's options for a runtime, made once.
  let decodeFor = null;
  let decodeWith = null;
  const decodeOptions = (rt) => {
    if (decodeFor !== rt) {
      decodeWith = { runtime: rt, remote: table.lookup };
      decodeFor = rt;
    }
    return decodeWith;
  };

  /** `this` of a served JS function. */
  const contextOf = (rt, c) => ({ get signal() { return c.call.signal; }, runtime: rt });

  /** The call's result (or a promise of it). */
  function invoke(rt, c, args, held) {
    switch (c.op) {
      case undefined: {
        const fn = served.size === 0 ? undefined : served.get(c.name);
        if (fn) return fn.apply(contextOf(rt, c), tensorArgs(rt, args, held));
        const byName = rt[INTERNALS]?.globalByName; // the runtime keeps the wrapper between calls
        if (byName) return byName(c.name)(...args);
        const f = rt.getGlobal(c.name);
        held.push(f);
        return f(...args);
      }
      case 'call': {
        const f = args[0];
        if (typeof f !== 'function') throw new FFITypeError('webffi session: the remote object called is not a function');
        const rest = args.slice(1);
        return isHandle(f) ? f(...rest) : f.apply(contextOf(rt, c), tensorArgs(rt, rest, held));
      }
      case 'fetch':
        c.mode = 'value';
        return args[0];
      case 'tensor':
        return makeTensor(rt, args, c.call);
      case 'getFunction': {
        const [m, name, optional] = args;
        if (!isHandle(m) || m.typeKey !== 'ffi.Module') throw new FFITypeError('webffi session: getFunction is asked of a remote module');
        if (typeof name !== 'string') throw new FFITypeError('webffi session: getFunction(name): name is a string');
        return m.getFunction(name, { optional: optional === true });
      }
      case 'loadModule': {
        const source = args[0];
        if (typeof source !== 'string' && !ArrayBuffer.isView(source) && !(source instanceof ArrayBuffer)) {
          throw new FFITypeError('webffi session: loadModule(source): source is a URL string or the module\'s bytes');
        }
        return rt.loadModule(source);
      }
      default: // 'info'
        return { remotes: table.size };
    }
  }

  /** Hello, cancel, release and close. */
  const onControl = async (m) => {
    switch (m.wrpc) {
      case 'hello':
        await lockReady;
        transport.post({ wrpc: 'hello', version: PROTOCOL_VERSION, lock: lockName });
        return;
      case 'cancel': {
        const id = m.id;
        if (isCallId(id) && inFlight.has(id)) {
          inFlight.get(id).cancel();
          inFlight.delete(id);
        }
        return;
      }
      case 'release': {
        const refs = m.refs;
        if (!Array.isArray(refs) || refs.length > SESSION_LIMITS.release) return;
        const ids = [];
        for (let i = 0; i < refs.length; i++) if (isCallId(refs[i])) ids.push(refs[i]);
        let t;
        try {
          t = await ready;
        } catch {
          return;
        }
        if (typeof t?.callEncoded === 'function') t.releaseRemote(ids);
        else for (const id of ids) table.release(id);
        return;
      }
      case 'close':
        peerGone();
        return;
      default:
    }
  };

  /** A call: checked, then run at once when the target is ready (else when it is). */
  const onCall = (m) => {
    const { id, name, op, args } = m;
    const mode = m.result ?? 'auto';
    if (!isCallId(id)) return; // nothing to answer to
    if (inFlight.has(id)) {
      refuseCall(id, 'RPCError', `call id ${id} is already in use by a call in flight`);
      return;
    }
    if (inFlight.size >= maxInFlight) {
      refuseCall(id, 'RPCError', `too many calls in flight (at most ${maxInFlight})`);
      return;
    }
    if (op !== undefined) {
      if (!OPS.has(op)) {
        refuseCall(id, 'TypeError', `a call's operation is one of ${[...OPS].join(', ')}`);
        return;
      }
    } else if (typeof name !== 'string' || name === '' || name.length > SESSION_LIMITS.name) {
      refuseCall(id, 'TypeError', `a call names a global function with a non-empty string of at most ${SESSION_LIMITS.name} characters`);
      return;
    }
    if (!RESULT_MODES.has(mode)) {
      refuseCall(id, 'TypeError', `a call's result mode is one of ${[...RESULT_MODES].join(', ')}`);
      return;
    }
    const what = op === undefined ? `the call to \`${name}\`` : `the ${op} operation`;
    if (!Array.isArray(args) || args[0] !== 'a') {
      refuseCall(id, 'TypeError', `the arguments of ${what} are an encoded array (encodeValue([...]))`);
      return;
    }
    const call = new InFlightCall();
    inFlight.set(id, call);
    const live = () => inFlight.get(id) === call;
    if (resolved !== null) {
      dispatch(resolved, m, id, call, live);
      return;
    }
    ready.then((t) => {
      if (live()) dispatch(t, m, id, call, live); // else cancelled while the target was loading
    }, (e) => {
      if (inFlight.delete(id)) reply(id, { ok: false, error: encodeFailure(e) });
    });
  };

  /** Runs a checked call on the ready target `t` and answers it. */
  function dispatch(t, m, id, call, live) {
    const { name, op, args } = m;
    if (typeof t?.callEncoded === 'function') {
      forward(t, m, id, call).catch(() => {});
      return;
    }
    if (!allowed(op, name)) {
      inFlight.delete(id);
      // Said from the policy alone, whether the global exists or not: a peer learns nothing more.
      const e = op === undefined ? notExposed(name)
        : makeError('RPCError', 'webffi session: this worker does not expose module loading (serve\'s expose names `webffi.loadModule`)');
      reply(id, { ok: false, error: encodeFailure(e) });
      return;
    }
    const c = { name, op, args, mode: m.result ?? 'auto', call, live, transfer: [], transferAll: transferResults, kept: null, ids: null };
    const r = runLocal(t, c);
    if (typeof r?.then === 'function') r.then((out) => answer(id, c, out), () => {});
    else answer(id, c, r);
  }

  /** Posts a local call's outcome, unless it was cancelled meanwhile (then what its reply kept goes). */
  function answer(id, c, r) {
    if (r === null) return;
    if (inFlight.delete(id)) reply(id, r, c.transfer, c);
    else rollback(c);
  }

  /** Forwarding: the next server decides, unless this one was given an allowlist. */
  async function forward(t, m, id, call) {
    const { name, op, args } = m;
    if (op === undefined && exposedNext !== null && !exposedNext(name)) {
      inFlight.delete(id);
      reply(id, { ok: false, error: encodeFailure(notExposed(name)) });
      return;
    }
    if (op === 'loadModule' && exposedNext !== null && !exposedNext('webffi.loadModule')) {
      inFlight.delete(id);
      refuseCall(id, 'RPCError', 'this worker does not forward module loading (serve\'s expose names `webffi.loadModule`)');
      return;
    }
    try {
      const r = await t.callEncoded(name, args, { signal: call.signal, op, result: m.result });
      if (inFlight.delete(id)) reply(id, r, r.transfer);
      else r.rollback?.(); // cancelled meanwhile: what the reply kept goes
    } catch (e) {
      // Cancelled by the client: nothing to answer (and no longer in flight).
      if (!call.cancelled && inFlight.delete(id)) reply(id, { ok: false, error: encodeFailure(e) });
    }
  }

  const onMessageSafely = (m) => {
    if (m === null || typeof m !== 'object') return;
    if (m.wrpc === 'call') {
      try {
        onCall(m);
      } catch {
        // onCall answers every failure it can; a port that refuses to post must not end the worker
      }
      return;
    }
    onControl(m).catch(() => {
      // what is left (a port that refuses to post) must not become an
      // unhandled rejection that ends the worker
    });
  };
  // The peer is done or its port closed: nobody waits for its calls (their
  // signals abort) and what it held goes (a forwarder's own session lives on).
  function peerGone() {
    for (const call of inFlight.values()) call.cancel();
    inFlight.clear();
    table.clear();
    resolved?.peerClosed?.();
  }
  const stop = transport.listen(onMessageSafely, peerGone);
  return {
    close() {
      stop();
      peerGone();
      releaseLock?.();
    },
    /** Objects the peer holds remote handles to. */
    get remoteCount() {
      return table.size;
    },
  };
}

/** A call in flight on the server; its AbortSignal is made only when asked for (served functions, forwarding). */
class InFlightCall {
  #controller = null;
  cancelled = false;

  get signal() {
    this.#controller ??= new AbortController();
    if (this.cancelled && !this.#controller.signal.aborted) this.#controller.abort();
    return this.#controller.signal;
  }

  cancel() {
    this.cancelled = true;
    this.#controller?.abort();
  }
}

/** A tensor made in the worker for remote.tensor(data, { shape, dtype, device }). */
async function makeTensor(rt, args, call) {
  const [data, opts = {}] = args;
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new FFITypeError('webffi session: tensor(data, options): options is an object');
  const { shape, dtype, device } = opts;
  const cpu = rt.tensor(data, { ...(shape === undefined ? {} : { shape }), ...(dtype === undefined ? {} : { dtype }) });
  if (device === undefined || device === null || device === 'cpu') return cpu;
  try {
    const target = rt.device(device);
    await rt.backends.ensure(target);
    if (call.cancelled) return null;
    // the device memory is the peer's: allocated as its request, so the budget charges it until freed
    const out = asPeer(rt, emptyLike, rt, cpu, target);
    try {
      out.set(cpu.view());
    } catch (e) {
      out.dispose();
      throw e;
    }
    return out;
  } finally {
    cpu.dispose();
  }
}

const emptyLike = (rt, t, device) => rt.empty(t.shape, t.dtype, device);

function release(h) {
  try {
    if (isHandle(h)) h.dispose();
  } catch {
    // a poisoned runtime says so on the next call
  }
}

// -------------------------------------------------------------- client
/**
 * Connects to a worker serving a runtime (or forwarding to one) and checks
 * the protocol version.
 * @param {object} port a Worker, MessagePort or worker global
 * @param {{ timeout?: number, handshakeTimeout?: number, runtime?: object, name?: string }} [options]
 *   timeout: ms, the default for every call (0: none), and for the handshake
 *   when handshakeTimeout is not given;
 *   handshakeTimeout: ms to wait for the worker to answer the handshake
 *   (default `timeout` when set, else SESSION_LIMITS.handshake; 0: no limit);
 *   runtime: decode results into handles of this runtime (default: plain JS).
 */
export async function connect(port, options = {}) {
  const session = new Session(transportOf(port), options);
  await session.ready;
  return session;
}

export class Session {
  #transport;
  #pending = new Map();
  #next = 1;
  #closed = null;
  #stop;
  #timeout;
  #runtime;
  #name;
  #owner;
  #releases = [];
  #releaseQueued = false;
  #encodeRef;
  #decodeRef;
  #made = null;
  #decodeOptions;

  constructor(transport, options) {
    const { timeout = 0, runtime = null, name = 'worker' } = options ?? {};
    const handshake = options?.handshakeTimeout ?? (timeout > 0 ? timeout : SESSION_LIMITS.handshake);
    if (typeof handshake !== 'number' || !(handshake >= 0)) {
      throw new FFITypeError('webffi session: handshakeTimeout is a number of ms (0: no limit)');
    }
    this.#transport = transport;
    this.#timeout = timeout;
    this.#runtime = runtime;
    this.#name = name;
    // What this session's remote handles call (js/remote.js).
    const self = this;
    this.#owner = {
      op: (op, args, opts) => this.#op(op, args, opts),
      release: (id) => this.#release(id),
      get closed() {
        return self.#closed !== null;
      },
      closedError: (what) => endedError(what, this.#closed.message.replace(/^webffi session: /, '')),
    };
    this.#encodeRef = (h) => RemoteObject.refFor(h, this.#owner);
    // One handle per id in a reply, however often the reply names it (the
    // worker counted one reference); decodeValue is synchronous, so one map
    // (#made) serves the reply being decoded.
    this.#decodeRef = (id, meta) => {
      this.#made ??= new Map();
      let h = this.#made.get(id);
      if (h === undefined) this.#made.set(id, h = makeRemote(this.#owner, id, meta));
      return h;
    };
    this.#decodeOptions = { runtime, remote: this.#decodeRef };
    this.#stop = transport.listen((m) => this.#onMessage(m), (why) => this.#fail(why));
    this.ready = this.#request({ wrpc: 'hello', version: PROTOCOL_VERSION }, undefined, handshake, undefined, 0).then((m) => this.#checkHello(m), (e) => {
      if (e?.kind === 'RPCSessionTimeoutError') {
        // Nothing answered: most often nothing serves on that port yet.
        e = makeError('RPCSessionTimeoutError', `webffi session: the ${this.#name} did not answer the handshake ` +
          `within ${handshake} ms: does it call serve(rt, self) (or serve(rt, parentPort) in Node)? One that ` +
          'loads for longer before serving needs a longer handshakeTimeout (0: no limit)');
      }
      this.close(e);
      throw e;
    });
    this.ready.catch(() => {}); // connect() reports it; a Session made directly need not await it
  }

  #checkHello(m) {
    if (m.version !== PROTOCOL_VERSION) {
      const v = m.version;
      const e = makeError('RPCError', `webffi session: protocol version mismatch: this side speaks version ` +
        `${PROTOCOL_VERSION}, the ${this.#name} speaks version ${typeof v === 'number' ? v : `<${v === null ? 'null' : typeof v}>`}`);
      this.close(e);
      throw e;
    }
    if (typeof m.lock === 'string' && m.lock !== '' && m.lock.length <= 256 && locks()) {
      // Granted only once the worker's lock is released: it was terminated or stopped serving.
      locks().request(m.lock, () => this.#fail('the worker was terminated or stopped serving'));
    }
  }

  /**
   * Calls the remote global function `name`; resolves with its result, or
   * rejects with the remote error (same class, kind, message, backtrace;
   * remote frames marked `[remote]`). Results that cannot travel by value
   * (GPU tensors, functions, modules, objects the worker keeps) come back as
   * remote handles (RemoteTensor, RemoteFunction, RemoteModule, RemoteObject).
   * @param {{ timeout?: number, signal?: AbortSignal, transfer?: boolean, result?: 'auto' | 'remote' | 'value' }} [options]
   *   transfer: move the ArrayBuffers of typed-array arguments instead of copying;
   *   result: 'auto' (default), 'remote' (a handle even when it could travel),
   *   'value' (by value: device tensors are downloaded in the worker).
   */
  call(name, args = [], options = {}) {
    if (typeof name !== 'string') return Promise.reject(new FFITypeError(`session.call(name, args): name is a string, not ${typeof name}`));
    return this.#invoke(name, undefined, args, options);
  }

  /**
   * A session operation (tensor, loadModule, ...; see serve) with arguments
   * as for call(): what js/remote_runtime.js builds on.
   */
  callOp(op, args, options) {
    return this.#op(op, args, options);
  }

  /** A session operation on remote objects (js/remote.js). */
  #op(op, args, options) {
    return this.#invoke(undefined, op, args, op === 'fetch' ? { ...options, result: 'value' } : options);
  }

  async #invoke(name, op, args, options) {
    if (!Array.isArray(args)) throw new FFITypeError('session.call(name, args): args is an array');
    options ??= {};
    const transfer = []; // the caller's buffers only when asked; our own copies (CPU tensors) always
    const encoded = encodeValue(args, { transfer: options.transfer ? transfer : undefined, fresh: transfer, remote: this.#encodeRef });
    let m;
    try {
      m = await this.#request(callMessage(name, op, encoded, options.result), transfer, options.timeout ?? this.#timeout, options.signal);
    } catch (e) {
      if (options.signal?.aborted && e === options.signal.reason) throw e;
      throw this.#answered(encodeFailure(e), name, op, true); // as a copy, like the worker's errors
    }
    if (m.wrpc === 'ok') {
      this.#made = null;
      try {
        return decodeValue(m.value, this.#decodeOptions);
      } finally {
        this.#made = null;
      }
    }
    throw this.#answered(m.error, name, op, false);
  }

  /** The error of a failed call from its encoded form; the worker's with its frames marked remote. */
  #answered(data, name, op, local) {
    let e;
    let why = null;
    try {
      e = decodeValue(data);
      if (!(e instanceof Error)) why = `not an error but ${e === null ? 'null' : typeof e}`;
    } catch (bad) {
      why = bad.message;
    }
    if (why !== null) {
      return makeError('RPCError', `webffi session: the ${this.#name} answered ${whatOf(name, op)} with a malformed error (${why})`);
    }
    return local ? e : markRemote(e, callerFrames(this.#invoke));
  }

  /**
   * The call with arguments already encoded; resolves with
   * `{ ok: true, value }` or `{ ok: false, error }` (encoded; `local` when the
   * failure happened on this side). Used to forward calls.
   * options.op names a session operation instead of a global; options.result
   * is the result mode.
   */
  callEncoded(name, args, options = {}, transfer = undefined) {
    options ??= {};
    const message = callMessage(name, options.op, args, options.result);
    return this.#request(message, transfer, options.timeout ?? this.#timeout, options.signal)
      .then((m) => (m.wrpc === 'ok' ? { ok: true, value: m.value } : { ok: false, error: m.error }),
        (e) => {
          if (options.signal?.aborted && e === options.signal.reason) throw e;
          return { ok: false, error: encodeFailure(e), local: true };
        });
  }

  /** An async function calling the remote global `name` (options as for call()). */
  getGlobal(name, options) {
    return (...args) => this.call(name, args, options);
  }

  /** How many objects the worker keeps for this session's remote handles (a round trip). */
  async remoteCount(options) {
    const info = await this.#op('info', [], options);
    return info.remotes;
  }

  /** Forwarding: releases remote ids on the next server. */
  releaseRemote(ids) {
    for (const id of ids) this.#release(id);
  }

  /** Queues a release; one message per task carries them all. */
  #release(id) {
    if (this.#closed) return; // the worker's table went with the session
    this.#releases.push(id);
    if (this.#releaseQueued) return;
    this.#releaseQueued = true;
    queueMicrotask(() => this.#flushReleases());
  }

  #flushReleases() {
    this.#releaseQueued = false;
    const ids = this.#releases;
    this.#releases = [];
    if (this.#closed) return;
    for (let i = 0; i < ids.length; i += SESSION_LIMITS.release) {
      try {
        this.#transport.post({ wrpc: 'release', refs: ids.slice(i, i + SESSION_LIMITS.release) });
      } catch {
        return; // the port is gone, and the worker's table with it
      }
    }
  }

  /**
   * Rejects every pending call with an RPCError (or `reason`) and stops
   * listening; the worker releases the objects this session's handles named.
   */
  close(reason) {
    if (this.#closed) return;
    try {
      this.#flushReleases();
      this.#transport.post({ wrpc: 'close' });
    } catch {
      // the other side is gone already
    }
    this.#fail(reason ?? 'the session was closed');
  }

  get closed() {
    return this.#closed !== null;
  }

  #request(message, transfer, timeout, signal, id = this.#next++) {
    if (this.#closed) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#releases.length) this.#flushReleases(); // releases reach the worker before later calls
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, timer: 0, signal, onAbort: null };
      if (timeout > 0) {
        entry.timer = setTimeout(() => {
          this.#settle(id);
          if (id) this.#transport.post({ wrpc: 'cancel', id });
          const what = message.wrpc === 'hello' ? 'the handshake' : whatOf(message.name, message.op);
          reject(makeError('RPCSessionTimeoutError', `webffi session: ${what} timed out after ${timeout} ms`));
        }, timeout);
      }
      if (signal) {
        entry.onAbort = () => {
          this.#settle(id);
          this.#transport.post({ wrpc: 'cancel', id });
          reject(signal.reason);
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.#pending.set(id, entry);
      message.id = id;
      try {
        this.#transport.post(message, transfer);
      } catch (e) {
        this.#settle(id);
        reject(e);
      }
    });
  }

  #settle(id) {
    const entry = this.#pending.get(id);
    if (!entry) return null;
    this.#pending.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    return entry;
  }

  /** Replies settle their pending request; anything else (unknown ids, other kinds, garbage) is ignored. */
  #onMessage(m) {
    if (m === null || typeof m !== 'object') return;
    const kind = m.wrpc;
    if (kind === 'hello') this.#settle(0)?.resolve(m);
    else if ((kind === 'ok' || kind === 'err') && isCallId(m.id)) this.#settle(m.id)?.resolve(m);
  }

  #fail(why) {
    if (this.#closed) return;
    const e = typeof why === 'string'
      ? makeError('RPCError', `webffi session: ${why}${this.#pending.size ? ` (${this.#pending.size} ${this.#pending.size === 1 ? 'call was' : 'calls were'} pending)` : ''}`)
      : why;
    this.#closed = e;
    this.#stop();
    for (const id of [...this.#pending.keys()]) this.#settle(id).reject(e);
  }
}

/** A call message (its id is added when it is sent). */
function callMessage(name, op, args, result) {
  if (op !== undefined) return { wrpc: 'call', op, args, result };
  return result === undefined ? { wrpc: 'call', name, args } : { wrpc: 'call', name, args, result };
}

/** What a request is called in errors: `the call to \`f\`` or `fetch()`. */
function whatOf(name, op) {
  return op === undefined ? `the call to \`${name}\`` : `${op}()`;
}

/** An error's encoded form; one whose cause cannot travel is sent as the refusal. */
function encodeFailure(error) {
  try {
    return encodeValue(error);
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
 * Marks an error's frames (and its causes') as remote, and adds the
 * caller's: the frames that awaited the call on this side, marked
 * `[caller]` in the backtrace, and shown under the remote frames in its stack.
 */
function markRemote(e, caller) {
  for (let x = e; x instanceof Error; x = x.cause) {
    if (typeof x.backtrace === 'string') x.backtrace = x.backtrace.replace(/^(\s*File ")/gm, `$1${REMOTE}`);
  }
  if (e instanceof Error && typeof e.backtrace === 'string') {
    const remote = backtraceStackLines(e.backtrace).map((line) => line.replace(/^ {4}at /, `    at ${REMOTE}`)
      .replace(`(${REMOTE}`, '('));
    try {
      Object.defineProperty(e, 'stack', {
        value: [Error.prototype.toString.call(e), ...remote, ...caller.stack].join('\n'), writable: true, configurable: true,
      });
      e.backtrace += caller.backtrace;
    } catch {
      // a frozen error keeps its stack
    }
  }
  return e;
}
