// The tensor benchmark's rows (bench/tensors_bench.mjs) for two builds of
// the runtime loaded in one process (this tree's and another checkout's,
// e.g. the main before a change), in alternating paired rounds, so both
// share the machine's noise: kernels end to end through the runtime
// (inputs uploaded with set(), the `webgpu.*` global, `await out.data(buf)`),
// 16 MiB upload and download, CPU view() and set(), a borrowed DLTensor*'s
// view() in a callback. Each side's results are
// compared bit for bit with the other's.
// Run: node bench/tensors_paired.mjs OTHER_CHECKOUT [rounds]
import { median, quantile } from './paired.mjs';
import { kernelCases, randomFloats } from './webgpu_bench.mjs';

const otherRoot = process.argv[2];
if (!otherRoot) throw new Error('usage: node bench/tensors_paired.mjs OTHER_CHECKOUT [rounds]');
const rounds = Number(process.argv[3] ?? 15);
const quiet = { logger: { log() {}, warn() {} } };
const numel = (shape) => shape.reduce((x, y) => x * y, 1);
const MIB16 = 16 << 20;

async function rowsOf(mod) {
  const rt = await mod.load(quiet);
  await rt.backends.ensure('webgpu');
  const rows = [];
  for (const { name, global, inputs, shapes, extra, outShape } of kernelCases()) {
    if (/matmul 1024/.test(name)) continue;
    const kernel = rt.getGlobal(global);
    const tensors = inputs.map((_, i) => rt.empty(shapes[i], 'float32', 'webgpu'));
    const result = new Float32Array(numel(outShape));
    rows.push([`${name} end to end`, 1, async () => {
      for (let i = 0; i < inputs.length; i++) tensors[i].set(inputs[i]);
      const out = kernel(...tensors, ...extra);
      await out.data(result);
      out.dispose();
      return result;
    }]);
  }
  const g = rt.empty([MIB16], 'uint8', 'webgpu');
  const host = new Uint8Array(MIB16).fill(3);
  const sink = new Uint8Array(MIB16);
  const engine = rt.backends.get('webgpu').engine;
  rows.push(['upload 16 MiB (tensor.set + sync)', 1, async () => {
    g.set(host);
    await engine.sync();
  }]);
  rows.push(['download 16 MiB (await tensor.data(out))', 1, async () => {
    await g.data(sink);
    return sink;
  }]);
  const tiny = rt.empty([256], 'float32');
  const huge = rt.empty([16 << 20], 'float32');
  const src = randomFloats(16 << 20);
  const loopOf = (f) => new Function('f', 'n', 'for (let i = 0; i < n; i++) f();');
  const l1 = loopOf();
  const l2 = loopOf();
  rows.push(['CPU view() of 1 KiB', 200000, () => l1(() => tiny.view(), 200000)]);
  rows.push(['CPU view() of 64 MiB', 200000, () => l2(() => huge.view(), 200000)]);
  rows.push(['CPU tensor.set(64 MiB)', 1, () => {
    huge.set(src);
  }]);
  // A C kernel's DLTensor* in a JS callback, read through view() (borrowed
  // for the call): this tree's fixtures in both runtimes, so the C is the same.
  (await rt.loadModule(new URL('../dist/webffi_testing.wasm', import.meta.url))).dispose();
  const withDLTensor = rt.getGlobal('testing.call_with_dltensor');
  const reader = rt.toFFI((dl) => dl.view()[3]);
  const l3 = loopOf();
  rows.push(['DLTensor* view() in a callback (C -> JS, 4 floats)', 100000, () => l3(() => withDLTensor(reader), 100000)]);
  return rows;
}

const a = await rowsOf(await import(`file://${otherRoot.replace(/\/$/, '')}/js/index.js`));
const b = await rowsOf(await import('../js/index.js'));
const time = async (f, n) => {
  const t0 = performance.now();
  await f();
  return ((performance.now() - t0) * 1000) / n;
};
console.log(`paired in one process, ${rounds} rounds, other = ${otherRoot}`);
console.log('| row | other us (median) | ours us (median) | ours/other (median of rounds) | p25-p75 | same result |');
console.log('|---|---:|---:|---:|---:|---|');
for (let r = 0; r < a.length; r++) {
  const [name, n, fa] = a[r];
  const fb = b[r][2];
  if (process.env.ROWS && !process.env.ROWS.split(',').some((k) => name.includes(k))) continue;
  const ra = await fa();
  const rb = await fb();
  const same = ra === undefined || (ra.length === rb.length && new Uint8Array(ra.buffer, ra.byteOffset, ra.byteLength)
    .every((v, i) => v === new Uint8Array(rb.buffer, rb.byteOffset, rb.byteLength)[i]));
  const ta = [];
  const tb = [];
  const ratio = [];
  for (let i = 0; i < rounds; i++) {
    let x;
    let y;
    if (i % 2) {
      y = await time(fb, n);
      x = await time(fa, n);
    } else {
      x = await time(fa, n);
      y = await time(fb, n);
    }
    ta.push(x);
    tb.push(y);
    ratio.push(y / x);
  }
  console.log(`| ${name} | ${median(ta).toFixed(2)} | ${median(tb).toFixed(2)} | ${median(ratio).toFixed(3)} | ${quantile(ratio, 0.25).toFixed(2)}-${quantile(ratio, 0.75).toFixed(2)} | ${same ? 'yes' : 'NO'} |`);
}
process.exit(0);
