// Values and errors by value between workers, and remote calls, against raw
// postMessage measured in the same run (Node worker_threads).
// Run: node bench/workers.bench.mjs
//   throughput: N messages main -> worker, the worker receiving (and, on the
//   by-value path, decoding) each; the by-value path also encodes each one.
//   round trip: one call at a time, awaiting each answer (a block of each per round).
// Every row: median over paired rounds of (baseline time / our time).
import { Worker } from 'node:worker_threads';
import { load, connect, encodeValue } from '../js/index.js';

const BATCH = 2000;
const ROUNDS = 15;
const workerUrl = new URL('./workers_worker.mjs', import.meta.url);
const rt = await load();

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

/** The median of a list of numbers. */
function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Runs ROUNDS paired rounds after one warm-up round; `round(swap)` times the
 * baseline and ours in one round, the first one first unless `swap` (which
 * alternates, so neither always runs on the other's leftovers: garbage, a
 * worker just woken). Each round gives one ratio, so a slow stretch of the
 * machine hits both sides of the ratio it spoils; the medians are reported.
 * @returns {[number, number, number]} median ns/op of the baseline, of ours, median of baseline/ours
 */
async function paired(round) {
  const base = [];
  const ours = [];
  const ratios = [];
  for (let i = 0; i <= ROUNDS; i++) {
    const [a, b] = await round(i % 2 === 1);
    if (i > 0) {
      base.push(a);
      ours.push(b);
      ratios.push(a / b);
    }
  }
  if (process.env.BENCH_DEBUG) console.error(base.map((x, i) => `${x.toFixed(0)}/${ours[i].toFixed(0)}`).join(' '));
  return [median(base), median(ours), median(ratios)];
}

/** [time(a), time(b)], b timed first when swap. */
async function timeBoth(swap, time, a, b) {
  if (swap) {
    const tb = await time(b);
    return [await time(a), tb];
  }
  const ta = await time(a);
  return [ta, await time(b)];
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

console.log('| operation | raw postMessage ns/op | webffi ns/op | ratio | |');
console.log('|---|---:|---:|---:|---|');
for (const [name, raw, ours, ratio, what] of rows) {
  console.log(`| ${name} | ${raw.toFixed(0)} | ${ours.toFixed(0)} | ${ratio.toFixed(2)} | ${what} |`);
}
process.exit(0);
