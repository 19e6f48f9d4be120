// Tensors handed between webffi and other WebGPU libraries on one device,
// shared by Node (Dawn) and Chromium (tests/browser/pages/gpu_interop.html):
// onnxruntime-web running a model these tests make, TensorFlow.js. Every
// result is checked against a CPU computation, and every handoff against
// buffer identity (the same GPUBuffer object on both sides: no copy).
import { onnxModel } from './onnx_model.mjs';
import { randomFloats, assertClose } from './numeric.mjs';
import { assert, assertEqual, assertThrows } from '../browser/harness_page.mjs';

// The ONNX model: y = relu(x @ W + B), x [M, K], y [M, N].
export const M = 3;
export const K = 8;
export const N = 4;
const W = randomFloats(K * N, 7);
const B = randomFloats(N, 8);

export function denseModel() {
  return onnxModel({
    inputs: [['x', 'float32', [M, K]]],
    outputs: [['y', 'float32', [M, N]]],
    nodes: [
      { op: 'MatMul', inputs: ['x', 'W'], outputs: ['xw'] },
      { op: 'Add', inputs: ['xw', 'B'], outputs: ['z'] },
      { op: 'Relu', inputs: ['z'], outputs: ['y'] },
    ],
    initializers: [['W', W, [K, N]], ['B', B, [N]]],
  });
}

/** The model on the CPU. */
export function denseRef(x) {
  const y = new Float64Array(M * N);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let acc = B[j];
      for (let k = 0; k < K; k++) acc += Math.fround(x[i * K + k]) * W[k * N + j];
      y[i * N + j] = Math.max(0, acc);
    }
  }
  return y;
}

/** Softmax over the last axis of rows x cols, on the CPU. */
export function softmaxRef(x, cols) {
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / cols; r++) {
    let max = -Infinity;
    for (let c = 0; c < cols; c++) max = Math.max(max, x[r * cols + c]);
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += Math.exp(x[r * cols + c] - max);
    for (let c = 0; c < cols; c++) out[r * cols + c] = Math.exp(x[r * cols + c] - max) / sum;
  }
  return out;
}

const GPU = { rtol: 1e-4, atol: 1e-5 };

/**
 * webffi -> ORT -> webffi on one device: a webffi kernel's output is ORT's
 * input, ORT's output (left on the GPU) is a webffi kernel's input.
 * @param {object} rt a runtime whose WebGPU device ORT's session runs on
 * @param {object} ort onnxruntime-web
 * @param {object} session an InferenceSession of denseModel() with preferredOutputLocation 'gpu-buffer'
 */
export async function ortRoundTrip(rt, ort, session) {
  const X = randomFloats(M * K, 11);
  const x = await rt.tensor(X, { shape: [M, K] }).toDevice('webgpu');
  const half = rt.getGlobal('webgpu.mul_scalar')(x, 0.5); // recorded, not yet submitted
  const input = ort.Tensor.fromGpuBuffer(half.gpuBuffer, { dataType: 'float32', dims: [M, K] });
  assert(input.gpuBuffer === half.gpuBuffer, 'ORT reads the webffi tensor\'s own buffer');
  assertEqual(half.byteOffset, 0);
  const { y } = await session.run({ x: input });
  assertEqual(y.location, 'gpu-buffer');
  const t = await rt.tensorFromGPUBuffer(y.gpuBuffer, { shape: [M, N], dtype: 'float32' });
  assert(t.gpuBuffer === y.gpuBuffer, 'webffi reads ORT\'s output buffer');
  assertEqual(String(t.device), 'webgpu:0');
  const soft = rt.getGlobal('webgpu.softmax')(t);
  const expectY = denseRef(X.map((v) => Math.fround(v * 0.5)));
  assertClose(await t.data(), expectY, 'ORT output seen by webffi', GPU);
  assertClose(await soft.data(), softmaxRef(expectY, N), 'softmax of the ORT output', GPU);
  assertClose(await y.getData(), expectY, 'ORT output seen by ORT', GPU);
  for (const v of [x, half, t, soft]) v.dispose();
  y.dispose();
}

