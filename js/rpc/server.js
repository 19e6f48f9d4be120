// Serving a runtime as a TVM RPC device: listening on TCP (Node), or joining
// a TVM RPC proxy (WebSocket from a browser or Node, TCP from Node), which
// can in turn register the device with a TVM tracker. Each connection gets
// its own endpoint (js/rpc/endpoint.js); a peer that breaks the protocol
// loses its connection and the others go on.
import { makeError, FFITypeError } from '../errors.js';
import { createEndpoint } from './endpoint.js';
import { nodeBuiltin, socketTransport, openTransport } from './transport.js';
import { RPC_MAGIC, RPC_SUCCESS, RPC_DUPLICATE, RPC_MISMATCH, CODE, handshakeBytes } from './wire.js';
import { forwardPolicy, openNextHop, exceptionPacket, PacketCounter } from './chain.js';
import { RPC_LIMITS } from './endpoint.js';
import { trackerRegistration } from './tracker.js';
import { checkServable } from './library_endpoint.js';

function report(options, error, where) {
  if (typeof options.onError === 'function') options.onError(error, where);
  else options.logger?.warn?.(`webffi RPC (${where}): ${error.message}`);
}

/**
 * Serves one connection (a transport, js/rpc/transport.js) until it ends.
 * `handshake` false: the transport's handshake was done already (a proxy),
 * and the endpoint is fed the client's opening made from `clientKey`.
 * Resolves with { error } when the connection is over.
 */
export function serveConnection(rt, transport, options = {}, { clientKey = null, early = [], slot = null } = {}) {
  const { handshakeMs, idleMs } = deadlinesOf(options);
  return new Promise((resolve) => {
    let skipReply = clientKey !== null; // the proxy answered the handshake for us
    let sending = Promise.resolve();
    let paused = false;
    let ended = false;
    let hop = null; // a chained session's next server
    // Deadlines: a peer holds a connection only while it talks. The first
    // bytes the server sends answer the handshake.
    let handshaken = clientKey !== null;
    const opened = Date.now();
    let last = opened;
    let timer = null;
    // Quiet in any order of server.close(), rt.dispose() and the peer leaving:
    // it runs from socket events, where a throw would end the process.
    const end = (error) => {
      if (ended) return;
      ended = true;
      if (timer !== null) clearTimeout(timer);
      try {
        ep.close();
      } catch (e) {
        report(options, e, 'connection');
      }
      try {
        hop?.close();
      } catch (e) {
        report(options, e, 'connection');
      }
      resolve({ error });
    };
    const expire = (why) => {
      const error = makeError('RPCError', `RPC: closed the connection: ${why}`);
      report(options, error, 'connection');
      transport.close();
      end(error);
    };
    const check = () => {
      timer = null;
      if (ended) return;
      const now = Date.now();
      if (!handshaken) {
        if (now - opened >= handshakeMs) return expire(`the peer sent no handshake within ${handshakeMs} ms`);
      } else if (idleMs > 0 && now - last >= idleMs && !ep.pending && !hop) {
        return expire(`the peer sent nothing for ${idleMs} ms`);
      }
      arm();
    };
    // listenRPC's view of this connection, to choose whose slot a newcomer takes
    if (slot !== null) {
      /** Since when the peer has sent nothing while owed nothing (a served session), or null. */
      slot.idleSince = () => (handshaken && !ended && !ep?.pending && !hop ? last : null);
      slot.giveWay = (why) => {
        if (!ended) expire(why);
      };
    }
    const arm = () => {
      const now = Date.now();
      const wait = !handshaken ? handshakeMs - (now - opened) : idleMs > 0 ? idleMs - (now - last) : -1;
      if (!handshaken || idleMs > 0) {
        timer = setTimeout(check, Math.max(wait, 10));
        timer.unref?.();
      }
    };
    // bytes to the client, reading (from `source`) paused while it is slow
    const toClient = (bytes, source, release) => {
      if (transport.closed) return;
      const p = transport.write(bytes, release);
      if (p && !paused) {
        paused = true;
        source.pause();
        sending = p.then(() => {
          paused = false;
          source.resume();
        });
      }
    };
    const allowed = forwardPolicy(options.forward);
    const chained = allowed ? chainHooks(transport, options, allowed, toClient, {
      opened(h) {
        if (ended) h.close();
        else hop = h;
      },
      failed(error) {
        report(options, error, 'connection');
        Promise.resolve(sending).then(() => transport.close());
        end(error);
      },
    }) : {};
    let ep;
    try {
      ep = makeEndpoint();
    } catch (e) {
      // the runtime was disposed (or poisoned) before this peer came: it is closed quietly
      report(options, e, 'connection');
      ended = true;
      transport.close();
      resolve({ error: e });
      return;
    }
    function makeEndpoint() {
      return createEndpoint(rt, {
        ...options,
        ...chained,
        send(bytes, release) {
          if (!handshaken) {
            handshaken = true;
            // the handshake's timer gives way to the idle one now, not when it would have fired
            if (timer !== null) clearTimeout(timer);
            timer = null;
            last = Date.now();
            arm();
          }
          last = Date.now();
          if (skipReply) {
            skipReply = false;
            return;
          }
          toClient(bytes, transport, release);
        },
        // a tensor's bytes straight from wasm memory, where the socket can take them now
        sendView: transport.writeView ? (bytes, release) => {
          if (skipReply || transport.closed) return false;
          const p = transport.writeView(bytes, release);
          if (p === false) return false;
          if (p && !paused) {
            paused = true;
            transport.pause();
            sending = p.then(() => {
              paused = false;
              transport.resume();
            });
          }
          return true;
        } : undefined,
        onClose(error) {
          if (error) report(options, error, 'connection');
          // let the last reply go out before closing
          Promise.resolve(sending).then(() => transport.close());
          end(error);
        },
      });
    }
    transport.onData((chunk) => {
      if (ep.closed) return;
      last = Date.now();
      try {
        ep.feed(chunk);
      } catch {
        // reported through onClose; the connection is closed
      }
    });
    transport.onClose((error) => end(error));
    arm();
    try {
      if (clientKey !== null) ep.feed(handshakeBytes(clientKey));
      for (const c of early) if (!ep.closed) ep.feed(c);
    } catch {
      transport.close();
    }
  });
}

