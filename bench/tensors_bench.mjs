// Tensor benchmarks through the runtime, shared by Node (Dawn) and Chromium
// (bench/tensors.html). Baselines come from the same run:
// - each kernel end to end through the runtime (tensor.set() uploads, the
//   `webgpu.*` global, `await out.data(buf)`) against a hand-written raw
//   WebGPU pipeline doing the same work (bench/webgpu_bench.mjs rawKernel);
// - upload/download bandwidth against raw writeBuffer / mapAsync;
// - a zero-copy CPU view of 1 KiB against one of 64 MiB;
// - copying a typed array into a CPU tensor against TypedArray.set;
// - matmul 1024x1024x1024 with the data on the device, GFLOP/s.
import { compare, kernelCases, bandwidthRows, randomFloats, BANDWIDTH_BYTES, rawKernel, kernelRow, formatKernelRows, gpuCalls, formatGPUCalls, formatBandwidthRows, adapterName } from './webgpu_bench.mjs';

const numel = (shape) => shape.reduce((x, y) => x * y, 1);

/** Best ns per call of fn over `rounds` rounds of `iters` calls (synchronous). */
function nsPerCall(fn, iters, rounds = 5) {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < iters; i++) fn();
    best = Math.min(best, ((performance.now() - t0) * 1e6) / iters);
  }
  return best;
}

export async function runTensorBench(rt, { quick = false } = {}) {
  const backend = await rt.backends.ensure('webgpu');
  const engine = backend.engine;
  const info = engine.info();
  const device = engine.device;
  const rounds = quick ? 2 : 24;
  const rows = [];
  const fn = (name) => rt.getGlobal(name);
  const cases = kernelCases();
  let calls; // the WebGPU calls of add 1K on both sides
  for (const { name, global, inputs, shapes, extra, outShape, code, params, groups } of cases) {
    const kernel = fn(global);
    const tensors = inputs.map((_, i) => rt.empty(shapes[i], 'float32', 'webgpu'));
    const result = new Float32Array(numel(outShape));
    const ours = async () => {
      for (let i = 0; i < inputs.length; i++) tensors[i].set(inputs[i]);
      const out = kernel(...tensors, ...extra);
      await out.data(result);
      out.dispose();
      return new Uint8Array(result.buffer);
    };
    const raw = rawKernel(device, code, inputs, result.byteLength, params, groups);
    const a = (await ours()).slice();
    const b = await raw();
    const same = a.every((v, i) => v === b[i]);
    rows.push(kernelRow(name, await compare(ours, raw, quick ? 1 : undefined, rounds), same));
    if (name === 'add 1K') calls = { ours: await gpuCalls(device, ours, 200), raw: await gpuCalls(device, raw, 200) };
    for (const t of tensors) t.dispose();
    kernel.dispose();
  }

  // Bandwidth through tensors, 16 MiB per transfer.
  const g = rt.empty([BANDWIDTH_BYTES], 'uint8', 'webgpu');
  const bandwidth = await bandwidthRows(device, {
    upload: (host) => g.set(host),
    sync: () => engine.sync(),
    download: (sink) => g.data(sink),
  }, ['upload 16 MiB (tensor.set)', 'download 16 MiB (await tensor.data(out))'], quick, rounds);
  g.dispose();

  // CPU: zero-copy views and copies into the wasm heap.
  const tiny = rt.empty([256], 'float32');
  const huge = rt.empty([16 << 20], 'float32');
  const iters = quick ? 20000 : 200000;
  const viewTiny = nsPerCall(() => tiny.view(), iters, rounds);
  const viewHuge = nsPerCall(() => huge.view(), iters, rounds);
  const src = randomFloats(16 << 20);
  const dst = new Float32Array(16 << 20);
  const copyIters = quick ? 2 : 5;
  let setMs = Infinity;
  let baseMs = Infinity;
  for (let r = 0; r < rounds; r++) {
    setMs = Math.min(setMs, nsPerCall(() => huge.set(src), copyIters, 1) / 1e6);
    baseMs = Math.min(baseMs, nsPerCall(() => dst.set(src), copyIters, 1) / 1e6);
  }
  const cpu = {
    viewTinyNs: viewTiny, viewHugeNs: viewHuge, viewRatio: viewHuge / viewTiny,
    setGBs: src.byteLength / setMs / 1e6, baseGBs: src.byteLength / baseMs / 1e6, setRatio: baseMs / setMs,
  };
  tiny.dispose();
  huge.dispose();

  // matmul 1024: through the runtime, inputs resident, results stay on the device.
  const N = 1024;
  const a = rt.empty([N, N], 'float32', 'webgpu').set(randomFloats(N * N));
  const matmul = fn('webgpu.matmul');
  const reps = quick ? 1 : 3;
  let mmMs = Infinity;
  for (let r = 0; r < (quick ? 1 : 3); r++) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) matmul(a, a).dispose();
    await engine.sync();
    mmMs = Math.min(mmMs, (performance.now() - t0) / reps);
  }
  a.dispose();
  return { adapter: adapterName(info), featureLevel: info.featureLevel, rows, calls, bandwidth, cpu, matmul1024: { ms: mmMs, gflops: (2 * N ** 3) / mmMs / 1e6 } };
}

export function formatTensorBench(label, r) {
  const lines = [`== ${label}: ${r.adapter} (${r.featureLevel})`];
  formatKernelRows(lines, 'kernel end to end through the runtime, ms', r.rows);
  formatGPUCalls(lines, 'WebGPU calls of add 1K: runtime / raw', r.calls);
  formatBandwidthRows(lines, 'runtime', r.bandwidth);
  const c = r.cpu;
  lines.push(`CPU view(): 1 KiB ${c.viewTinyNs.toFixed(0)} ns, 64 MiB ${c.viewHugeNs.toFixed(0)} ns (ratio ${c.viewRatio.toFixed(2)}x)`);
  lines.push(`CPU tensor.set(64 MiB): ${c.setGBs.toFixed(2)} GB/s vs TypedArray.set ${c.baseGBs.toFixed(2)} GB/s (ratio ${c.setRatio.toFixed(2)}x)`);
  lines.push(`matmul 1024x1024x1024 through the runtime: ${r.matmul1024.ms.toFixed(1)} ms, ${r.matmul1024.gflops.toFixed(2)} GFLOP/s`);
  return lines.join('\n');
}