/** ORT writes its output straight into a webffi tensor (a bound output), read by a webffi kernel. */
export async function ortBoundOutput(rt, ort, session) {
  const X = randomFloats(M * K, 12);
  const out = rt.empty([M, N], 'float32', 'webgpu');
  const fetch = ort.Tensor.fromGpuBuffer(out.gpuBuffer, { dataType: 'float32', dims: [M, N] });
  const result = await session.run({ x: new ort.Tensor('float32', X, [M, K]) }, { y: fetch });
  assert(result.y.gpuBuffer === out.gpuBuffer, 'ORT wrote into the webffi tensor\'s buffer');
  const doubled = rt.getGlobal('webgpu.add')(out, out);
  const expectY = denseRef(X);
  assertClose(await out.data(), expectY, 'ORT output in a webffi tensor', GPU);
  assertClose(await doubled.data(), expectY.map((v) => 2 * v), 'webgpu.add of it', GPU);
  out.dispose();
  doubled.dispose();
}

/**
 * Lifetimes across ORT and webffi:
 * - a webffi tensor disposed while ORT holds its buffer: the buffer keeps
 *   its data (webffi neither reuses nor destroys an exported buffer);
 * - an ORT output disposed while webffi holds an import: webffi's work
 *   submitted before the dispose is right; the buffer is ORT's again after.
 */
export async function ortLifetimes(rt, ort, session) {
  const X = randomFloats(M * K, 13);
  const x = await rt.tensor(X, { shape: [M, K] }).toDevice('webgpu');
  const input = ort.Tensor.fromGpuBuffer(x.gpuBuffer, { dataType: 'float32', dims: [M, K] });
  const held = x.gpuBuffer;
  x.dispose();
  // Same-sized webffi tensors made now come from elsewhere: none is the held buffer, and none overwrites it.
  const others = [];
  for (let i = 0; i < 8; i++) {
    const o = rt.getGlobal('webgpu.mul_scalar')(await rt.tensor(randomFloats(M * K, 100 + i), { shape: [M, K] }).toDevice('webgpu'), -1);
    assert(o.gpuBuffer !== held, 'a disposed exported buffer is never reused');
    others.push(o);
  }
  const { y } = await session.run({ x: input });
  assertClose(await y.getData(), denseRef(X), 'ORT reads the disposed webffi tensor\'s buffer intact', GPU);

  const imported = await rt.tensorFromGPUBuffer(y.gpuBuffer, { shape: [M, N] });
  const scaled = rt.getGlobal('webgpu.mul_scalar')(imported, 3);
  rt.backends.get('webgpu').flush(); // submitted: ORT's later work on the buffer comes after it in the queue
  y.dispose(); // back to ORT, which may reuse it for its next output
  const again = await session.run({ x: new ort.Tensor('float32', randomFloats(M * K, 14), [M, K]) });
  assertClose(await scaled.data(), denseRef(X).map((v) => 3 * v), 'webffi work submitted before ORT let go', GPU);
  imported.dispose();
  scaled.dispose();
  again.y.dispose();
  for (const o of others) o.dispose();
}

/**
 * tfjs -> webffi -> tfjs on one device: tfjs's exp read by webffi's softmax
 * through dataToGPU's buffer, the softmax read by tfjs as a zero-copy tensor.
 * @param {object} tf @tensorflow/tfjs-core with its WebGPU backend active on rt's device
 */
