// Chained sessions, as TVM chains them: a client's kInitServer names the
// session constructor rpc.Connect(url, port, key, enable_logging, ...rest),
// and the server it reached connects to that server (sending `rest` as its
// own session constructor) and forwards the session there. Handles, tensors
// and errors are the last server's, untouched on the way. A device forwards
// only where its owner allows (the forward option).
import { makeError, FFITypeError } from '../errors.js';
import { CODE, T, Writer, utf8 } from './wire.js';
import { openTransport } from './transport.js';
import { RPCSession } from './client.js';

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
