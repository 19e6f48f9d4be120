// The server side of bench/rpc.bench.mjs, in its own process: a webffi TVM
// RPC device on TCP, and the raw baselines on loopback (an echo of the same
// bytes, a sink and a source of bulk data). Prints the ports as JSON.
import net from 'node:net';
import { load, listenRPC } from '../js/index.js';

const rt = await load();
rt.registerGlobal('bench.add', (a, b) => a + b);
const rpc = await listenRPC(rt, { port: 0, expose: ['bench.*'], limits: { maxPacketBytes: 64 << 20 } });

// echo: whatever arrives goes back
const echo = net.createServer((s) => {
  s.setNoDelay(true);
  s.on('data', (d) => s.write(d));
});
await new Promise((r) => echo.listen(0, '127.0.0.1', r));

// bulk: a 5-byte header (op, n): op 0 reads n bytes then answers one byte; op 1 sends n bytes
const block = Buffer.alloc(64 << 20, 7);
const bulk = net.createServer((s) => {
  s.setNoDelay(true);
  let want = 0;
  let pending = Buffer.alloc(0);
  s.on('data', (d) => {
    if (want > 0) {
      want -= d.length;
      if (want <= 0) s.write(Buffer.from([1]));
      return;
    }
    pending = Buffer.concat([pending, d]);
    if (pending.length < 5) return;
    const op = pending[0];
    const n = pending.readUInt32LE(1);
    const rest = pending.length - 5;
    pending = Buffer.alloc(0);
    if (op === 0) {
      want = n - rest;
      if (want <= 0) s.write(Buffer.from([1]));
    } else {
      s.write(block.subarray(0, n));
    }
  });
});
await new Promise((r) => bulk.listen(0, '127.0.0.1', r));
console.log(JSON.stringify({ rpc: rpc.port, echo: echo.address().port, bulk: bulk.address().port }));
