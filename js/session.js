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
import { encodeValue, decodeValue } from './clone.js';
import { makeError, FFITypeError } from './errors.js';
import { isHandle } from './objects.js';

/** The session protocol version; both ends must speak the same. */
export const PROTOCOL_VERSION = 1;

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
 * @returns {{ close(): void }}
 */
export function serve(target, port, { transferResults = false } = {}) {
  const transport = transportOf(port);
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

  /** Posts an encoded outcome ({ ok, value } or { ok, error }). */
  const reply = (id, r, transfer) => {
    if (r.ok) transport.post({ wrpc: 'ok', id, value: r.value }, transfer);
    else transport.post({ wrpc: 'err', id, error: r.error });
  };

  const onMessage = async (m) => {
    if (m === null || typeof m !== 'object' || typeof m.wrpc !== 'string') return;
    switch (m.wrpc) {
      case 'hello':
        await lockReady;
        transport.post({ wrpc: 'hello', version: PROTOCOL_VERSION, lock: lockName });
        return;
      case 'cancel':
        if (inFlight.has(m.id)) {
          inFlight.get(m.id)?.abort();
          inFlight.delete(m.id);
        }
        return;
      case 'call':
        break;
      default:
        return;
    }
    const { id, name, args } = m;
    inFlight.set(id, null);
    let t;
    try {
      t = await target;
    } catch (e) {
      if (inFlight.delete(id)) reply(id, { ok: false, error: encodeFailure(e) });
      return;
    }
    if (!inFlight.has(id)) return; // cancelled while the target was loading
    if (typeof t?.callEncoded === 'function') {
      const abort = new AbortController();
      inFlight.set(id, abort);
      try {
        const r = await t.callEncoded(name, args, { signal: abort.signal });
        if (inFlight.delete(id)) reply(id, r);
      } catch {
        // cancelled by the client: nothing to answer
      }
      return;
    }
    inFlight.delete(id);
    const transfer = transferResults ? [] : undefined;
    reply(id, callLocal(t, name, args, transfer), transfer);
  };
  const stop = transport.listen((m) => { onMessage(m); }, () => {});
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
  let decoded = [];
  let result;
  try {
    fn = rt.getGlobal(String(name));
    decoded = decodeValue(args, { runtime: rt });
    result = fn(...decoded);
    return { ok: true, value: encodeValue(result, { transfer }) };
  } catch (error) {
    return { ok: false, error: encodeFailure(error) };
  } finally {
    fn?.dispose();
    for (const h of [...decoded, result]) if (isHandle(h)) h.dispose();
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

  constructor(transport, { timeout = 0, runtime = null, name = 'worker' } = {}) {
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
      const e = makeError('RPCError', `webffi session: protocol version mismatch: this side speaks version ` +
        `${PROTOCOL_VERSION}, the ${this.#name} speaks version ${m.version}`);
      this.close(e);
      throw e;
    }
    if (m.lock && locks()) {
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
    const transfer = options.transfer ? [] : undefined;
    const encoded = encodeValue(args, { transfer });
    const r = await this.callEncoded(name, encoded, options, transfer);
    if (r.ok) return decodeValue(r.value, { runtime: this.#runtime });
    const e = decodeValue(r.error);
    throw r.local ? e : markRemote(e);
  }

  /**
   * The call with arguments already encoded; resolves with
   * `{ ok: true, value }` or `{ ok: false, error }` (encoded; `local` when the
   * failure happened on this side). Used to forward calls.
   */
  callEncoded(name, args, options = {}, transfer = undefined) {
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

  #onMessage(m) {
    if (m === null || typeof m !== 'object' || typeof m.wrpc !== 'string') return;
    const id = m.wrpc === 'hello' ? 0 : m.id;
    this.#settle(id)?.resolve(m);
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
    return encodeValue(refusal);
  }
}

/** Marks an error's frames (and its causes') as remote. */
function markRemote(e) {
  for (let x = e; x instanceof Error; x = x.cause) {
    if (typeof x.backtrace === 'string') x.backtrace = x.backtrace.replace(/^(\s*File ")/gm, `$1${REMOTE}`);
  }
  return e;
}
