// The CPU cost of one kernel call through the runtime (webgpu.add of 1K
// floats from JS, its output disposed), excluding the GPU's work: blocks of
// calls recorded without a submit (the batch submits when the task ends),
// timed for two builds of the runtime in one process (this tree's and
// another checkout's) in alternating rounds, beside the same dispatches
// recorded through raw WebGPU calls. Run:
//   node bench/dispatch_paired.mjs OTHER_CHECKOUT [rounds]
import { median } from './paired.mjs';
import { chainCases, rawChain, submitTimer } from './chain_bench.mjs';

const otherRoot = process.argv[2];
if (!otherRoot) throw new Error('usage: node bench/dispatch_paired.mjs OTHER_CHECKOUT [rounds]');
const rounds = Number(process.argv[3] ?? 41);
const quiet = { logger: { log() {}, warn() {} } };
const N = 100; // calls per block (under the batch's 256 dispatches per submit)

async function side(mod, tag) {
  const rt = await mod.load(quiet);
  const engine = (await rt.backends.ensure('webgpu')).engine;
  const add = rt.getGlobal('webgpu.add');
  const x = rt.empty([1024], 'float32', 'webgpu').set(new Float32Array(1024).fill(1));
  const w = rt.empty([1024], 'float32', 'webgpu').set(new Float32Array(1024).fill(2));
  const out = new Float32Array(1024);
  // a distinct loop per side (no shared feedback)
  const loop = new Function('add', 'x', 'w', 'n', `// ${tag}
    let y = add(x, w);
    for (let i = 1; i < n; i++) { const z = add(y, w); y.dispose(); y = z; }
    return y;`);
  return {
    engine,
    async run(check = false) {
      const t0 = performance.now();
      const y = loop(add, x, w, N);
      const t = ((performance.now() - t0) * 1000) / N;
      // the work submitted and done (a readback of y itself only when checking:
      // the calls right after one time erratically on llvmpipe)
      if (check) {
        await y.data(out);
        if (out[0] !== 1 + 2 * N) throw new Error(`${tag}: wrong result ${out[0]}`);
      } else {
        await engine.sync();
      }
      y.dispose();
      return t;
    },
  };
}

const a = await side(await import(`file://${otherRoot.replace(/\/$/, '')}/js/index.js`), 'other');
const b = await side(await import('../js/index.js'), 'ours');
// raw: the same 100 dispatches recorded through WebGPU directly (pipeline and bind groups made once)
const c = chainCases()[0];
const raw = rawChain(b.engine.device, c, new Float32Array(1024));
const rawOut = new Float32Array(1024);
const timer = submitTimer(b.engine.device);
const rawSide = {
  async run() {
    // the recording only: the time inside queue.submit is taken out
    const submitted = timer.ms;
    const t0 = performance.now();
    const p = raw(N, rawOut);
    const t = ((performance.now() - t0 - (timer.ms - submitted)) * 1000) / N;
    await p;
    return t;
  },
};
const sides = [a, b, rawSide];
for (let i = 0; i < 5; i++) for (const s of sides) await s.run(true);
const t = sides.map(() => []);
const ratio = [];
const toRaw = [[], []]; // other / raw, ours / raw, per round
for (let r = 0; r < rounds; r++) {
  const order = [[0, 1, 2], [2, 1, 0], [1, 0, 2], [2, 0, 1]][r % 4];
  const got = [];
  for (const i of order) got[i] = await sides[i].run();
  got.forEach((v, i) => t[i].push(v));
  ratio.push(got[1] / got[0]);
  toRaw[0].push(got[0] / got[2]);
  toRaw[1].push(got[1] / got[2]);
}
const q = (xs, f) => [...xs].sort((u, v) => u - v)[Math.floor(f * (xs.length - 1))];
console.log(`CPU us per kernel call (add 1K, chained, output disposed), ${rounds} paired rounds, other = ${otherRoot}`);
console.log(`other ${median(t[0]).toFixed(2)}  ours ${median(t[1]).toFixed(2)}  raw recording ${median(t[2]).toFixed(2)}  ours/other ${median(ratio).toFixed(3)} (p25-p75 ${q(ratio, 0.25).toFixed(2)}-${q(ratio, 0.75).toFixed(2)})`);
console.log(`against the raw recording (its floor): ours ${median(toRaw[1]).toFixed(2)}x (p25-p75 ${q(toRaw[1], 0.25).toFixed(2)}-${q(toRaw[1], 0.75).toFixed(2)}), other ${median(toRaw[0]).toFixed(2)}x`);
timer.restore();
a.engine.dispose();
b.engine.dispose();
process.exit(0);
