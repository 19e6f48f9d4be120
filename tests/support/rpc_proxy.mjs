// A stand-in for TVM's RPC proxy (python/tvm/rpc/proxy.py) for tests without
// TVM: devices and clients connect over WebSocket (/ws) or TCP, each sends
// magic, key length and "server:KEY" / "client:KEY"; a server and a client
// with the same KEY are paired (each is sent kRPCSuccess, the other's key
// length and key) and their bytes forwarded; a client with no device is sent
// kRPCMismatch, a second device under one key kRPCDuplicate.
// With a tracker (startProxy({ tracker: 'host:port' }), as TVM's proxy run
// with --tracker), a device is registered there under a match key of its
// own (PUT [3, KEY, [tcpPort, 'KEY:random'], null]) and a client pairs with
// it by that match key ('client:KEY:random'), which the device is sent.
// As TVM's proxy (tornado), a WebSocket whose Origin is not the proxy's own
// web server is refused (403); startProxy({ root }) serves the files under
// root on that server (as TVM's proxy serves its resource files), so a page
// from there may join.
import net from 'node:net';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { WebSocketServer } from 'ws';

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

const MAGIC = 0xff271;

function i32(v) {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v);
  return b;
}

/** A TVM tracker connection, enough to PUT (raw: the stand-in does not lean on the code under test). */
async function trackerPutter(address) {
  const [host, port] = address.split(':');
  const sock = net.connect({ host, port: Number(port) });
  await new Promise((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  sock.on('error', () => {});
  sock.write(i32(0x2f271));
  return (key, tcpPort, matchKey) => {
    const body = Buffer.from(JSON.stringify([3, key, [tcpPort, matchKey], null]));
    sock.write(Buffer.concat([i32(body.length), body]));
  };
}

// `isolated`: its web server sends the two headers that make a page
// cross-origin isolated (threads: load({ threads })).
export async function startProxy({ tracker = null, root = null, isolated = false } = {}) {
  const pageHeaders = isolated
    ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {};
  const servers = new Map(); // key (with a tracker: match key) -> peer waiting
  const peers = new Set();
  let put = null;
  let tcpPort = 0;

  function peer(send, close) {
    const p = { send, close, buf: Buffer.alloc(0), key: null, other: null };
    peers.add(p);
    p.data = (chunk) => {
      if (p.other) return p.other.send(chunk);
      p.buf = Buffer.concat([p.buf, chunk]);
      if (p.key === null && p.buf.length >= 8) {
        if (p.buf.readInt32LE(0) !== MAGIC) return p.close();
        const n = p.buf.readInt32LE(4);
        if (p.buf.length < 8 + n) return;
        p.key = p.buf.subarray(8, 8 + n).toString();
        const rest = p.buf.subarray(8 + n);
        p.buf = Buffer.alloc(0);
        const match = p.key.slice(7).split(' ')[0];
        if (p.key.startsWith('server:') && put) {
          const matchKey = `${match}:${Math.random()}`;
          servers.set(matchKey, p);
          put(match, tcpPort, matchKey);
        } else if (p.key.startsWith('server:')) {
          if (servers.has(match)) {
            p.send(i32(MAGIC + 1));
            return p.close();
          }
          servers.set(match, p);
        } else {
          const s = servers.get(match);
          if (!s) {
            p.send(i32(MAGIC + 2));
            return p.close();
          }
          servers.delete(match);
          p.other = s;
          s.other = p;
          for (const [a, b] of [[s, p], [p, s]]) {
            a.send(Buffer.concat([i32(MAGIC), i32(Buffer.byteLength(b.key)), Buffer.from(b.key)]));
          }
          if (rest.length) s.send(rest);
        }
      }
    };
    p.closed = () => {
      peers.delete(p);
      for (const [k, v] of servers) if (v === p) servers.delete(k);
      if (p.other) p.other.close();
    };
    return p;
  }

  const tcp = net.createServer((sock) => {
    const p = peer((b) => sock.write(b), () => sock.end());
    sock.on('data', p.data);
    sock.on('close', p.closed);
    sock.on('error', () => {});
  });
  await new Promise((r) => tcp.listen(0, '127.0.0.1', r));
  tcpPort = tcp.address().port;
  if (tracker) put = await trackerPutter(tracker);
  const httpServer = http.createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = root && join(root, path);
    if (!file || !file.startsWith(normalize(root)) || path.includes('..')) return res.writeHead(404).end();
    let body;
    try {
      body = await readFile(file);
    } catch {
      return res.writeHead(404).end();
    }
    res.writeHead(200, { ...pageHeaders, 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream' }).end(body);
  });
  // tornado's check_origin: an Origin header, when sent, must name this server
  const verifyClient = ({ req }) => {
    const origin = req.headers.origin;
    if (!origin) return true;
    try {
      return new URL(origin).host === req.headers.host;
    } catch {
      return false;
    }
  };
  const wss = new WebSocketServer({ server: httpServer, path: '/ws', verifyClient });
  wss.on('connection', (ws) => {
    const p = peer((b) => ws.send(b), () => ws.close());
    ws.on('message', (m) => p.data(Buffer.from(m)));
    ws.on('close', p.closed);
    ws.on('error', () => {});
  });
  await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
  return {
    tcpPort: tcp.address().port,
    wsUrl: `ws://127.0.0.1:${httpServer.address().port}/ws`,
    /** The proxy's web server (files under root). */
    webUrl: (path) => `http://127.0.0.1:${httpServer.address().port}/${path}`,
    /** Keys of devices waiting for a client. */
    waiting: () => [...servers.keys()],
    async close() {
      for (const p of peers) p.close();
      wss.close();
      await Promise.all([new Promise((r) => tcp.close(r)), new Promise((r) => httpServer.close(r))]);
    },
  };
}
