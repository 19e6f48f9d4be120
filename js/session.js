// Worker sessions: call a runtime's global functions from another thread
// with promises. Three layers, kept apart so another protocol (TVM's RPC, a
// browser tab as a remote device) can reuse the lower ones:
//   transport: any MessagePort-like object (browser Worker or self, Node
//              Worker or parentPort, a MessagePort) behind post/listen;
//   codec:     js/clone.js (arguments, results and errors by value);
//   session:   requests, replies, handshake, timeouts, cancellation.
// Messages are plain objects with a `wrpc` field (other traffic on the same
// port is ignored): hello {version, lock?}, call {id, name, args},
// ok {id, value}, err {id, error}, cancel {id}.
//
// The peer is not trusted: every message is checked before it is used, a
// malformed call is answered with an error (or ignored when it has no id to
// answer to) and neither end stops serving; a peer reaches only the globals
// the server exposes (see serve()).
import { encodeValue, decodeValue } from './clone.js';
import { makeError, FFITypeError, FFIError } from './errors.js';
import { isHandle } from './objects.js';

/** The session protocol version; both ends must speak the same. */
export const PROTOCOL_VERSION = 1;

/** Bounds of the protocol (values themselves are bounded by decodeValue's LIMITS). */
export const SESSION_LIMITS = Object.freeze({
  /** Calls a server runs or waits on at once, by default (serve's `maxInFlight`). */
  inFlight: 1024,
  /** Characters of a global function's name. */
  name: 1024,
});

/**
 * Globals a peer cannot call unless the server names them in `expose`:
 * test hooks (`testing.trap` traps on purpose), module loading and lookup,
 * the global registry (listing, removing, metadata: existence is not leaked)
 * and the runtime's own internals.
 */
export const PEER_DENIED = Object.freeze([
  'testing.*', 'webffi.*', 'ffi.Module*', 'ffi.SystemLib', 'ffi.Function*', 'ffi.GetGlobalFuncMetadata', 'ffi.MakeField*',
]);

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
        const onError = (e) => onFailure(`the worker crashed: ${e?.message ?? e}`);
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
      const error = (e) => onFailure(`the worker crashed: ${e?.message ?? 'an uncaught error'}`);
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

/** Web Locks show when a browser worker is gone (terminate() fires no event). */
const locks = () => globalThis.navigator?.locks ?? null;

// -------------------------------------------------------------- server
/**
 * Serves calls arriving on `port`. `target` is a runtime (its global
 * functions are called), a Session (calls are forwarded as they are:
 * client -> this worker -> the next), or a promise of either (listening
 * starts at once, calls wait for it).
 * @param {{ expose?: string[] | ((name: string, exposedByDefault: boolean) => boolean),
 *   maxInFlight?: number, transferResults?: boolean }} [options]
 *   expose: the globals a peer may call: names and `prefix*` patterns
 *   (`'*'`: all), or a predicate. Default: every global except PEER_DENIED
 *   when serving a runtime, everything when forwarding (the next server
 *   decides). A global not exposed is answered as a missing one.
 *   maxInFlight: calls accepted at once (default SESSION_LIMITS.inFlight);
 *   more are answered with an RPCError.
 * @returns {{ close(): void }}
 */
