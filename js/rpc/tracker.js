// TVM's RPC tracker protocol (python/tvm/rpc/tracker.py, base.py): a TCP
// connection opened with RPC_TRACKER_MAGIC (echoed back), then JSON
// messages, each an i32 length and UTF-8 JSON, the tracker answering every
// request in order. A device registers with UPDATE_INFO and PUT (its key, its
// port and a match key, `key:random`, that the tracker hands to one client);
// a client asks with REQUEST and connects with the match key it gets.
import { makeError, FFITypeError } from '../errors.js';
import { openTransport } from './transport.js';
import { connectRPC } from './client.js';
import { PacketReader } from './packet_reader.js';
import { RPC_TRACKER_MAGIC, TRACKER_CODE } from './constants.js';

export { RPC_TRACKER_MAGIC, TRACKER_CODE };

const MAX_MESSAGE = 1 << 20; // as TVM's tracker bounds its messages
const UTF8 = new TextDecoder();

/** A connection to a TVM tracker; send(message) resolves with its answer. */
export class TrackerConnection {
  #t;
  #reader = new PacketReader();
  #length = -1; // the length of the message being read, once known
  #magic = null; // { resolve, reject } until the magic comes back
  #waiters = [];
  #closed = false;
  #closeError = null;
  #onClose = [];

