// webffi as a TVM RPC device, measured against raw loopback TCP in the same run.
// Run: node bench/rpc.bench.mjs [--quick]
//   round trip: a remote call of bench.add(1, 2) from our client to our
//   device (another process) against a raw TCP echo of the same request
//   bytes (the client waits for as many bytes as the real reply has);
//   bandwidth: copying a 16 MiB float32 tensor to / from the device (from:
//   into one array with data(out), and into a new one with data()) against
//   the same bytes through a raw loopback socket (a sink that acknowledges
//   with one byte, a source that sends them on a 5-byte request; its reader
//   only counts the chunks Node reads). Copies from the device are also
//   set against a raw reader that gathers the bytes into one array as a
//   real receiver must, reading them straight there (socket onread, as our
//   client does): the fastest way Node has to receive into one array.
// Every row: median over paired rounds (which side goes first alternates).
import { spawn } from 'node:child_process';
import net from 'node:net';
import { connectRPC } from '../js/index.js';
import { paired, timeBoth } from './paired.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 11;
const CALLS = quick ? 200 : 2000;
const MIB = 1 << 20;
const BYTES = 16 * MIB;
const COPIES = quick ? 2 : 5;

const child = spawn(process.execPath, [new URL('./rpc_server.mjs', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
const ports = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(JSON.parse(String(d)))));



function rawSocket(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.setNoDelay(true);
  });
}

/** Writes bytes, resolves once `n` bytes came back. */
function exchange(sock, bytes, n) {
  return new Promise((resolve) => {
    let got = 0;
    const on = (d) => {
      got += d.length;
      if (got >= n) {
        sock.off('data', on);
        resolve();
      }
    };
    sock.on('data', on);
    sock.write(bytes);
  });
}

const session = await connectRPC(`127.0.0.1:${ports.rpc}`, 'webffi');
const add = session.getGlobal('bench.add');
await add(1, 2);
// the bytes our client sends for add(1, 2) and the size of the reply, for the echo
const u = (n, bits = 32) => { const b = Buffer.alloc(bits / 8); bits === 32 ? b.writeUInt32LE(n) : b.writeBigUInt64LE(BigInt(n)); return b; };
const callBody = Buffer.concat([u(3), u(1, 64), u(2), u(1), u(1, 64), u(1), u(2, 64)]);
const request = Buffer.concat([u(callBody.length, 64), callBody]);
const replyBytes = 8 + 4 + 4 + (4 + 8) * 2; // length, code, count, [Int type, Int value]
const echo = await rawSocket(ports.echo);

const timeCalls = async () => {
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) await add(1, 2);
  return ((performance.now() - t0) * 1e6) / CALLS;
};
const timeEcho = async () => {
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) await exchange(echo, request, replyBytes);
  return ((performance.now() - t0) * 1e6) / CALLS;
};
const [echoNs, callNs, echoOverCall] = await paired((swap) => timeBoth(swap, (f) => f(), timeEcho, timeCalls), ROUNDS);
const callRatio = 1 / echoOverCall;

const bulk = await rawSocket(ports.bulk);
const data = new Float32Array(BYTES / 4).fill(1.5);
const remote = await session.empty([BYTES / 4], 'float32', 'cpu');
await remote.set(data);
const header = (op) => { const b = Buffer.alloc(5); b[0] = op; b.writeUInt32LE(BYTES, 1); return b; };
const payload = Buffer.from(data.buffer);
const mbps = (ms) => (COPIES * BYTES) / MIB / (ms / 1000);
const timed = async (fn) => {
  const t0 = performance.now();
  for (let i = 0; i < COPIES; i++) await fn();
  return performance.now() - t0;
};
const rawTo = () => timed(() => exchange(bulk, Buffer.concat([header(0), payload]), 1));
const rawFrom = () => timed(() => exchange(bulk, header(1), BYTES));
// the raw reader into one array, each read straight to where its bytes go
const gathered = new Uint8Array(BYTES);
const spare = new Uint8Array(64 << 10);
let gatheredAt = BYTES;
let gatheredAll = null;
const bulkInto = await new Promise((resolve) => {
  const s = net.connect({
    port: ports.bulk, host: '127.0.0.1',
    onread: {
      buffer: () => (gatheredAt < BYTES ? gathered.subarray(gatheredAt) : spare),
      callback: (n) => {
        gatheredAt += n;
        if (gatheredAt >= BYTES && gatheredAll) {
          const done = gatheredAll;
          gatheredAll = null;
          done();
        }
      },
    },
  }, () => resolve(s));
  s.setNoDelay(true);
});
const rawFromInto = () => timed(() => new Promise((resolve) => {
  gatheredAt = 0;
  gatheredAll = resolve;
  bulkInto.write(header(1));
}));
const oursTo = () => timed(() => remote.set(data));
const into = new Float32Array(BYTES / 4);
const oursFrom = () => timed(() => remote.data(into)); // into the caller's array, as tensor.data(out)
const oursFromNew = () => timed(() => remote.data()); // a new array per copy
const bandwidth = (raw, ours) => paired((swap) => timeBoth(swap, (f) => f(), raw, ours), ROUNDS);
const [rawToMs, oursToMs, toRatio] = await bandwidth(rawTo, oursTo);
const [rawFromMs, oursFromMs, fromRatio] = await bandwidth(rawFrom, oursFrom);
const [rawFromMs2, oursFromNewMs, fromNewRatio] = await bandwidth(rawFrom, oursFromNew);
const [rawIntoMs, oursFromMs2, fromIntoRatio] = await bandwidth(rawFromInto, oursFrom);
if (into[0] !== 1.5 || into[into.length - 1] !== 1.5) throw new Error('copy from the device: wrong bytes');

console.log(`remote call bench.add(1, 2): raw TCP echo ${(echoNs / 1000).toFixed(1)} us, webffi ${(callNs / 1000).toFixed(1)} us, ratio ${callRatio.toFixed(2)}x (target <= 2x)`);
console.log(`copy 16 MiB to the device:   raw ${mbps(rawToMs).toFixed(0)} MiB/s, webffi ${mbps(oursToMs).toFixed(0)} MiB/s, ${toRatio.toFixed(2)}x of raw (target >= 0.8x)`);
console.log(`copy 16 MiB from the device: raw ${mbps(rawFromMs).toFixed(0)} MiB/s, webffi ${mbps(oursFromMs).toFixed(0)} MiB/s, ${fromRatio.toFixed(2)}x of raw (target >= 0.8x; data(out) into one array)`);
console.log(`  the same into a new array:  raw ${mbps(rawFromMs2).toFixed(0)} MiB/s, webffi ${mbps(oursFromNewMs).toFixed(0)} MiB/s, ${fromNewRatio.toFixed(2)}x of raw (data(): V8 gives each new 16 MiB array fresh pages)`);
console.log(`  data(out) against a raw reader into one array: raw ${mbps(rawIntoMs).toFixed(0)} MiB/s, webffi ${mbps(oursFromMs2).toFixed(0)} MiB/s, ${fromIntoRatio.toFixed(2)}x (the raw side reads straight into the array, socket onread)`);
remote.dispose();
await session.close();
echo.destroy();
bulk.destroy();
bulkInto.destroy();
child.kill();
