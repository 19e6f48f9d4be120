// WebGPU backend benchmarks, shared by Node (Dawn) and Chromium (bench/webgpu.html).
// Each kernel runs end to end (upload inputs, dispatch, read the result back)
// through the backend and through a hand-written raw WebGPU pipeline doing
// the same work with the same WGSL, bind group and staging buffer made once,
// so the ratio is the backend's own cost. Also: upload/download bandwidth
// against raw writeBuffer/mapAsync, and matmul 1024^3 GFLOP/s.
import { createWebGPUBackend } from '../js/backends/webgpu/index.js';
import { elementwiseWGSL, broadcastWGSL, matmulWGSL, reduceWGSL, softmaxWGSL, ELEMENTWISE_WG, MATMUL_TILE } from '../js/backends/webgpu/wgsl.js';
import { BufferUsage, MapMode } from '../js/backends/webgpu/gpu_flags.js';
import { median } from './paired.mjs';

const { STORAGE, COPY_SRC, COPY_DST, UNIFORM, MAP_READ } = BufferUsage;

/**
 * Per-call milliseconds of fn and of its baseline over `rounds` rounds, and
 * their ratio. Each round times a block of calls of one and then of the
 * other, each block starting with one untimed call, so what the previous
 * block left behind (the other pipeline's state in the driver) is not
 * charged to it. Rounds go in mirrored pairs (fn then baseline, baseline
 * then fn): on this machine the second block of a round often runs slower,
 * and a pair cancels that and any drift across it. `ratio` is the median
 * over pairs of fn's time over the baseline's; `ours`/`raw` hold each side's
 * median and best. A block runs `iters` calls, or without it as many as
 * take about BLOCK_MS (at least 3).
 */
export async function compare(fn, baseline, iters, rounds) {
  iters ??= await blockIters(fn, baseline);
  const ours = [];
  const base = [];
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [[baseline, base], [fn, ours]] : [[fn, ours], [baseline, base]];
    for (const [f, times] of order) {
      await f();
      times.push(await timeRound(f, iters));
    }
    if (r % 2) ratios.push((ours[r - 1] + ours[r]) / (base[r - 1] + base[r]));
  }
  return { ours: summary(ours), raw: summary(base), ratio: median(ratios.length ? ratios : [ours[0] / base[0]]) };
}

const BLOCK_MS = 100;

async function blockIters(fn, baseline) {
  await fn();
  await baseline();
  const ms = Math.max(await timeRound(fn, 1), await timeRound(baseline, 1));
  return Math.max(3, Math.ceil(BLOCK_MS / ms));
}


function summary(times) {
  return { median: median(times), best: Math.min(...times) };
}

async function timeRound(fn, iters) {
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) await fn();
  return (performance.now() - t0) / iters;
}

/** A table row from compare(): the paired ratio, and the ratio of the bests. */
export function kernelRow(name, { ours, raw, ratio }, same) {
  return { name, ours, raw, ratio, bestRatio: ours.best / raw.best, same };
}

/** A bandwidth row from compare(): GB/s from the medians, `times` transfers per call. */
export function bandwidthRow(name, { ours, raw, ratio }, gbps, times) {
  return { name, oursGBs: gbps(ours.median, times), rawGBs: gbps(raw.median, times), ratio: 1 / ratio };
}

/** Kernel rows as text: median ms of ours and raw and their paired ratio, then the bests and their ratio. */
export function formatKernelRows(lines, heading, rows) {
  lines.push(`${heading.padEnd(44)} ${'median: ours'.padStart(12)} ${'raw'.padStart(9)} ${'ratio'.padStart(7)}  ${'best: ours'.padStart(10)} ${'raw'.padStart(9)} ${'ratio'.padStart(7)}`);
  const ms = (v) => v.toFixed(3).padStart(9);
  for (const row of rows) {
    lines.push(`  ${row.name.padEnd(42)}    ${ms(row.ours.median)} ${ms(row.raw.median)} ${row.ratio.toFixed(2).padStart(6)}x     ${ms(row.ours.best)} ${ms(row.raw.best)} ${row.bestRatio.toFixed(2).padStart(6)}x${row.same ? '' : '  (results differ!)'}`);
  }
}

/** Bandwidth rows as text; `who` names our side ('backend' or 'runtime'). */
export function formatBandwidthRows(lines, who, rows) {
  lines.push(`bandwidth (medians)                         ${who} GB/s  raw GB/s  ${who}/raw`);
  for (const b of rows) {
    lines.push(`  ${b.name.padEnd(42)} ${b.oursGBs.toFixed(2).padStart(10)} ${b.rawGBs.toFixed(2).padStart(9)} ${b.ratio.toFixed(2).padStart(8)}x`);
  }
}