  constructor(transport, address) {
    this.#t = transport;
    this.address = address;
    transport.onData((chunk) => this.#data(chunk));
    transport.onClose((error) => this.#fail(error ?? makeError('RPCError', `RPC tracker ${address} closed the connection`)));
  }

  static async open(address, options = {}) {
    const t = await openTransport(address, options);
    const c = new TrackerConnection(t, address);
    const answered = new Promise((resolve, reject) => {
      c.#magic = { resolve, reject };
    });
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, RPC_TRACKER_MAGIC, true);
    t.write(b);
    await answered;
    return c;
  }

  get closed() {
    return this.#closed;
  }

  onClose(fn) {
    this.#onClose.push(fn);
  }

  #data(chunk) {
    if (this.#closed) return;
    const r = this.#reader;
    r.push(chunk);
    const i32 = (b) => new DataView(b.buffer, b.byteOffset, 4).getInt32(0, true);
    try {
      if (this.#magic) {
        if (r.size < 4) return;
        const m = i32(r.take(4));
        if (m !== RPC_TRACKER_MAGIC) throw makeError('RPCError', `RPC: ${this.address} is not a TVM RPC tracker (it answered 0x${(m >>> 0).toString(16)})`);
        this.#magic.resolve();
        this.#magic = null;
      }
      for (;;) {
        if (this.#length < 0) {
          if (r.size < 4) return;
          const n = i32(r.take(4));
          if (n <= 0 || n > MAX_MESSAGE) throw makeError('RPCError', `RPC tracker ${this.address}: a message of ${n} bytes`);
          this.#length = n;
        }
        if (r.size < this.#length) return;
        const value = JSON.parse(UTF8.decode(r.take(this.#length)));
        this.#length = -1;
        const w = this.#waiters.shift();
        if (!w) throw makeError('RPCError', `RPC tracker ${this.address} sent a message nobody asked for`);
        w.resolve(value);
      }
    } catch (e) {
      this.#fail(e?.kind ? e : makeError('RPCError', `RPC tracker ${this.address}: ${e.message}`));
    }
  }

  #fail(error) {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeError = error;
    this.#magic?.reject(makeError('RPCError', `RPC: ${this.address} is not a TVM RPC tracker (no magic came back: ${error.message})`));
    this.#magic = null;
    for (const w of this.#waiters.splice(0)) w.reject(error);
    try {
      this.#t.destroy?.() ?? this.#t.close();
    } catch {
      // gone already
    }
    for (const fn of this.#onClose) fn(error);
  }

  /** Sends a message (a JSON value) and resolves with the tracker's answer. */
  send(message) {
    if (this.#closed) return Promise.reject(this.#closeError);
    const body = new TextEncoder().encode(JSON.stringify(message));
    const out = new Uint8Array(4 + body.length);
    new DataView(out.buffer).setInt32(0, body.length, true);
    out.set(body, 4);
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      this.#t.write(out);
    });
  }

  close() {
    this.#fail(makeError('RPCError', 'RPC: the tracker connection is closed'));
  }
}

/** Opens a connection to a TVM tracker ('host:port'). */
export function connectTracker(address, options = {}) {
  return TrackerConnection.open(String(address), options);
}

/**
 * Asks a TVM tracker for a device with `key` and connects to it (TVM's
 * tracker.request(key)): resolves with the session, as connectRPC.
 * options: priority (default 1), timeout (ms: for the tracker's answer,
 * which waits until a device is free, and then per request, as connectRPC),
 * and connectRPC's options.
 */
export async function requestRPC(tracker, key, options = {}) {
  if (typeof key !== 'string' || key === '' || /\s/.test(key)) throw new FFITypeError('requestRPC: the key is a non-empty string without spaces');
  const { priority = 1, timeout = 0 } = options;
  const conn = await connectTracker(tracker, options);
  let timer;
  let value;
  try {
    const asked = conn.send([TRACKER_CODE.REQUEST, key, '', priority]);
    value = await (timeout ? Promise.race([asked, new Promise((_, reject) => {
      timer = setTimeout(() => reject(makeError('RPCSessionTimeoutError', `RPC: tracker ${tracker} had no free device '${key}' within ${timeout} ms`)), timeout);
    })]) : asked);
  } finally {
    clearTimeout(timer);
    conn.close();
  }
  const [host, port, matchKey] = Array.isArray(value) && value[0] === TRACKER_CODE.SUCCESS && Array.isArray(value[1]) ? value[1] : [];
  if (typeof host !== 'string' || host === '' || !Number.isInteger(port) || port < 1 || port > 65535 || typeof matchKey !== 'string' || matchKey === '') {
    throw makeError('RPCError', `RPC: tracker ${tracker} answered the request for '${key}' with ${shown(value)}, not [0, [host, port, matchKey]]`);
  }
  return connectRPC(`${host.includes(':') ? `[${host}]` : host}:${port}`, matchKey, options);
}

/** A peer's message in an error: JSON, cut to a readable length (a tracker's message may be 1 MiB). */
function shown(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** The tracker's summary (TVM's SUMMARY: queue_info and server_info). */
export async function trackerSummary(tracker, options = {}) {
  const conn = await connectTracker(tracker, options);
  try {
    const value = await conn.send([TRACKER_CODE.SUMMARY]);
    if (!Array.isArray(value) || value[0] !== TRACKER_CODE.SUCCESS) {
      throw makeError('RPCError', `RPC: tracker ${tracker} answered SUMMARY with ${shown(value)}`);
    }
    return value[1];
  } finally {
    conn.close();
  }
}

/**
 * A TCP device's registration with a tracker, as TVM's own server keeps it:
 * UPDATE_INFO and PUT of a fresh match key; one session at a time is handed
 * out under it (claim); when that session ends (release) a new key is put.
 * A key the tracker gave out but nobody came with is renewed after
 * unmatchedMs; a lost tracker is reconnected every retryMs.
 */
export function trackerRegistration(spec, { key, port, report = () => {} }) {
  const o = typeof spec === 'string' ? { address: spec } : { ...spec };
  if (typeof o.address !== 'string' || o.address === '') throw new FFITypeError('listenRPC: tracker is \'host:port\' or { address, customAddr, pingMs, unmatchedMs, retryMs }');
  const { address, customAddr = null, pingMs = 2000, unmatchedMs = 4000, retryMs = 1000 } = o;
  let conn = null;
  let matchKey = null;
  let busy = false;
  let stopped = false;
  let unmatched = 0;
  let timer = null;
  let signalReady;
  const ready = new Promise((resolve) => {
    signalReady = resolve;
  });
  let previous = new Set();

  const put = async () => {
    let next;
    do next = `${key}:${Math.random()}`; while (previous.has(next));
    previous.add(next);
    if (previous.size > 64) previous = new Set([next]);
    matchKey = next;
    unmatched = 0;
    const c = conn;
    const answer = await c.send([TRACKER_CODE.PUT, key, [port, next], customAddr]);
    if (answer !== TRACKER_CODE.SUCCESS) throw makeError('RPCError', `RPC: tracker ${address} answered PUT with ${JSON.stringify(answer)}`);
    signalReady();
  };
  const ping = async () => {
    timer = null;
    if (stopped || !conn) return;
    try {
      if (!busy && matchKey !== null) {
        const pending = await conn.send([TRACKER_CODE.GET_PENDING_MATCHKEYS]);
        if (!busy && Array.isArray(pending) && !pending.includes(matchKey)) {
          // handed out, and nobody came with it: a new one
          unmatched++;
          if (unmatched * pingMs > unmatchedMs) await put();
        } else {
          unmatched = 0;
        }
      }
    } catch (e) {
      report(e, 'tracker');
    }
    if (!stopped && conn) timer = setTimeout(ping, pingMs);
  };
  const connect = async () => {
    while (!stopped) {
      try {
        const c = await connectTracker(address);
        if (stopped) {
          c.close();
          return;
        }
        conn = c;
        c.onClose(() => {
          if (conn !== c) return;
          conn = null;
          if (!stopped) {
            report(makeError('RPCError', `RPC: lost the tracker ${address}; registering again every ${retryMs} ms`), 'tracker');
            setTimeout(connect, retryMs);
          }
        });
        const info = await c.send([TRACKER_CODE.UPDATE_INFO, { key: `server:${key}`, addr: [customAddr, port] }]);
        if (info !== TRACKER_CODE.SUCCESS) throw makeError('RPCError', `RPC: tracker ${address} answered UPDATE_INFO with ${JSON.stringify(info)}`);
        if (!busy) await put();
        timer ??= setTimeout(ping, pingMs);
        return;
      } catch (e) {
        report(e, 'tracker');
        if (conn) {
          const c = conn;
          conn = null;
          c.close();
        }
        await new Promise((r) => setTimeout(r, retryMs));
      }
    }
  };
  connect();
  return {
    ready,
    get matchKey() {
      return matchKey;
    },
    /** Whether a client's key word is the match key handed out; it is then used. */
    claim(word) {
      if (busy || matchKey === null || word !== `client:${matchKey}`) return false;
      busy = true;
      return true;
    },
    /** The claimed session ended: a new match key goes to the tracker. */
    release() {
      busy = false;
      matchKey = null;
      if (conn && !stopped) put().catch((e) => report(e, 'tracker'));
    },
    close() {
      stopped = true;
      clearTimeout(timer);
      conn?.close();
      conn = null;
    },
  };
}
