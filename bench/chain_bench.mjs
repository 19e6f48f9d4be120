// Kernel chains, shared by Node (Dawn) and Chromium (bench/chain.html): N
// dependent small kernels on GPU-resident tensors (each reads the previous
// result), one readback at the end, three ways in the same run:
// - js:  through the runtime as users write it, `x = add(x, b)` with the
//        `webgpu.*` globals (JS -> C -> backend), disposing each intermediate;
// - c:   from C (bench/chain_module.c): the kernel looked up once with
//        TVMFFIFunctionGetGlobal, then called N times through the registry;
// - raw: a hand-written WebGPU pipeline doing the same dispatches with the
//        same WGSL: pipeline, buffers and bind groups made once, one command
//        encoder and one compute pass, one submit, one mapAsync.
// Reported: time per kernel (the whole chain, readback included, over N),
// the ratios to raw, and the CPU time per dispatch: the synchronous time a
// chain spends before its readback is pending, less the time inside
// queue.submit (where Dawn's GL backend runs llvmpipe's work on this
// thread), over N.
import { elementwiseWGSL, matmulWGSL, softmaxWGSL, ELEMENTWISE_WG, MATMUL_TILE } from '../js/backends/webgpu/wgsl.js';
import { BufferUsage, MapMode } from '../js/backends/webgpu/gpu_flags.js';
import { median } from './paired.mjs';
import { randomFloats, adapterName } from './webgpu_bench.mjs';

const { STORAGE, COPY_SRC, COPY_DST, UNIFORM, MAP_READ } = BufferUsage;
const NEG_INF = 0xff800000;

/** The chain families: the kernel, its operand, and the raw pipeline's WGSL, parameters and grid. */
export function chainCases() {
  const ew = (name, op, sym, n, wValue) => ({
    name, global: `webgpu.${op}`, shape: [n], w: { shape: [n], data: new Float32Array(n).fill(wValue) },
    code: elementwiseWGSL(sym, 'f32', false), params: new Uint32Array([n, 0, 0, 0, n, 0]), groups: [n / ELEMENTWISE_WG],
  });
  const mm = 64;
  const eye = new Float32Array(mm * mm);
  for (let i = 0; i < mm; i++) eye[i * mm + i] = 1;
  const sm = [4, 1024];
  return [
    ew('add 1K', 'add', '+', 1024, 0.001),
    ew('add 64K', 'add', '+', 65536, 0.001),
    ew('mul 16K', 'mul', '*', 16384, 1.0001),
    {
      name: 'matmul 64x64', global: 'webgpu.matmul', shape: [mm, mm], w: { shape: [mm, mm], data: eye },
      code: matmulWGSL('f32'), params: new Uint32Array([mm, mm, mm, 0, 0, 0]), groups: [mm / MATMUL_TILE, mm / MATMUL_TILE],
    },
    {
      name: 'softmax 4x1024', global: 'webgpu.softmax', shape: sm, w: null,
      code: softmaxWGSL('f32'), params: new Uint32Array([sm[0], sm[1], 0, 0, sm[0], NEG_INF]), groups: [sm[0]],
    },
  ];
}

const numel = (shape) => shape.reduce((x, y) => x * y, 1);

/** Wraps queue.submit (on the prototype) to count the time spent inside it. */
export function submitTimer(device) {
  const proto = Object.getPrototypeOf(device.queue);
  const submit = proto.submit;
  const timer = {
    ms: 0,
    restore() {
      proto.submit = submit;
    },
  };
  proto.submit = function (buffers) {
    const t0 = performance.now();
    try {
      return submit.call(this, buffers);
    } finally {
      timer.ms += performance.now() - t0;
    }
  };
  return timer;
}