/** The adapter as one line of text, from a backend's info(). */
export function adapterName(info) {
  const a = info.adapter;
  return `${a.vendor} ${a.architecture} ${a.device} ${a.description}`.trim();
}

/**
 * The WebGPU calls `fn` makes, counted and timed over `iters` calls: per
 * method, calls per fn call, microseconds inside the call and, for a
 * promise, until it settles. The methods are wrapped on the prototypes of
 * the device, queue, buffers, encoders and passes, and restored after.
 */
export async function gpuCalls(device, fn, iters) {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  const buffer = device.createBuffer({ size: 4, usage: COPY_DST });
  const methods = [
    [device, ['createBuffer', 'createBindGroup', 'createCommandEncoder', 'pushErrorScope', 'popErrorScope']],
    [device.queue, ['writeBuffer', 'submit', 'onSubmittedWorkDone']],
    [buffer, ['mapAsync', 'getMappedRange', 'unmap', 'destroy']],
    [encoder, ['beginComputePass', 'copyBufferToBuffer', 'finish']],
    [pass, ['setPipeline', 'setBindGroup', 'dispatchWorkgroups', 'end']],
  ];
  pass.end();
  encoder.finish();
  buffer.destroy();
  const stats = new Map();
  const restore = [];
  for (const [object, names] of methods) {
    const proto = Object.getPrototypeOf(object);
    for (const name of names) {
      const method = proto[name];
      const s = { name, calls: 0, ms: 0, settleMs: 0 };
      stats.set(name, s);
      restore.push(() => { proto[name] = method; });
      proto[name] = function (...args) {
        const t0 = performance.now();
        const r = method.apply(this, args);
        s.calls++;
        s.ms += performance.now() - t0;
        if (r instanceof Promise) r.finally(() => { s.settleMs += performance.now() - t0; }).catch(() => {});
        return r;
      };
    }
  }
  try {
    for (let i = 0; i < iters; i++) await fn();
  } finally {
    for (const r of restore) r();
  }
  return [...stats.values()].filter((s) => s.calls).map((s) => ({
    name: s.name, perCall: s.calls / iters, us: (s.ms * 1000) / s.calls, settleUs: (s.settleMs * 1000) / s.calls,
  }));
}

/** gpuCalls() of ours and raw side by side, as text. */
export function formatGPUCalls(lines, heading, { ours, raw }) {
  lines.push(`${heading.padEnd(44)} ${'per op: ours'.padStart(12)} ${'raw'.padStart(5)}  ${'us in call: ours'.padStart(16)} ${'raw'.padStart(6)}  ${'us to settle: ours'.padStart(18)} ${'raw'.padStart(6)}`);
  const none = { perCall: 0, us: 0, settleUs: 0 };
  const byName = (list, name) => list.find((c) => c.name === name) ?? none;
  for (const name of new Set([...ours, ...raw].map((c) => c.name))) {
    const a = byName(ours, name);
    const b = byName(raw, name);
    const settle = a.settleUs || b.settleUs ? `${a.settleUs.toFixed(1).padStart(18)} ${b.settleUs.toFixed(1).padStart(6)}` : '';
    lines.push(`  ${name.padEnd(42)} ${a.perCall.toFixed(2).padStart(12)} ${b.perCall.toFixed(2).padStart(5)}  ${a.us.toFixed(1).padStart(16)} ${b.us.toFixed(1).padStart(6)}  ${settle}`.trimEnd());
  }
}

/** Deterministic test data. */
export function randomFloats(n) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.sin(i) * 2;
  return out;
}

/** A raw pipeline: buffers, bind group and staging made once, reused per call. */
export function rawKernel(device, code, inputs, outBytes, params, groups) {
  const module = device.createShaderModule({ code });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const ins = inputs.map((data) => device.createBuffer({ size: data.byteLength, usage: STORAGE | COPY_DST }));
  const out = device.createBuffer({ size: outBytes, usage: STORAGE | COPY_SRC });
  const uniform = device.createBuffer({ size: 64, usage: UNIFORM | COPY_DST });
  const staging = device.createBuffer({ size: outBytes, usage: MAP_READ | COPY_DST });
  const entries = [...ins, out, uniform].map((buffer, binding) => ({ binding, resource: { buffer } }));
  const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
  const result = new Uint8Array(outBytes);
  return async () => {
    inputs.forEach((data, i) => device.queue.writeBuffer(ins[i], 0, data));
    device.queue.writeBuffer(uniform, 0, params);
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(groups[0], groups[1] ?? 1);
    pass.end();
    encoder.copyBufferToBuffer(out, 0, staging, 0, outBytes);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(MapMode.READ);
    result.set(new Uint8Array(staging.getMappedRange()));
    staging.unmap();
    return result;
  };
}