export function serve(target, port, options = {}) {
  const { transferResults = false, expose, maxInFlight = SESSION_LIMITS.inFlight } = options ?? {};
  if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1) throw new FFITypeError('serve: maxInFlight is a positive integer');
  const transport = transportOf(port);
  const exposedHere = exposure(expose);
  const exposedNext = expose === undefined ? null : exposedHere; // forwarding: the next server decides
  // Calls received and not yet answered: id -> the AbortController of a
  // forwarded call, or null. A cancelled call is dropped from here and never answered.
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
  const reply = (id, r, transfer) => {
    try {
      if (r.ok) transport.post({ wrpc: 'ok', id, value: r.value }, transfer);
      else transport.post({ wrpc: 'err', id, error: r.error });
    } catch (e) {
      try {
        transport.post({ wrpc: 'err', id, error: encodeFailure(e) });
      } catch {
        // the port is gone: nobody to answer
      }
    }
  };
  const refuseCall = (id, kind, message) => reply(id, { ok: false, error: encodeFailure(makeError(kind, `webffi session: ${message}`)) });

  const onMessage = async (m) => {
    if (m === null || typeof m !== 'object') return;
    switch (m.wrpc) {
      case 'hello':
        await lockReady;
        transport.post({ wrpc: 'hello', version: PROTOCOL_VERSION, lock: lockName });
        return;
      case 'cancel': {
        const id = m.id;
        if (isCallId(id) && inFlight.has(id)) {
          inFlight.get(id)?.abort();
          inFlight.delete(id);
        }
        return;
      }
      case 'call':
        break;
      default:
        return;
    }
    const { id, name, args } = m;
    if (!isCallId(id)) return; // nothing to answer to
    if (inFlight.has(id)) {
      refuseCall(id, 'RPCError', `call id ${id} is already in use by a call in flight`);
      return;
    }
    if (inFlight.size >= maxInFlight) {
      refuseCall(id, 'RPCError', `too many calls in flight (at most ${maxInFlight})`);
      return;
    }
    if (typeof name !== 'string' || name === '' || name.length > SESSION_LIMITS.name) {
      refuseCall(id, 'TypeError', `a call names a global function with a non-empty string of at most ${SESSION_LIMITS.name} characters`);
      return;
    }
    if (!Array.isArray(args) || args[0] !== 'a') {
      refuseCall(id, 'TypeError', `the arguments of the call to \`${name}\` are an encoded array (encodeValue([...]))`);
      return;
    }
    inFlight.set(id, null);
    let t;
    try {
      t = await target;
    } catch (e) {
      if (inFlight.delete(id)) reply(id, { ok: false, error: encodeFailure(e) });
      return;
    }
    if (!inFlight.has(id)) return; // cancelled while the target was loading
    const forwarding = typeof t?.callEncoded === 'function';
    const exposed = forwarding ? exposedNext : exposedHere;
    if (exposed !== null && !exposed(name)) {
      // The same answer as for a global that does not exist: a peer learns nothing more.
      inFlight.delete(id);
      reply(id, { ok: false, error: encodeFailure(makeError('ValueError', `Cannot find global function ${name}`)) });
      return;
    }
    if (forwarding) {
      const abort = new AbortController();
      inFlight.set(id, abort);
      try {
        const r = await t.callEncoded(name, args, { signal: abort.signal });
        if (inFlight.delete(id)) reply(id, r);
      } catch (e) {
        // Cancelled by the client: nothing to answer (and no longer in flight).
        if (!abort.signal.aborted && inFlight.delete(id)) reply(id, { ok: false, error: encodeFailure(e) });
      }
      return;
    }
    inFlight.delete(id);
    const transfer = transferResults ? [] : undefined;
    reply(id, callLocal(t, name, args, transfer), transfer);
  };
  const onMessageSafely = (m) => {
    onMessage(m).catch(() => {
      // onMessage answers every failure it can; what is left (a port that
      // refuses to post) must not become an unhandled rejection that ends the worker.
    });
  };
  const stop = transport.listen(onMessageSafely, () => {});
  return {
    close() {
      stop();
      releaseLock?.();
    },
  };
}

/**
 * Calls a runtime's global function with decoded arguments and encodes the
 * outcome; the handles made for the call, and its result, are released.
 */