export async function tfRoundTrip(rt, tf) {
  const X = randomFloats(M * N, 21);
  const a = tf.tensor(X, [M, N]);
  const e = tf.exp(a);
  const { buffer, tensorRef } = e.dataToGPU(); // tfjs submits its work
  const t = await rt.tensorFromGPUBuffer(buffer, { shape: [M, N] });
  assert(t.gpuBuffer === buffer, 'webffi reads tfjs\'s buffer');
  const soft = rt.getGlobal('webgpu.softmax')(t); // recorded, not yet submitted
  const back = tf.tensor({ buffer: soft.gpuBuffer, zeroCopy: true }, [M, N], 'float32');
  assert(tf.backend().tensorMap.get(back.dataId).resource === soft.gpuBuffer, 'tfjs reads the webffi tensor\'s own buffer');
  const tripled = tf.mul(back, 3);
  const expected = softmaxRef(Float64Array.from(X, (v) => Math.exp(v)), N);
  assertClose(await tripled.data(), expected.map((v) => 3 * v), 'tfjs mul of the webffi softmax', GPU);
  assertClose(await soft.data(), expected, 'webffi softmax of the tfjs exp', GPU);
  // tfjs's zero-copy tensor does not own the buffer: disposing it leaves the webffi tensor intact.
  back.dispose();
  assertClose(await soft.data(), expected, 'after tfjs let go', GPU);
  for (const v of [a, e, tensorRef, tripled]) v.dispose();
  t.dispose();
  soft.dispose();
}

/** Buffers that cannot become webffi tensors, each refused with its own error; the runtime keeps working. */
export async function refusedImports(rt, device, otherDevice) {
  const STORAGE = 0x80;
  const COPY = 0x4 | 0x8;
  const good = device.createBuffer({ size: 64, usage: STORAGE | COPY });
  const from = (buffer, options) => rt.tensorFromGPUBuffer(buffer, options);
  await assertThrows(() => from(otherDevice.createBuffer({ size: 64, usage: STORAGE }), { shape: [4] }),
    'ValueError', /^tensorFromGPUBuffer: the buffer belongs to another GPUDevice/);
  const dead = device.createBuffer({ size: 64, usage: STORAGE });
  dead.destroy();
  await assertThrows(() => from(dead, { shape: [4] }), 'ValueError', /^tensorFromGPUBuffer: the buffer was destroyed/);
  await assertThrows(() => from(device.createBuffer({ size: 64, usage: COPY }), { shape: [4] }),
    'ValueError', /lacks STORAGE/);
  await assertThrows(() => from(device.createBuffer({ size: 64, usage: STORAGE, mappedAtCreation: true }), { shape: [4] }),
    'ValueError', /the buffer is mapped; unmap it first/);
  await assertThrows(() => from(good, { shape: [17] }), 'ValueError', /needs bytes \[0, 68\), the buffer has 64/);
  await assertThrows(() => from(good, { shape: [4], byteOffset: 52 }), 'ValueError', /needs bytes \[52, 68\), the buffer has 64/);
  await assertThrows(() => from(good, { shape: [2], dtype: 'float32', byteOffset: 6 }), 'ValueError',
    /byteOffset 6 is misaligned: it must be a multiple of the float32 element size \(4 bytes\)/);
  await assertThrows(() => from(good, { shape: [2], byteOffset: -4 }), 'ValueError', /byteOffset must be a non-negative integer/);
  await assertThrows(() => from(good, { shape: [2], dtype: 'int4' }), 'TypeError', /packs elements below a byte/);
  await assertThrows(() => from(good, {}), 'TypeError', /options.shape is required/);
  await assertThrows(() => from(good, { shape: [2], dispose: 'yes' }), 'TypeError', /options.dispose must be a boolean/);
  await assertThrows(() => from({ size: 64 }, { shape: [4] }), 'TypeError', /expected a GPUBuffer/);
  await assertThrows(() => from(null, { shape: [4] }), 'TypeError', /expected a GPUBuffer/);
  // Still working, and a fitting import of the same buffer succeeds (float16 at a 2-byte offset is aligned).
  device.queue.writeBuffer(good, 0, Float32Array.of(1, 2, 3, 4, 5, 6, 7, 8));
  const t = await from(good, { shape: [2, 2], byteOffset: 16 });
  assertEqual(Array.from(await rt.getGlobal('webgpu.add_scalar')(t, 1).data()), [6, 7, 8, 9]);
  const h = await from(good, { shape: [3], dtype: 'float16', byteOffset: 2 });
  assertEqual(h.byteOffset, 2);
  t.dispose();
  h.dispose();
}
