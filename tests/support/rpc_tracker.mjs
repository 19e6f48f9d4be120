// A stand-in for TVM's RPC tracker (python/tvm/rpc/tracker.py) for tests
// without TVM: TCP, RPC_TRACKER_MAGIC echoed, then [i32 length][JSON]
// messages answered in order. PUT [3, key, [port, matchkey], custom_addr]
// queues a device (its address: custom_addr, else the peer's); REQUEST
// [4, key, user, priority] hands the first free one out as [0, [host, port,
// matchkey]] (or waits for one); GET_PENDING_MATCHKEYS lists a connection's
// keys not handed out yet; UPDATE_INFO stores its info; a closed connection's
// devices leave the queue. Every message received is kept in `messages`.
import net from 'node:net';

const MAGIC = 0x2f271;
const CODE = { SUCCESS: 0, PING: 1, PUT: 3, REQUEST: 4, UPDATE_INFO: 5, SUMMARY: 6, GET_PENDING_MATCHKEYS: 7 };

function frame(value) {
  const body = Buffer.from(JSON.stringify(value));
  const head = Buffer.alloc(4);
  head.writeInt32LE(body.length);
  return Buffer.concat([head, body]);
}

export async function startTracker({ port = 0 } = {}) {
  const free = new Map(); // key -> [{ conn, host, port, matchkey }]
  const waiting = new Map(); // key -> [conn]
  const conns = new Set();
  const messages = [];

  const schedule = (key) => {
    const f = free.get(key) ?? [];
    const w = waiting.get(key) ?? [];
    while (f.length && w.length) {
      const value = f.shift();
      const asker = w.shift();
      value.conn.pending.delete(value.matchkey);
      asker.socket.write(frame([CODE.SUCCESS, [value.host, value.port, value.matchkey]]));
    }
  };

  const server = net.createServer((socket) => {
    const conn = { socket, buf: Buffer.alloc(0), greeted: false, pending: new Set(), info: {}, puts: [] };
    conns.add(conn);
    socket.on('data', (chunk) => {
      conn.buf = Buffer.concat([conn.buf, chunk]);
      if (!conn.greeted) {
        if (conn.buf.length < 4) return;
        if (conn.buf.readInt32LE(0) !== MAGIC) return socket.destroy();
        conn.greeted = true;
        conn.buf = conn.buf.subarray(4);
        socket.write(Buffer.from([0x71, 0xf2, 0x02, 0x00]));
      }
      while (conn.buf.length >= 4) {
        const n = conn.buf.readInt32LE(0);
        if (n <= 0 || n > 1 << 20) return socket.destroy();
        if (conn.buf.length < 4 + n) return;
        const msg = JSON.parse(conn.buf.subarray(4, 4 + n).toString());
        conn.buf = conn.buf.subarray(4 + n);
        messages.push(msg);
        switch (msg[0]) {
          case CODE.PUT: {
            const [, key, [devPort, matchkey], custom] = msg;
            const value = { conn, host: custom ?? socket.remoteAddress.replace(/^::ffff:/, ''), port: devPort, matchkey, key };
            conn.pending.add(matchkey);
            conn.puts.push(value);
            if (!free.has(key)) free.set(key, []);
            free.get(key).push(value);
            socket.write(frame(CODE.SUCCESS));
            schedule(key);
            break;
          }
          case CODE.REQUEST: {
            const key = msg[1];
            if (!waiting.has(key)) waiting.set(key, []);
            waiting.get(key).push(conn);
            schedule(key);
            break;
          }
          case CODE.PING: socket.write(frame(CODE.SUCCESS)); break;
          case CODE.UPDATE_INFO: conn.info = msg[1]; socket.write(frame(CODE.SUCCESS)); break;
          case CODE.GET_PENDING_MATCHKEYS: socket.write(frame([...conn.pending])); break;
          case CODE.SUMMARY: {
            const queue = {};
            for (const k of new Set([...free.keys(), ...waiting.keys()])) {
              queue[k] = { free: free.get(k)?.length ?? 0, pending: waiting.get(k)?.length ?? 0 };
            }
            const servers = [...conns].map((c) => c.info).filter((i) => String(i.key ?? '').startsWith('server'));
            socket.write(frame([CODE.SUCCESS, { queue_info: queue, server_info: servers }]));
            break;
          }
          default: socket.destroy();
        }
      }
    });
    const gone = () => {
      if (!conns.delete(conn)) return;
      for (const v of conn.puts) {
        const f = free.get(v.key);
        const i = f ? f.indexOf(v) : -1;
        if (i >= 0) f.splice(i, 1);
      }
      for (const w of waiting.values()) {
        const i = w.indexOf(conn);
        if (i >= 0) w.splice(i, 1);
      }
    };
    socket.on('close', gone);
    socket.on('error', gone);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    address: `127.0.0.1:${server.address().port}`,
    messages,
    /** Free devices under key now. */
    free: (key) => free.get(key)?.length ?? 0,
    close() {
      for (const c of conns) c.socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
