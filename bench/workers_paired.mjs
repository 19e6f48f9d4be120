// The worker rows with a hand-written floor (bench/workers.bench.mjs), for
// two builds of the runtime in one process: this tree's and another
// checkout's (e.g. the main before a change), each with its own workers,
// beside the floor, timed in rounds that rotate the order of the three.
//   error by value: throughput of an error raised in C sent to a worker
//     that decodes it, against posting its fields as a plain object;
//   remote add_one(1): session round trips against a raw ping-pong;
//   remote webgpu.matmul 64x64 -> remote GPU tensor: against a hand-written
//     postMessage protocol doing the same work in the same worker.
// Each row twice: by wall time (what the goal is set in) and by the
// process's CPU time (both threads), which a loaded machine disturbs less.
// Run: node bench/workers_paired.mjs OTHER_CHECKOUT [rounds] [rows: error,add_one,matmul]
import { Worker } from 'node:worker_threads';
import { median, quantile, rawRequests } from './paired.mjs';

const otherRoot = process.argv[2];
if (!otherRoot) throw new Error('usage: node bench/workers_paired.mjs OTHER_CHECKOUT [rounds] [rows]');
const rounds = Number(process.argv[3] ?? 15);
const only = (process.argv[4] ?? 'error,add_one,matmul').split(',');
process.env.EGL_PLATFORM ??= 'surfaceless';

const BATCH = 2000;
const workerUrl = new URL('./workers_worker.mjs', import.meta.url);
const sides = [
  { tag: 'ours', root: null, js: new URL('../js/', import.meta.url).href },
  { tag: 'other', root: otherRoot, js: `file://${otherRoot.replace(/\/$/, '')}/js/` },
];
for (const s of sides) {
  s.mod = await import(`${s.js}index.js`);
  s.rt = await (await import(`${s.js}testing.js`)).loadTesting(await s.mod.load());
}
const spawn = (role, root) => new Worker(workerUrl, { workerData: { role, batch: BATCH, root } });
const nextMessage = (w) => new Promise((resolve) => w.once('message', resolve));
/** After a burst of messages the next pair of threads to talk runs slower for a while on this VM; 50 ms idle ends that. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/**
 * [wall ns, CPU ns] per operation of a block. The CPU time is the process's
 * (every thread: the sender and the worker alike), which other processes on
 * a loaded machine do not inflate as they do the wall time.
 */
function perOp(t0, c0, n) {
  const c = process.cpuUsage(c0);
  return [((performance.now() - t0) * 1e6) / n, ((c.user + c.system) * 1e3) / n];
}

/** Per message sent with send() until the sink has BATCH. */
async function batch(sink, send) {
  await settle();
  sink.postMessage({ batch: 0 });
  const done = nextMessage(sink);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < BATCH; i++) send();
  await done;
  return perOp(t0, c0, BATCH);
}

/** Per sequential round trip over n calls of once(). */
async function roundTrip(n, once) {
  await settle();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await once();
  return perOp(t0, c0, n);
}

/**
 * Rounds timing the floor, ours and other's with time(body), the order
 * rotated each round (a warm-up round first); per-round ratios to the floor
 * and ours/other.
 */
async function rotated(time, bodies) {
  const wall = bodies.map(() => []);
  const cpu = bodies.map(() => []);
  for (let r = 0; r <= rounds; r++) {
    const round = [];
    for (let i = 0; i < bodies.length; i++) {
      const k = (i + r) % bodies.length;
      round[k] = await time(bodies[k]);
    }
    if (r > 0) {
      round.forEach(([w, c], k) => {
        wall[k].push(w);
        cpu[k].push(c);
      });
    }
  }
  return { wall, cpu };
}

const rows = [];
/** Rows (wall time, CPU time) from the floor's, ours and other's; `sense` 'time' (lower is better) or 'throughput'. */
function row(name, { wall, cpu }, sense) {
  const q = (xs) => `${median(xs).toFixed(2)} [${quantile(xs, 0.1).toFixed(2)}-${quantile(xs, 0.9).toFixed(2)}]`;
  for (const [what, [floor, ours, other]] of [['wall', wall], ['CPU', cpu]]) {
    const vsFloor = (xs) => xs.map((v, i) => (sense === 'time' ? v / floor[i] : floor[i] / v));
    rows.push([`${name}, ${what}`, median(floor), median(ours), median(other), q(vsFloor(ours)), q(vsFloor(other)),
      q(ours.map((v, i) => v / other[i])), sense]);
  }
}

