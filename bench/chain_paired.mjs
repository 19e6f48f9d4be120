// Kernel chains through two builds of the runtime in one process (this
// tree's and another checkout's, e.g. the main before a change) beside the
// raw WebGPU pipeline, in alternating rounds, so the three share the
// machine's noise. Each chain's CPU time per dispatch is the synchronous
// time before its readback is pending, less the time inside queue.submit,
// over N (as bench/chain_bench.mjs reports it). Results are compared bit
// for bit. Run: node bench/chain_paired.mjs OTHER_CHECKOUT [rounds]
import { chainCases, jsChain, rawChain, submitTimer } from './chain_bench.mjs';
import { randomFloats } from './webgpu_bench.mjs';
import { median } from './paired.mjs';

const otherRoot = process.argv[2];
if (!otherRoot) throw new Error('usage: node bench/chain_paired.mjs OTHER_CHECKOUT [rounds]');
const rounds = Number(process.argv[3] ?? 15);
const quiet = { logger: { log() {}, warn() {} } };
const other = await (await import(`file://${otherRoot.replace(/\/$/, '')}/js/index.js`)).load(quiet);
const ours = await (await import('../js/index.js')).load(quiet);
const deviceOf = async (rt) => (await rt.backends.ensure('webgpu')).engine.device;
const devices = [await deviceOf(other), await deviceOf(ours)];
const timers = devices.map(submitTimer); // one prototype: the first wraps, the second wraps the wrapper
const numel = (s) => s.reduce((a, b) => a * b, 1);
const lengths = (process.env.CHAIN_LENGTHS ?? '10,100').split(',').map(Number);
const only = process.env.CHAIN_CASES?.split(',');

console.log(`paired in one process, ${rounds} rounds, other = ${otherRoot}`);
console.log('| chain | CPU us/dispatch: other | ours | raw | us/kernel: other | ours | raw | ours/raw (us/kernel) | other/raw | ours/other | same |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const c of chainCases()) {
  if (only && !only.includes(c.name)) continue;
  const x0 = randomFloats(numel(c.shape));
  const sides = [jsChain(other, c, x0), jsChain(ours, c, x0), rawChain(devices[1], c, x0)];
  const outs = sides.map(() => new Float32Array(numel(c.shape)));
  for (const n of lengths) {
    await Promise.all(sides.map((f, i) => f(n, outs[i])));
    const same = outs.every((o) => o.every((v, i) => Object.is(v, outs[2][i])));
    const cpu = sides.map(() => []);
    const ms = sides.map(() => []);
    const ratio = [];
    const toRaw = [[], []]; // other / raw, ours / raw, per round
    const iters = Math.max(2, Math.ceil(200 / n));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [2, 1, 0] : [0, 1, 2];
      const t = [];
      for (const i of order) {
        const f = sides[i];
        await f(n, outs[i]);
        let sync = 0;
        let total = 0;
        const submitted = timers[1].ms;
        for (let k = 0; k < iters; k++) {
          const t0 = performance.now();
          const p = f(n, outs[i]);
          sync += performance.now() - t0;
          await p;
          total += performance.now() - t0;
        }
        cpu[i].push(((sync - (timers[1].ms - submitted)) * 1000) / iters / n);
        ms[i].push((total * 1000) / iters / n);
        t[i] = total;
      }
      ratio.push(t[1] / t[0]);
      toRaw[0].push(t[0] / t[2]);
      toRaw[1].push(t[1] / t[2]);
    }
    const f = (v) => median(v).toFixed(1);
    console.log(`| ${c.name} x${n} | ${f(cpu[0])} | ${f(cpu[1])} | ${f(cpu[2])} | ${f(ms[0])} | ${f(ms[1])} | ${f(ms[2])} | ${median(toRaw[1]).toFixed(2)} | ${median(toRaw[0]).toFixed(2)} | ${median(ratio).toFixed(2)} | ${same ? 'yes' : 'NO'} |`);
  }
  for (const s of sides) s.dispose?.();
}
for (const t of timers.reverse()) t.restore();
process.exit(0);