/** The raw pipeline of a case: everything made once, a chain of n records n dispatches. */
export function rawChain(device, c, x0) {
  const module = device.createShaderModule({ code: c.code });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bytes = numel(c.shape) * 4;
  const buffer = () => device.createBuffer({ size: bytes, usage: STORAGE | COPY_SRC | COPY_DST });
  const input = buffer();
  device.queue.writeBuffer(input, 0, x0);
  const w = c.w && device.createBuffer({ size: c.w.data.byteLength, usage: STORAGE | COPY_DST });
  if (w) device.queue.writeBuffer(w, 0, c.w.data);
  const ping = [buffer(), buffer()];
  const uniform = device.createBuffer({ size: 64, usage: UNIFORM | COPY_DST });
  device.queue.writeBuffer(uniform, 0, c.params);
  const staging = device.createBuffer({ size: bytes, usage: MAP_READ | COPY_DST });
  const group = (src, dst) => device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: (w ? [src, w, dst, uniform] : [src, dst, uniform]).map((b, binding) => ({ binding, resource: { buffer: b } })),
  });
  const first = group(input, ping[0]);
  const steps = [group(ping[0], ping[1]), group(ping[1], ping[0])];
  const [gx, gy = 1] = c.groups;
  return (n, out) => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    for (let i = 0; i < n; i++) {
      pass.setBindGroup(0, i === 0 ? first : steps[(i - 1) & 1]);
      pass.dispatchWorkgroups(gx, gy);
    }
    pass.end();
    encoder.copyBufferToBuffer(ping[(n - 1) & 1], 0, staging, 0, bytes);
    device.queue.submit([encoder.finish()]);
    return staging.mapAsync(MapMode.READ).then(() => {
      out.set(new Float32Array(staging.getMappedRange()));
      staging.unmap();
      return out;
    });
  };
}

/** The chain through the runtime from JS, as a user writes it. */
export function jsChain(rt, c, x0) {
  const kernel = rt.getGlobal(c.global);
  const x = rt.empty(c.shape, 'float32', 'webgpu').set(x0);
  const w = c.w && rt.empty(c.w.shape, 'float32', 'webgpu').set(c.w.data);
  const run = (n, out) => {
    let y = w ? kernel(x, w) : kernel(x);
    for (let i = 1; i < n; i++) {
      const next = w ? kernel(y, w) : kernel(y);
      y.dispose();
      y = next;
    }
    return y.data(out).finally(() => y.dispose());
  };
  run.dispose = () => {
    kernel.dispose();
    x.dispose();
    w?.dispose();
  };
  return run;
}

/** The chain from C: one call of the module's `chain`, which calls the kernel n times. */
function cChain(rt, chain, c, x0) {
  const x = rt.empty(c.shape, 'float32', 'webgpu').set(x0);
  const w = c.w && rt.empty(c.w.shape, 'float32', 'webgpu').set(c.w.data);
  const run = (n, out) => {
    const y = chain(c.global, x, w ?? null, n);
    return y.data(out).finally(() => y.dispose());
  };
  run.dispose = () => {
    x.dispose();
    w?.dispose();
  };
  return run;
}


const ORDERS = [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 2, 1], [2, 0, 1], [1, 0, 2]];
const BLOCK_MS = 60;
const LONG_MS = 250; // a chain this long: one call per block, no untimed call first

/**
 * Times the sides (functions (n, out) -> Promise) on chains of n kernels:
 * `rounds` rounds, each a block of calls per side in a rotating order, each
 * block (of short chains) after one untimed call. Per side: median us per
 * kernel, median CPU us per dispatch; per round, each side's time over
 * raw's (the last side), whose median is the ratio.
 */
