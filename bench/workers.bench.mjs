// Values and errors by value between workers, and remote calls, against raw
// postMessage measured in the same run (Node worker_threads).
// Run: node bench/workers.bench.mjs
//   throughput: N messages main -> worker, the worker receiving (and, on the
//   by-value path, decoding) each; the by-value path also encodes each one.
//   round trip: one call at a time, awaiting each answer (a block of each per round).
//   GPU in a worker (WebGPU from Dawn, npm `webgpu`): a remote call returning
//   a remote GPU tensor (matmul of two resident tensors, result released)
//   against a hand-written postMessage protocol doing the same work; fetching
//   a 16 MiB GPU tensor (downloaded in the worker, transferred) against the
//   same download posted by hand, and against posting a prepared 16 MiB
//   ArrayBuffer (transferred: postMessage alone); fetching a 16 MiB CPU
//   tensor kept in the worker against that prepared buffer; and the main thread's
//   event-loop lag while the worker runs a long GPU job.
// Every row: median over paired rounds of (baseline time / our time).
import { Worker } from 'node:worker_threads';
import { load, connect, connectRuntime, encodeValue } from '../js/index.js';
import { paired as pairedRounds, timeBoth, rawRequests } from './paired.mjs';
import { loadTesting } from '../js/testing.js';

process.env.EGL_PLATFORM ??= 'surfaceless'; // Mesa reads the process environment, which a worker cannot set

const BATCH = 2000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const paired = (round) => pairedRounds(round, ROUNDS);
const workerUrl = new URL('./workers_worker.mjs', import.meta.url);
const rt = await loadTesting(await load());

const spawn = (role) => new Worker(workerUrl, { workerData: { role, batch: BATCH } });
const nextMessage = (w) => new Promise((resolve) => w.once('message', resolve));

/** ns per message sent with send() until the sink has BATCH. */
async function batch(sink, send) {
  await settle();
  sink.postMessage({ batch: 0 });
  const done = nextMessage(sink);
  const t0 = performance.now();
  for (let i = 0; i < BATCH; i++) send();
  await done;
  return ((performance.now() - t0) * 1e6) / BATCH;
}




/**
 * Waits before a timed block. After a burst of messages between two threads,
 * the next pair to talk runs several times slower for a while on this 2-core
 * VM (at least 500 round trips), whichever side it is; 50 ms idle ends that.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/** ns per sequential round trip over n calls of once(). */
async function roundTrip(n, once) {
  await settle();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await once();
  return ((performance.now() - t0) * 1e6) / n;
}

const sink = spawn('sink');
let cError;
try {
  rt.getGlobal('testing.test_raise_error')('ValueError', 'a message of some length, as errors have');
} catch (e) {
  cError = e;
}
const ints = Array.from({ length: 100 }, (_, i) => i);
const cases = [
  ['error raised in C', cError, { kind: cError.kind, message: cError.message, backtrace: cError.backtrace }],
  ['string (40 chars)', 'a string of forty characters, give or ta', 'a string of forty characters, give or ta'],
  ['ffi.Array of 100 ints', rt.toFFI(ints), ints],
  ['ffi.Map of 5 string -> int', rt.toFFI({ a: 1, b: 2, c: 3, d: 4, e: 5 }), new Map(Object.entries({ a: 1, b: 2, c: 3, d: 4, e: 5 }))],
  ['Device + DataType', [rt.device('webgpu:0'), rt.dtype('float32')], [{ deviceType: 15, deviceId: 0, name: 'webgpu' }, { code: 2, bits: 32, lanes: 1, text: 'float32' }]],
];

const rows = [];
for (const [name, value, plain] of cases) {
  const [raw, codec, ratio] = await paired((swap) => timeBoth(swap, (send) => batch(sink, send),
    () => sink.postMessage({ encoded: false, data: plain }),
    () => sink.postMessage({ encoded: true, data: encodeValue(value) })));
  rows.push([`by value: ${name}`, raw, codec, ratio, 'throughput ratio (>= 0.8 wanted)']);
}

const echo = spawn('echo');
let id = 0;
const session = await connect(spawn('server'));
const rawPing = () => {
  const reply = nextMessage(echo);
  echo.postMessage({ wrpc: 'call', id: ++id, name: 'testing.add_one', args: [1] });
  return reply;
};
const [ping, call, pingOverCall] = await paired((swap) => timeBoth(swap, (once) => roundTrip(2000, once), rawPing, () => session.call('testing.add_one', [1])));
rows.push(['remote call add_one(1) vs raw ping-pong', ping, call, 1 / pingOverCall, 'time ratio (<= 1.5 wanted)']);