if (only.includes('error')) {
  const fields = (e) => ({ kind: e.kind, message: e.message, backtrace: e.backtrace });
  const sinks = [];
  const sends = [];
  for (const s of sides) {
    let e;
    try {
      s.rt.getGlobal('testing.test_raise_error')('ValueError', 'a message of some length, as errors have');
    } catch (caught) {
      e = caught;
    }
    const sink = spawn('sink', s.root);
    sinks.push(sink);
    s.error = e;
    sends.push(() => sink.postMessage({ encoded: true, data: s.mod.encodeValue(e) }));
  }
  const plain = fields(sides[0].error);
  const floorSink = sinks[0];
  const bodies = [[floorSink, () => floorSink.postMessage({ encoded: false, data: plain })], [sinks[0], sends[0]], [sinks[1], sends[1]]];
  row('error raised in C, by value to a worker (throughput)', await rotated(([sink, send]) => batch(sink, send), bodies), 'throughput');
  for (const w of sinks) await w.terminate();
}

if (only.includes('add_one')) {
  const echo = spawn('echo');
  let id = 0;
  const rawPing = () => {
    const reply = nextMessage(echo);
    echo.postMessage({ wrpc: 'call', id: ++id, name: 'testing.add_one', args: [1] });
    return reply;
  };
  const calls = [];
  const sessions = [];
  for (const s of sides) {
    const session = await s.mod.connect(spawn('server', s.root));
    sessions.push(session);
    calls.push(() => session.call('testing.add_one', [1]));
  }
  row('remote add_one(1), round trip', await rotated((once) => roundTrip(2000, once), [rawPing, ...calls]), 'time');
  for (const session of sessions) session.close();
  await echo.terminate();
}

if (only.includes('matmul')) {
  const N = 64;
  const A = new Float32Array(N * N).fill(0.5);
  const bodies = [];
  const remotes = [];
  for (const s of sides) {
    const worker = spawn('gpu', s.root);
    const remote = await s.mod.connectRuntime(worker, { timeout: 120000 });
    remotes.push(remote);
    const ta = await remote.tensor(A, { shape: [N, N], device: 'webgpu' });
    const tb = await remote.tensor(A, { shape: [N, N], device: 'webgpu' });
    const matmul = remote.getGlobal('webgpu.matmul');
    s.matmul = async () => {
      const c = await matmul(ta, tb);
      c.dispose();
    };
    s.worker = worker;
  }
  // The hand-written protocol, served by our worker beside its session.
  const gpuWorker = sides[0].worker;
  const raw = rawRequests(gpuWorker);
  const ra = (await raw({ raw: 'tensor', data: A, shape: [N, N] })).ref;
  const rb = (await raw({ raw: 'tensor', data: A, shape: [N, N] })).ref;
  const rawMatmul = async () => {
    const r = await raw({ raw: 'matmul', a: ra, b: rb });
    gpuWorker.postMessage({ raw: 'free', ref: r.ref });
  };
  row(`remote webgpu.matmul ${N}x${N} -> remote GPU tensor, round trip`,
    await rotated((once) => roundTrip(300, once), [rawMatmul, sides[0].matmul, sides[1].matmul]), 'time');
  for (const remote of remotes) remote.close();
}

console.log(`paired in one process, ${rounds} rounds, other = ${otherRoot}; ratios: median [10th-90th percentile] of per-round ratios`);
console.log('| row | floor ns/op | ours ns/op | other ns/op | ours vs floor | other vs floor | ours / other (time) |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const [name, f, o, b, rf, bf, ob, sense] of rows) {
  const what = sense === 'time' ? 'x the floor\'s time' : 'x the floor\'s throughput';
  console.log(`| ${name} | ${f.toFixed(0)} | ${o.toFixed(0)} | ${b.toFixed(0)} | ${rf} ${what} | ${bf} | ${ob} |`);
}
process.exit(0);