async function timeSides(sides, n, out, rounds, timer) {
  let slowest = 0;
  for (const f of sides) {
    await f(n, out);
    const t0 = performance.now();
    await f(n, out);
    slowest = Math.max(slowest, performance.now() - t0);
  }
  const long = slowest >= LONG_MS;
  const iters = long ? 1 : Math.max(2, Math.ceil(BLOCK_MS / slowest));
  const ms = sides.map(() => []);
  const cpu = sides.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (const i of ORDERS[r % ORDERS.length]) {
      const f = sides[i];
      if (!long) await f(n, out);
      let total = 0;
      let sync = 0;
      const submitted = timer.ms;
      for (let k = 0; k < iters; k++) {
        const t0 = performance.now();
        const pending = f(n, out);
        sync += performance.now() - t0;
        await pending;
        total += performance.now() - t0;
      }
      ms[i].push(total / iters / n);
      cpu[i].push(((sync - (timer.ms - submitted)) * 1000) / iters / n);
    }
  }
  const raw = sides.length - 1;
  return sides.map((_, i) => ({
    usPerKernel: median(ms[i]) * 1000,
    cpuUs: median(cpu[i]),
    ratio: median(ms[i].map((t, r) => t / ms[raw][r])),
    bestRatio: Math.min(...ms[i]) / Math.min(...ms[raw]),
  }));
}

/**
 * Runs every chain family at each length. `chain` is the C module's
 * function (null: no C column). Results of the three ways are compared.
 */
export async function runChainBench(rt, chain, { quick = false } = {}) {
  const backend = await rt.backends.ensure('webgpu');
  const engine = backend.engine;
  const info = engine.info();
  const device = engine.device;
  const lengths = quick ? [10, 100] : [10, 100, 1000];
  const rounds = quick ? 2 : 6;
  const timer = submitTimer(device);
  const rows = [];
  try {
    for (const c of chainCases()) {
      const x0 = randomFloats(numel(c.shape));
      const sides = [jsChain(rt, c, x0), ...(chain ? [cChain(rt, chain, c, x0)] : []), rawChain(device, c, x0)];
      const outs = sides.map(() => new Float32Array(numel(c.shape)));
      for (const n of lengths) {
        await Promise.all(sides.map((f, i) => f(n, outs[i])));
        const same = outs.every((o) => o.every((v, i) => Object.is(v, outs[outs.length - 1][i])));
        const [js, ...rest] = await timeSides(sides, n, outs[0], rounds, timer);
        const raw = rest.pop();
        rows.push({ name: c.name, n, js, c: rest[0] ?? null, raw, same });
      }
      for (const f of sides) f.dispose?.();
    }
  } finally {
    timer.restore();
  }
  return { adapter: adapterName(info), featureLevel: info.featureLevel, rows };
}

export function formatChainBench(label, r) {
  const lines = [`== ${label}: ${r.adapter} (${r.featureLevel})`];
  lines.push(`${'chain'.padEnd(22)} ${'us/kernel: js'.padStart(13)} ${'c'.padStart(7)} ${'raw'.padStart(7)}  ${'js/raw'.padStart(6)} ${'c/raw'.padStart(6)}  ${'bests: js/raw'.padStart(13)} ${'c/raw'.padStart(6)}  ${'CPU us/dispatch: js'.padStart(19)} ${'c'.padStart(6)} ${'raw'.padStart(6)}`);
  const f = (v, d = 1, w = 7) => (v === undefined || v === null ? '-' : v.toFixed(d)).padStart(w);
  for (const row of r.rows) {
    lines.push(`  ${`${row.name} x${row.n}`.padEnd(20)} ${f(row.js.usPerKernel, 1, 13)} ${f(row.c?.usPerKernel)} ${f(row.raw.usPerKernel)}  ${f(row.js.ratio, 2, 5)}x ${f(row.c?.ratio, 2, 5)}x  ${f(row.js.bestRatio, 2, 12)}x ${f(row.c?.bestRatio, 2, 5)}x  ${f(row.js.cpuUs, 1, 19)} ${f(row.c?.cpuUs, 1, 6)} ${f(row.raw.cpuUs, 1, 6)}${row.same ? '' : '  (results differ!)'}`);
  }
  return lines.join('\n');
}
