// Handing WebGPU tensors between webffi and other libraries on one device,
// shared by Node (Dawn) and Chromium (bench/gpu_interop.html). For each size:
// - export: a webffi tensor's buffer as an onnxruntime-web input
//   (tensor.gpuBuffer + ort.Tensor.fromGpuBuffer) and as a TensorFlow.js
//   tensor (tf.tensor({ buffer, zeroCopy: true }) and its dispose);
// - import: another library's buffer as a webffi tensor
//   (rt.tensorFromGPUBuffer, which checks the buffer on the device, and dispose);
// - the copy they replace: the bytes read back through mapAsync
//   (`await tensor.data()`) and written into the other library's buffer with
//   writeBuffer, until the device has done it.
// Each handoff is timed against the copy in alternating rounds, each side in
// blocks long enough for a coarse browser clock (its own number of calls);
// the ratio is the copy's median time over the handoff's. A handoff costs the
// same at every size (no bytes move); the copy grows with the size.
import { median } from './paired.mjs';

const BLOCK_MS = 60;
const STORAGE = 0x80;
const COPY = 0x4 | 0x8;

/**
 * @param {{ rt: object, ort: object, tf: object, quick?: boolean }} env rt's WebGPU device is
 *   the one ORT would run on and tfjs's WebGPU backend uses
 */
export async function runInteropBench({ rt, ort, tf, quick = false }) {
  const device = rt.gpuDevice;
  const sizes = quick ? [1 << 10, 1 << 20] : [1 << 10, 1 << 16, 1 << 20, 1 << 24]; // bytes
  const rounds = quick ? 4 : 8;
  const rows = [];
  for (const nbytes of sizes) {
    const n = nbytes / 4;
    const values = new Float32Array(n).map((_, i) => i % 251);
    const t = await rt.tensor(values).toDevice('webgpu');
    const theirs = device.createBuffer({ size: nbytes, usage: STORAGE | COPY });
    device.queue.writeBuffer(theirs, 0, values);
    // The copy: through the host, as without a shared device.
    const copy = async () => {
      const bytes = await t.data();
      device.queue.writeBuffer(theirs, 0, bytes);
      await device.queue.onSubmittedWorkDone();
    };
    const toOrt = async () => {
      ort.Tensor.fromGpuBuffer(t.gpuBuffer, { dataType: 'float32', dims: [n] });
    };
    const toTf = async () => {
      tf.tensor({ buffer: t.gpuBuffer, zeroCopy: true }, [n], 'float32').dispose();
    };
    const fromOther = async () => {
      (await rt.tensorFromGPUBuffer(theirs, { shape: [n] })).dispose();
    };
    for (const [name, handoff] of [['webffi -> ORT', toOrt], ['webffi -> tfjs', toTf], ['other -> webffi', fromOther]]) {
      const [handoffMs, copyMs] = await alternate([handoff, copy], rounds);
      rows.push({ name, nbytes, handoffUs: handoffMs * 1000, copyUs: copyMs * 1000, ratio: copyMs / handoffMs });
    }
    t.dispose();
    theirs.destroy();
  }
  return { rows };
}

/** Median milliseconds per call of each function, timed in alternating rounds of blocks of about BLOCK_MS. */
async function alternate(fns, rounds) {
  const iters = [];
  for (const fn of fns) iters.push(await calibrate(fn));
  const times = fns.map(() => []);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...fns.keys()].reverse() : [...fns.keys()];
    for (const i of order) {
      await fns[i]();
      const t0 = performance.now();
      for (let k = 0; k < iters[i]; k++) await fns[i]();
      times[i].push((performance.now() - t0) / iters[i]);
    }
  }
  return times.map(median);
}

/** Calls per block: doubled until a block takes BLOCK_MS. */
async function calibrate(fn) {
  for (let n = 1; ; n *= 2) {
    const t0 = performance.now();
    for (let k = 0; k < n; k++) await fn();
    const ms = performance.now() - t0;
    if (ms >= BLOCK_MS) return n;
    if (ms > 0) return Math.max(n, Math.ceil((n * BLOCK_MS) / ms));
  }
}

const size = (b) => (b >= 1 << 20 ? `${b / (1 << 20)} MiB` : `${b / 1024} KiB`);

export function formatInteropBench(where, { rows }) {
  const lines = [`${where}: handoff vs a copy through the host (mapAsync + writeBuffer), medians of paired rounds`];
  lines.push(`  ${'handoff'.padEnd(16)} ${'size'.padStart(8)} ${'handoff us'.padStart(11)} ${'copy us'.padStart(11)} ${'copy/handoff'.padStart(13)}`);
  for (const r of rows) {
    lines.push(`  ${r.name.padEnd(16)} ${size(r.nbytes).padStart(8)} ${r.handoffUs.toFixed(1).padStart(11)} ${r.copyUs.toFixed(1).padStart(11)} ${r.ratio.toFixed(1).padStart(12)}x`);
  }
  for (const name of new Set(rows.map((r) => r.name))) {
    const mine = rows.filter((r) => r.name === name);
    const first = mine[0];
    const last = mine.at(-1);
    lines.push(`  ${name}: ${size(last.nbytes)} / ${size(first.nbytes)} handoff time ${(last.handoffUs / first.handoffUs).toFixed(2)}x ` +
      `(the copy: ${(last.copyUs / first.copyUs).toFixed(1)}x)`);
  }
  return lines.join('\n');
}