/** The same work through the backend: upload, kernel, download into a reused array. */
export function backendKernel(be, method, inputs, shapes, extra, outShape) {
  const tensors = inputs.map((data, i) => ({ data: be.allocate(data.byteLength), shape: shapes[i], dtype: 'float32' }));
  const n = outShape.reduce((x, y) => x * y, 1);
  const out = { data: be.allocate(n * 4), shape: outShape, dtype: 'float32' };
  const result = new Uint8Array(n * 4);
  return async () => {
    for (let i = 0; i < inputs.length; i++) be.upload(tensors[i].data, 0, inputs[i]);
    be[method](...tensors, ...extra, out);
    return be.download(out.data, 0, n * 4, result);
  };
}

function u32s(...words) {
  return new Uint32Array(words);
}

export const BANDWIDTH_BYTES = 16 << 20;

/**
 * Upload and download bandwidth of 16 MiB transfers: `ours` (upload(host),
 * sync(), download(sink)) against raw `writeBuffer` / `mapAsync` on the
 * same device. Returns the two rows, named by `names`.
 */
export async function bandwidthRows(device, ours, names, quick, rounds) {
  const bytes = BANDWIDTH_BYTES;
  const host = new Uint8Array(bytes).map((_, i) => i);
  const rawBuf = device.createBuffer({ size: bytes, usage: STORAGE | COPY_SRC | COPY_DST });
  const rawStaging = device.createBuffer({ size: bytes, usage: MAP_READ | COPY_DST });
  const sink = new Uint8Array(bytes);
  const k = quick ? 1 : 4;
  const upload = await compare(async () => {
    for (let i = 0; i < k; i++) ours.upload(host);
    await ours.sync();
  }, async () => {
    for (let i = 0; i < k; i++) device.queue.writeBuffer(rawBuf, 0, host);
    await device.queue.onSubmittedWorkDone();
  }, 1, rounds);
  const download = await compare(() => ours.download(sink), async () => {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(rawBuf, 0, rawStaging, 0, bytes);
    device.queue.submit([encoder.finish()]);
    await rawStaging.mapAsync(MapMode.READ);
    sink.set(new Uint8Array(rawStaging.getMappedRange()));
    rawStaging.unmap();
  }, quick ? 1 : k, rounds);
  rawBuf.destroy();
  rawStaging.destroy();
  const gbps = (ms, times = 1) => (bytes * times) / ms / 1e6;
  return [bandwidthRow(names[0], upload, gbps, k), bandwidthRow(names[1], download, gbps, 1)];
}

/**
 * The kernels both GPU benchmarks time, as rows of: name, engine method,
 * runtime global, inputs, input shapes, extra arguments, output shape, and
 * for the raw pipeline its WGSL, parameters and workgroup counts.
 */
