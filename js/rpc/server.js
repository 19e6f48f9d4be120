// Serving a runtime as a TVM RPC device: listening on TCP (Node), or joining
// a TVM RPC proxy (WebSocket from a browser or Node, TCP from Node), which
// can in turn register the device with a TVM tracker. Each connection gets
// its own endpoint (js/rpc/endpoint.js); a peer that breaks the protocol
// loses its connection and the others go on.
import { makeError, FFITypeError } from '../errors.js';
import { createEndpoint } from './endpoint.js';
import { nodeBuiltin, socketTransport, openTransport } from './transport.js';
import { RPC_MAGIC, RPC_SUCCESS, RPC_DUPLICATE, RPC_MISMATCH, handshakeBytes } from './wire.js';

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
export function serveConnection(rt, transport, options = {}, { clientKey = null, early = [] } = {}) {
  return new Promise((resolve) => {
    let skipReply = clientKey !== null; // the proxy answered the handshake for us
    let sending = Promise.resolve();
    let paused = false;
    let ended = false;
    const end = (error) => {
      if (ended) return;
      ended = true;
      ep.close();
      resolve({ error });
    };
    const ep = createEndpoint(rt, {
      ...options,
      send(bytes, release) {
        if (skipReply) {
          skipReply = false;
          return;
        }
        const p = transport.write(bytes, release);
        if (p && !paused) {
          // the peer reads slower than we answer: stop reading until it catches up
          paused = true;
          transport.pause();
          sending = p.then(() => {
            paused = false;
            transport.resume();
          });
        }
      },
      onClose(error) {
        if (error) report(options, error, 'connection');
        // let the last reply go out before closing
        Promise.resolve(sending).then(() => transport.close());
        end(error);
      },
    });
    transport.onData((chunk) => {
      if (ep.closed) return;
      try {
        ep.feed(chunk);
      } catch {
        // reported through onClose; the connection is closed
      }
    });
    transport.onClose((error) => end(error));
    if (clientKey !== null) {
      try {
        ep.feed(handshakeBytes(clientKey));
        for (const c of early) if (!ep.closed) ep.feed(c);
      } catch {
        transport.close();
      }
    }
  });
}

/**
 * Listens for TVM RPC clients on TCP (Node). options: port (default 9090;
 * 0 picks one), host (default '127.0.0.1'), key (default 'webffi'), expose,
 * allowUpload, limits, functions (see createEndpoint), maxConnections
 * (default 16), onError(error, where). (A TVM tracker reaches a device
 * through TVM's proxy: joinRPCProxy.)
 * Resolves with { port, host, connections, close() }.
 */
export async function listenRPC(rt, options = {}) {
  const net = nodeBuiltin('node:net');
  if (!net) throw makeError('RPCError', 'listenRPC needs Node (node:net); a browser tab joins a proxy: joinRPCProxy');
  const { port = 9090, host = '127.0.0.1', maxConnections = 16 } = options;
  const live = new Set();
  const server = net.createServer((socket) => {
    if (live.size >= maxConnections) {
      socket.destroy();
      report(options, makeError('RPCError', `refused a connection: ${maxConnections} are open`), 'listen');
      return;
    }
    live.add(socket);
    serveConnection(rt, socketTransport(socket), options).then(() => live.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', (e) => reject(makeError('RPCError', `listenRPC: cannot listen on ${host}:${port}: ${e.message}`)));
    server.listen(port, host, resolve);
  });
  const bound = server.address().port;
  return {
    port: bound,
    host,
    get connections() {
      return live.size;
    },
    close() {
      for (const s of live) s.destroy();
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
 * reconnect). Returns { close(), sessions (count served), ready (a
 * promise: the first registration) }.
 */
export function joinRPCProxy(rt, url, options = {}) {
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
        serveConnection(rt, t, { ...options, key }, { clientKey: clientKey.startsWith('client:') ? clientKey : `client:${key}`, early })
          .then(({ error }) => resolve({ served: true, error }));
      }
    });
    // the registration: magic, length, "server:<key>", as one message (TVM's proxy reads it whole)
    Promise.resolve(t.write(handshakeBytes(`server:${key}`))).then(() => registered());
  });
}

export { RPC_MAGIC };