/**
 * Defaults of a connection's deadlines (listenRPC, joinRPCProxy,
 * serveConnection options). idleMs 0: a served session may stay quiet for as
 * long as it likes (a TVM client compiling between calls); listenRPC gives
 * its slot to a newcomer when every slot is taken and it is the idlest.
 */
export const RPC_DEADLINES = Object.freeze({ handshakeMs: 10000, idleMs: 0 });
/** How long a served session must have been quiet before a newcomer may take its slot (ms). */
const IDLE_YIELD_MS = 1000;
/**
 * A device joined to a proxy serves one client at a time and sees no
 * newcomer to give way to: a client quiet this long (30 min, longer than
 * TVM's compiles between calls) gives the device back (joinRPCProxy's idleMs default).
 */
const PROXY_IDLE_MS = 30 * 60 * 1000;

function deadlinesOf(options) {
  const out = { ...RPC_DEADLINES };
  for (const k of Object.keys(RPC_DEADLINES)) {
    const v = options[k];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v < (k === 'idleMs' ? 0 : 1)) throw new FFITypeError(`RPC: ${k} is a ${k === 'idleMs' ? 'non-negative' : 'positive'} integer (ms)`);
    out[k] = v;
  }
  return out;
}

/**
 * Reads a client's opening (magic, key length, key) off a transport:
 * resolves with { word, chunks }: the key up to its first space (null when
 * the opening is not TVM's) and the bytes read, for the endpoint to serve.
 */