// ------------------------------------------------------ GPU in a worker
const gpuWorker = spawn('gpu');
const remote = await connectRuntime(gpuWorker, { timeout: 120000 });
/** A request on the hand-written protocol, answered by the message with its id. */
const raw = rawRequests(gpuWorker);
const N = 64;
const A = new Float32Array(N * N).fill(0.5);
const ta = await remote.tensor(A, { shape: [N, N], device: 'webgpu' });
const tb = await remote.tensor(A, { shape: [N, N], device: 'webgpu' });
const ra = (await raw({ raw: 'tensor', data: A, shape: [N, N] })).ref;
const rb = (await raw({ raw: 'tensor', data: A, shape: [N, N] })).ref;
const matmulRemote = remote.getGlobal('webgpu.matmul');
const ourMatmul = async () => {
  const c = await matmulRemote(ta, tb);
  c.dispose();
};
const rawMatmul = async () => {
  const r = await raw({ raw: 'matmul', a: ra, b: rb });
  gpuWorker.postMessage({ raw: 'free', ref: r.ref });
};
{
  const [rawNs, oursNs, ratio] = await paired((swap) => timeBoth(swap, (once) => roundTrip(300, once), rawMatmul, ourMatmul));
  rows.push([`remote webgpu.matmul ${N}x${N} -> remote GPU tensor vs hand-written protocol`, rawNs, oursNs, 1 / ratio, 'time ratio (<= 1.3 wanted)']);
}
const BIG = 4 * 1024 * 1024; // float32 elements: 16 MiB
const bigData = new Float32Array(BIG).fill(1);
const big = await remote.tensor(bigData, { shape: [BIG], device: 'webgpu' });
const bigRaw = (await raw({ raw: 'tensor', data: bigData, shape: [BIG] })).ref;
const MIB = (BIG * 4) / 2 ** 20;
const bandwidth = (ns) => (MIB / (ns / 1e9)).toFixed(0);
{
  const fetchOnce = async () => {
    const d = await big.data();
    if (d.length !== BIG) throw new Error('short fetch');
  };
  const rawDownload = async () => {
    const r = await raw({ raw: 'data', ref: bigRaw });
    if (r.data.length !== BIG) throw new Error('short download');
  };
  const rawBuffer = async () => {
    const r = await raw({ raw: 'buffer', bytes: BIG * 4 });
    if (r.data.length !== BIG * 4) throw new Error('short buffer');
  };
  const [dl, ours, ratio] = await paired((swap) => timeBoth(swap, (once) => roundTrip(5, once), rawDownload, fetchOnce));
  rows.push([`fetch a 16 MiB GPU tensor (${bandwidth(ours)} MiB/s) vs the same download posted by hand (${bandwidth(dl)} MiB/s)`, dl, ours, ratio, 'bandwidth ratio (>= 0.9 wanted)']);
  const [buf, ours2, ratio2] = await paired((swap) => timeBoth(swap, (once) => roundTrip(5, once), rawBuffer, fetchOnce));
  rows.push([`fetch a 16 MiB GPU tensor vs postMessage of a transferred 16 MiB ArrayBuffer (${bandwidth(buf)} MiB/s)`, buf, ours2, ratio2, 'bandwidth ratio (GPU download included on our side)']);
}
{
  // A CPU tensor result kept in the worker: data() copies it out of wasm
  // memory there and transfers the copy; the baseline posts a fresh buffer
  // of the same size, transferred (allocation + postMessage, no copy).
  const cpuBig = await remote.tensor(bigData, { shape: [BIG] });
  const fetchCpu = async () => {
    const d = await cpuBig.data();
    if (d.length !== BIG) throw new Error('short fetch');
  };
  const rawBuffer = async () => {
    const r = await raw({ raw: 'buffer', bytes: BIG * 4 });
    if (r.data.length !== BIG * 4) throw new Error('short buffer');
  };
  const [buf, ours, ratio] = await paired((swap) => timeBoth(swap, (once) => roundTrip(5, once), rawBuffer, fetchCpu));
  rows.push([`fetch a 16 MiB CPU tensor (${bandwidth(ours)} MiB/s) vs postMessage of a transferred 16 MiB ArrayBuffer (${bandwidth(buf)} MiB/s)`, buf, ours, ratio, 'bandwidth ratio (>= 0.9 wanted)']);
  cpuBig.dispose();
}
big.dispose();
ta.dispose();
tb.dispose();

/** The main thread's longest gap between timer ticks (1 ms timers) while `job` runs. */
async function lagDuring(job) {
  let last = performance.now();
  let worst = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
    ticks++;
  }, 1);
  try {
    const out = await job();
    return { worst, ticks, out };
  } finally {
    clearInterval(timer);
  }
}
const JOB = [256, 20];
const idle = await lagDuring(() => new Promise((resolve) => setTimeout(resolve, 1000)));
const busy = await lagDuring(() => remote.session.call('bench.long_job', JOB));
// The same job on the main thread, for comparison (WebGPU through the runtime here).
await rt.backends.ensure('webgpu');
const localMatmul = rt.getGlobal('webgpu.matmul');
const onMain = await lagDuring(async () => {
  const [n, rounds] = JOB;
  const cpu = rt.tensor(new Float32Array(n * n).fill(1 / n), { shape: [n, n] });
  let x = await cpu.toDevice('webgpu');
  cpu.dispose();
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) {
    const y = localMatmul(x, x);
    x.dispose();
    x = y;
    await rt.backends.get('webgpu').engine.sync();
  }
  await x.data();
  x.dispose();
  return [performance.now() - t0];
});
const what = `${JOB[1]} chained ${JOB[0]}x${JOB[0]} matmuls`;
const lagRows = [
  ['idle for 1 s', idle.worst, idle.ticks],
  [`during a ${busy.out[0].toFixed(0)} ms GPU job in the worker (${what})`, busy.worst, busy.ticks],
  [`during the same job on the main thread (${onMain.out[0].toFixed(0)} ms)`, onMain.worst, onMain.ticks],
];
rt.backends.get('webgpu').engine.dispose();
remote.close();

console.log('| operation | raw postMessage ns/op | webffi ns/op | ratio | |');
console.log('|---|---:|---:|---:|---|');
for (const [name, raw, ours, ratio, what] of rows) {
  console.log(`| ${name} | ${raw.toFixed(0)} | ${ours.toFixed(0)} | ${ratio.toFixed(2)} | ${what} |`);
}
console.log('');
console.log('| main thread | longest gap between 1 ms timer ticks | ticks |');
console.log('|---|---:|---:|');
for (const [name, worst, ticks] of lagRows) console.log(`| ${name} | ${worst.toFixed(1)} ms | ${ticks} |`);
process.exit(0);