export function kernelCases() {
  const NEG_INF = 0xff800000;
  const n = 1 << 20;
  const x = randomFloats(n);
  const y = randomFloats(n).map((v) => v + 3);
  const egroups = [Math.min(n / ELEMENTWISE_WG, 65535), Math.ceil(n / ELEMENTWISE_WG / 65535)];
  const ewParams = u32s(n, 0, 0, 0, egroups[0] * ELEMENTWISE_WG, 0);
  const scalarParams = new Uint32Array(6);
  scalarParams.set([n, 0, 0, 0, egroups[0] * ELEMENTWISE_WG]);
  new Float32Array(scalarParams.buffer)[5] = 1.5;
  const small = 1024;
  const mm = 256;
  const ma = randomFloats(mm * mm);
  const red = [1024, 1024];
  const rx = randomFloats(red[0] * red[1]);
  const sm = [512, 1024];
  const sx = randomFloats(sm[0] * sm[1]);
  const row = (name, method, inputs, shapes, extra, outShape, code, params, groups) =>
    ({ name, method, global: `webgpu.${method.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`, inputs, shapes, extra, outShape, code, params, groups });
  return [
    row('add 1K', 'add', [x.subarray(0, small), y.subarray(0, small)], [[small], [small]], [], [small],
      elementwiseWGSL('+', 'f32', false), u32s(small, 0, 0, 0, ELEMENTWISE_WG * 16, 0), [16]),
    row('add 1M', 'add', [x, y], [[n], [n]], [], [n], elementwiseWGSL('+', 'f32', false), ewParams, egroups),
    row('add 1M + 1K, broadcast', 'add', [x, y.subarray(0, small)], [[n / small, small], [small]], [], [n / small, small],
      broadcastWGSL('+', 'f32'), u32s(n, 0, 0, 0, egroups[0] * ELEMENTWISE_WG, 1, n / small, small, 0, 0, small, 1, 0, 0, 0, 1), egroups),
    row('div 1M', 'div', [x, y], [[n], [n]], [], [n], elementwiseWGSL('/', 'f32', false), ewParams, egroups),
    row('mul_scalar 1M', 'mulScalar', [x], [[n]], [1.5], [n], elementwiseWGSL('*', 'f32', true), scalarParams, egroups),
    row(`matmul ${mm}`, 'matmul', [ma, ma], [[mm, mm], [mm, mm]], [], [mm, mm], matmulWGSL('f32'),
      u32s(mm, mm, mm, 0, 0, 0), [mm / MATMUL_TILE, mm / MATMUL_TILE]),
    row('sum 1024x1024 axis 1', 'sum', [rx], [red], [1], [red[0]], reduceWGSL('sum', 'f32', 'f32'),
      u32s(red[0], red[1], 1, red[1], 1, 0, 0, red[0], NEG_INF), [red[0]]),
    row('max 1024x1024 axis 1', 'max', [rx], [red], [1], [red[0]], reduceWGSL('max', 'f32', 'f32'),
      u32s(red[0], red[1], 1, red[1], 1, 0, 0, red[0], NEG_INF), [red[0]]),
    row('softmax 512x1024', 'softmax', [sx], [sm], [], sm, softmaxWGSL('f32'), u32s(sm[0], sm[1], 0, 0, sm[0], NEG_INF), [sm[0]]),
  ];
}

export async function runWebGPUBench(gpu, { quick = false } = {}) {
  const be = createWebGPUBackend({ gpu });
  const info = await be.init();
  const device = be.device;
  const rounds = quick ? 2 : 24;
  const rows = [];
  const cases = kernelCases();
  let calls; // the WebGPU calls of add 1K on both sides
  for (const { name, method, inputs, shapes, extra, outShape, code, params, groups } of cases) {
    const ours = backendKernel(be, method, inputs, shapes, extra, outShape);
    const outBytes = outShape.reduce((p, q) => p * q, 1) * 4;
    const raw = rawKernel(device, code, inputs, outBytes, params, groups);
    const a = await ours();
    const b = await raw();
    const same = a.every((v, i) => v === b[i]);
    rows.push(kernelRow(name, await compare(ours, raw, quick ? 1 : undefined, rounds), same));
    if (name === 'add 1K') calls = { ours: await gpuCalls(device, ours, 200), raw: await gpuCalls(device, raw, 200) };
  }

  // Bandwidth, 16 MiB per transfer.
  const h = be.allocate(BANDWIDTH_BYTES);
  const bandwidth = await bandwidthRows(device, {
    upload: (host) => be.upload(h, 0, host),
    sync: () => be.sync(),
    download: (sink) => be.download(h, 0, BANDWIDTH_BYTES, sink),
  }, ['upload 16 MiB', 'download 16 MiB'], quick, rounds);

  // matmul 1024: compute only (inputs resident, results stay on the device).
  const N = 1024;
  const a = { data: be.allocate(N * N * 4), shape: [N, N], dtype: 'float32' };
  be.upload(a.data, 0, randomFloats(N * N));
  const c = { data: be.allocate(N * N * 4), shape: [N, N], dtype: 'float32' };
  const reps = quick ? 1 : 3;
  let mmMs = Infinity;
  for (let r = 0; r < (quick ? 1 : 3); r++) {
    mmMs = Math.min(mmMs, await timeRound(async () => {
      for (let i = 0; i < reps; i++) be.matmul(a, a, c);
      await be.sync();
    }, 1) / reps);
  }
  be.dispose();
  return { adapter: adapterName(info), featureLevel: info.featureLevel, rows, calls, bandwidth, matmul1024: { ms: mmMs, gflops: (2 * N ** 3) / mmMs / 1e6 } };
}

export function formatBench(label, r) {
  const lines = [`== ${label}: ${r.adapter} (${r.featureLevel})`];
  formatKernelRows(lines, 'end to end (upload, dispatch, read), ms', r.rows);
  formatGPUCalls(lines, 'WebGPU calls of add 1K: backend / raw', r.calls);
  formatBandwidthRows(lines, 'backend', r.bandwidth);
  lines.push(`matmul 1024x1024x1024: ${r.matmul1024.ms.toFixed(1)} ms, ${r.matmul1024.gflops.toFixed(2)} GFLOP/s`);
  return lines.join('\n');
}