function callLocal(rt, name, args, transfer) {
  let fn = null;
  let decoded = null;
  let result;
  try {
    fn = rt.getGlobal(name);
    decoded = decodeValue(args, { runtime: rt }); // an array: args was checked to be an encoded one
    result = fn(...decoded);
    return { ok: true, value: encodeValue(result, { transfer }) };
  } catch (error) {
    return { ok: false, error: encodeFailure(error) };
  } finally {
    release(fn);
    if (Array.isArray(decoded)) for (const h of decoded) release(h);
    release(result);
  }
}

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
 * @param {{ timeout?: number, runtime?: object, name?: string }} [options]
 *   timeout: ms for the handshake and the default for every call (0: none);
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

  constructor(transport, options) {
    const { timeout = 0, runtime = null, name = 'worker' } = options ?? {};
    this.#transport = transport;
    this.#timeout = timeout;
    this.#runtime = runtime;
    this.#name = name;
    this.#stop = transport.listen((m) => this.#onMessage(m), (why) => this.#fail(why));
    this.ready = this.#request({ wrpc: 'hello', version: PROTOCOL_VERSION }, undefined,
      { timeout, what: 'the handshake' }, 0).then((m) => this.#checkHello(m));
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
   * remote frames marked `[remote]`).
   * @param {{ timeout?: number, signal?: AbortSignal, transfer?: boolean }} [options]
   *   transfer: move the ArrayBuffers of typed-array arguments instead of copying.
   */
  async call(name, args = [], options = {}) {
    if (typeof name !== 'string') throw new FFITypeError(`session.call(name, args): name is a string, not ${typeof name}`);
    if (!Array.isArray(args)) throw new FFITypeError('session.call(name, args): args is an array');
    options ??= {};
    const transfer = options.transfer ? [] : undefined;
    const encoded = encodeValue(args, { transfer });
    const r = await this.callEncoded(name, encoded, options, transfer);
    if (r.ok) return decodeValue(r.value, { runtime: this.#runtime });
    let e;
    let why = null;
    try {
      e = decodeValue(r.error);
      if (!(e instanceof Error)) why = `not an error but ${e === null ? 'null' : typeof e}`;
    } catch (bad) {
      why = bad.message;
    }
    if (why !== null) {
      throw makeError('RPCError', `webffi session: the ${this.#name} answered the call to \`${name}\` with a malformed error (${why})`);
    }
    throw r.local ? e : markRemote(e);
  }

  /**
   * The call with arguments already encoded; resolves with
   * `{ ok: true, value }` or `{ ok: false, error }` (encoded; `local` when the
   * failure happened on this side). Used to forward calls.
   */
  callEncoded(name, args, options = {}, transfer = undefined) {
    options ??= {};
    const timeout = options.timeout ?? this.#timeout;
    return this.#request({ wrpc: 'call', name, args }, transfer, { timeout, signal: options.signal, what: `the call to \`${name}\`` })
      .then((m) => (m.wrpc === 'ok' ? { ok: true, value: m.value } : { ok: false, error: m.error }),
        (e) => {
          if (options.signal?.aborted && e === options.signal.reason) throw e;
          return { ok: false, error: encodeFailure(e), local: true };
        });
  }

  /** An async function calling the remote global `name`. */
  getGlobal(name) {
    return (...args) => this.call(name, args);
  }

  /** Rejects every pending call with an RPCError (or `reason`) and stops listening. */
  close(reason) {
    this.#fail(reason ?? 'the session was closed');
  }

  get closed() {
    return this.#closed !== null;
  }

  #request(message, transfer, { timeout, signal, what }, id = this.#next++) {
    if (this.#closed) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, timer: 0, signal, onAbort: null };
      if (timeout > 0) {
        entry.timer = setTimeout(() => {
          this.#settle(id);
          if (id) this.#transport.post({ wrpc: 'cancel', id });
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
      ? makeError('RPCError', `webffi session: ${why}${this.#pending.size ? ` (${this.#pending.size} calls were pending)` : ''}`)
      : why;
    this.#closed = e;
    this.#stop();
    for (const id of [...this.#pending.keys()]) this.#settle(id).reject(e);
  }
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

/** Marks an error's frames (and its causes') as remote. */
function markRemote(e) {
  for (let x = e; x instanceof Error; x = x.cause) {
    if (typeof x.backtrace === 'string') x.backtrace = x.backtrace.replace(/^(\s*File ")/gm, `$1${REMOTE}`);
  }
  return e;
}