function readOpening(transport) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let done = false;
    const finish = (word) => {
      done = true;
      resolve({ word, chunks });
    };
    transport.onData((chunk) => {
      if (done) return;
      chunks.push(chunk.slice());
      size += chunk.length;
      if (size < 4) return;
      const all = chunks.length === 1 ? chunks[0] : concat(chunks, size);
      const v = new DataView(all.buffer, all.byteOffset, all.byteLength);
      if (v.getInt32(0, true) !== RPC_MAGIC) return finish(null); // the endpoint says why
      if (size < 8) return;
      const n = v.getInt32(4, true);
      if (n <= 0 || n > 4096) return finish(null);
      if (size < 8 + n) return;
      const text = new TextDecoder().decode(all.subarray(8, 8 + n));
      finish(text.split(' ')[0]);
    });
    transport.onClose(() => {
      if (!done) finish(null);
    });
  });
}

function concat(chunks, size) {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * The endpoint's construct and forward hooks for one connection: the next
 * hop's replies go back to the client as they come. When the next hop goes,
 * the requests it left unanswered, and every later one, are answered with an
 * RPCError naming it (the client learns which hop failed); a reply cut in
 * half ends the connection.
 */
function chainHooks(transport, options, allowed, toClient, { opened, failed }) {
  let hop = null;
  let gone = null; // the error every later request gets
  let outstanding = 0;
  let writing = null;
  const maxPacket = options.limits?.maxPacketBytes ?? RPC_LIMITS.maxPacketBytes;
  return {
    async construct(name, args) {
      const { transport: t, target } = await openNextHop(name, args, allowed, options);
      hop = t;
      const counter = new PacketCounter(maxPacket);
      t.onData((chunk) => {
        if (gone) return;
        let n;
        try {
          n = counter.push(chunk);
        } catch (e) {
          gone = `the chained session's next hop ${target} broke the protocol: ${e.message}`;
          failed(makeError('RPCError', `RPC: ${gone}`));
          return;
        }
        outstanding -= n;
        toClient(chunk, t);
      });
      t.onClose((error) => {
        if (gone) return;
        gone = `the chained session's next hop ${target} closed the connection${error ? ` (${error.message})` : ''}`;
        if (counter.midPacket) {
          failed(makeError('RPCError', `RPC: ${gone} in the middle of a reply`));
          return;
        }
        for (; outstanding > 0; outstanding--) toClient(exceptionPacket('RPCError', `RPC: ${gone}`), transport);
      });
      opened(t);
    },
    forward(bytes) {
      const code = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(8, true);
      if (gone) {
        if (code !== CODE.Shutdown) toClient(exceptionPacket('RPCError', `RPC: ${gone}`), transport);
        return;
      }
      if (hop.closed) {
        // its close is being reported: this request gets the error with the others
        if (code !== CODE.Shutdown) outstanding++;
        return;
      }
      if (code !== CODE.Shutdown) outstanding++;
      const p = hop.write(bytes);
      if (p && !writing) {
        // the next hop reads slower than the client sends: stop reading the client
        transport.pause();
        writing = p.then(() => {
          writing = null;
          transport.resume();
        });
      }
    },
  };
}

/**
 * Listens for TVM RPC clients on TCP (Node). options: port (default 9090;
 * 0 picks one), host (default '127.0.0.1'), key (default 'webffi'), expose,
 * allowUpload, limits, functions (see createEndpoint), maxConnections
 * (default 16), forward (chained sessions: see js/rpc/chain.js),
 * onError(error, where), tracker ('host:port', or { address, customAddr,
 * pingMs, unmatchedMs, retryMs }: registers the device with a TVM tracker
 * under `key`, as TVM's own server does; the tracker hands out one session
 * at a time, with a match key of its own, and the device registers again
 * when it ends; direct connections with the key go on as without a
 * tracker).
 * Resolves with { port, host, connections, tracker ({ ready, matchKey }
 * with a tracker), close() }.
 */
export async function listenRPC(rt, options = {}) {
  checkServable(rt, options);
  const net = nodeBuiltin('node:net');
  if (!net) throw makeError('RPCError', 'listenRPC needs Node (node:net); a browser tab joins a proxy: joinRPCProxy');
  const { port = 9090, host = '127.0.0.1', maxConnections = 16 } = options;
  const live = new Map(); // socket -> its slot (serveConnection's view of it)
  let registration = null;
  deadlinesOf(options); // checked now, not at the first connection
  /**
   * At maxConnections, a newcomer takes a slot from one that holds it the
   * least: the oldest connection still in its handshake (nothing answered
   * yet), else the served session idle the longest (owed no reply, quiet for
   * IDLE_YIELD_MS at least). False when every slot is busy.
   */
  const makeRoom = () => {
    for (const s of live.keys()) {
      if (s.bytesWritten === 0) {
        live.delete(s);
        s.destroy();
        report(options, makeError('RPCError', `closed a connection still in its handshake: ${maxConnections} are open and another came`), 'listen');
        return true;
      }
    }
    let idlest = null;
    let since = Date.now() - IDLE_YIELD_MS;
    for (const [s, slot] of live) {
      const t = slot.idleSince();
      if (t !== null && t <= since) {
        idlest = s;
        since = t;
      }
    }
    if (idlest === null) return false;
    const slot = live.get(idlest);
    live.delete(idlest);
    slot.giveWay(`it was idle for ${Date.now() - since} ms and a newcomer needed its slot (${maxConnections} are open)`);
    return true;
  };
  const server = net.createServer((socket) => {
    if (live.size >= maxConnections && !makeRoom()) {
      socket.destroy();
      report(options, makeError('RPCError', `refused a connection: ${maxConnections} are open, each busy or idle for less than ${IDLE_YIELD_MS} ms`), 'listen');
      return;
    }
    const slot = { idleSince: () => null, giveWay: () => socket.destroy() };
    live.set(socket, slot);
    const t = socketTransport(socket);
    if (!registration) {
      serveConnection(rt, t, options, { slot }).then(() => live.delete(socket));
      return;
    }
    // with a tracker, the match key it handed out opens the one tracker session;
    // its opening is read first, under the same handshake deadline
    const { handshakeMs } = deadlinesOf(options);
    const silent = setTimeout(() => {
      if (socket.bytesWritten === 0 && !socket.destroyed && !t.closed) {
        report(options, makeError('RPCError', `RPC: closed the connection: the peer sent no handshake within ${handshakeMs} ms`), 'connection');
        t.close();
      }
    }, handshakeMs);
    silent.unref?.();
    readOpening(t).then(({ word, chunks }) => {
      clearTimeout(silent);
      if (t.closed) {
        live.delete(socket); // gone before its opening was read
        return;
      }
      const claimed = word !== null && registration.claim(word);
      const key = claimed ? word.slice('client:'.length) : options.key;
      serveConnection(rt, t, { ...options, key }, { early: chunks, slot }).then(() => {
        live.delete(socket);
        if (claimed) registration.release();
      });
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', (e) => reject(makeError('RPCError', `listenRPC: cannot listen on ${host}:${port}: ${e.message}`)));
    server.listen(port, host, resolve);
  });
  const bound = server.address().port;
  if (options.tracker !== undefined) {
    registration = trackerRegistration(options.tracker, {
      key: options.key ?? 'webffi', port: bound, report: (e, where) => report(options, e, where),
    });
  }
  return {
    port: bound,
    host,
    get connections() {
      return live.size;
    },
    tracker: registration && {
      ready: registration.ready,
      get matchKey() {
        return registration.matchKey;
      },
    },
    close() {
      registration?.close();
      for (const s of live.keys()) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Joins a TVM RPC proxy as a device: `url` is the proxy's WebSocket
 * (ws://host:port/ws: browsers, and Node with options.WebSocket) or its TCP
 * port ('host:port', Node). The proxy pairs the device with a client that
 * asks for the same key (and, when it runs with a tracker, registers the
 * key there). After each session the device joins again; when the proxy is
 * unreachable it retries every options.retryMs (default 1000; 0: no
 * reconnect). options.idleMs: how long a paired client may stay quiet
 * (default 30 minutes: the device serves no one else meanwhile). Returns
 * { close(), sessions (count served), ready (a promise: the first
 * registration) }.
 */
export function joinRPCProxy(rt, url, options = {}) {
  checkServable(rt, options);
  const { key = 'webffi', retryMs = 1000 } = options;
  if (typeof key !== 'string' || /\s/.test(key) || key === '') throw new FFITypeError('joinRPCProxy: the key is a non-empty string without spaces');
  let stopped = false;
  let current = null;
  let sessions = 0;
  let signalReady;
  let failReady;
  const ready = new Promise((resolve, reject) => {
    signalReady = resolve;
    failReady = reject;
  });
  ready.catch(() => {});
  const loop = async () => {
    while (!stopped) {
      let t;
      try {
        t = await openTransport(url, options);
      } catch (e) {
        report(options, e, 'proxy');
        if (!retryMs) return failReady(e);
        await new Promise((r) => setTimeout(r, retryMs));
        continue;
      }
      if (stopped) {
        t.close();
        return;
      }
      current = t;
      const result = await oneSession(rt, t, key, options, signalReady);
      current = null;
      if (result.served) sessions++;
      if (result.error && !result.served) {
        report(options, result.error, 'proxy');
        if (result.fatal || !retryMs) {
          failReady(result.error);
          return;
        }
        await new Promise((r) => setTimeout(r, retryMs));
      }
    }
  };
  loop();
  return {
    ready,
    get sessions() {
      return sessions;
    },
    close() {
      stopped = true;
      current?.close();
    },
  };
}

/** Registers with the proxy, waits for a client, serves it. */
function oneSession(rt, t, key, options, registered) {
  return new Promise((resolve) => {
    const got = [];
    let size = 0;
    let stage = 'code';
    let keyLen = 0;
    let handedOver = false;
    t.onClose((error) => {
      if (!handedOver) resolve({ served: false, error: error ?? makeError('RPCError', 'RPC proxy closed the connection before a client came') });
    });
    const take = (n) => {
      const out = new Uint8Array(n);
      let at = 0;
      while (at < n) {
        const c = got[0];
        const k = Math.min(c.length, n - at);
        out.set(c.subarray(0, k), at);
        at += k;
        if (k === c.length) got.shift();
        else got[0] = c.subarray(k);
      }
      size -= n;
      return out;
    };
    t.onData((chunk) => {
      if (handedOver) return;
      got.push(chunk);
      size += chunk.length;
      if (stage === 'code' && size >= 4) {
        const code = new DataView(take(4).buffer).getInt32(0, true);
        if (code !== RPC_SUCCESS) {
          handedOver = true;
          t.close();
          const why = code === RPC_DUPLICATE ? `key '${key}' is already registered at the proxy`
            : code === RPC_MISMATCH ? `the proxy found no client for key '${key}' in time`
              : `0x${(code >>> 0).toString(16)} is not a TVM RPC proxy's answer`;
          resolve({ served: false, error: makeError('RPCError', `RPC proxy: ${why}`), fatal: code !== RPC_MISMATCH && code !== RPC_DUPLICATE });
          return;
        }
        stage = 'len';
      }
      if (stage === 'len' && size >= 4) {
        keyLen = new DataView(take(4).buffer).getInt32(0, true);
        if (keyLen <= 0 || keyLen > 4096) {
          handedOver = true;
          t.close();
          resolve({ served: false, error: makeError('RPCError', `RPC proxy: a client key of ${keyLen} bytes`), fatal: true });
          return;
        }
        stage = 'key';
      }
      if (stage === 'key' && size >= keyLen) {
        const clientKey = new TextDecoder().decode(take(keyLen));
        handedOver = true;
        const early = got.splice(0); // the client's first bytes, if they came with the key
        // The proxy matched the keys: a proxy with a tracker pairs clients that come with the tracker's
        // match key ('client:KEY:0.123'). The endpoint sees our own key, with the client's options.
        const opts = clientKey.split(' ').slice(1).join(' ');
        serveConnection(rt, t, { idleMs: PROXY_IDLE_MS, ...options, key }, { clientKey: `client:${key}${opts ? ` ${opts}` : ''}`, early })
          .then(({ error }) => resolve({ served: true, error }));
      }
    });
    // the registration: magic, length, "server:<key>", as one message (TVM's proxy reads it whole)
    Promise.resolve(t.write(handshakeBytes(`server:${key}`))).then(() => registered());
  });
}

export { RPC_MAGIC };
