// One GPU, no copies, in Node (Dawn on llvmpipe): webffi tensors handed to
// and from onnxruntime-web and TensorFlow.js on the same GPUDevice, the
// checks on imported buffers and adopted devices, and who frees what.
// Chromium runs the same chains, plus the libraries' own devices and
// transformers.js (tests/browser/gpu_interop.test.mjs). Here ORT and tfjs run
// on webffi's device, or on one the test makes as another library would;
// their own devices are gpu_interop_own_devices.test.mjs.
import { test, after } from 'node:test';
import v8 from 'node:v8';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { load } from '../../js/index.js';
import { createWebGPUBackend } from '../../js/backends/webgpu/index.js';
import { installWebGPU } from 'webffi/node-gpu';
import { assertThrows } from '../browser/harness_page.mjs';
import { randomFloats, assertClose } from '../support/numeric.mjs';
import { tinyBertFiles } from '../support/tiny_bert.mjs';
import { readFileSync } from 'node:fs';
import {
  denseModel, denseRef, ortRoundTrip, ortBoundOutput, ortLifetimes, tfRoundTrip, refusedImports, M, K, N,
} from '../support/interop_cases.mjs';

// onnxruntime-web's 28 MB wasm keeps this small machine busy for minutes in
// V8's optimizing tier (the event loop stalls meanwhile); the baseline tier
// runs the tests' tiny models fast enough. Set before any wasm is compiled.
v8.setFlagsFromString('--liftoff-only');
// What a Node user does (webffi/node-gpu): navigator.gpu and the WebGPU globals for ORT and tfjs, an
// adapter at the compatibility level when asked for the default one, shared views copied before writeBuffer.
const gpu = installWebGPU({ backend: 'opengles' });
const ort = await import('onnxruntime-web/webgpu');
const tf = await import('@tensorflow/tfjs-core');
const { WebGPUBackend } = await import('@tensorflow/tfjs-backend-webgpu');
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
// ORT asks navigator.gpu for an adapter (no feature level) even when given a device: none is set here,
// installWebGPU's compatibility-level answer is what it gets.

const quiet = { log() {}, warn() {} };
const rt = await load({ logger: quiet });
await rt.backends.ensure('webgpu');
const device = rt.gpuDevice;
const session = await ort.InferenceSession.create(denseModel(), {
  executionProviders: [{ name: 'webgpu', device }], preferredOutputLocation: 'gpu-buffer',
});
after(async () => {
  await session.release();
  rt.dispose();
});

/** tfjs's WebGPU backend on `dev` (its kernels are registered under the name 'webgpu'). */
async function tfOn(dev) {
  tf.removeBackend('webgpu');
  tf.registerBackend('webgpu', () => new WebGPUBackend(dev, dev.adapterInfo));
  await tf.setBackend('webgpu');
  tf.env().set('WEBGPU_CPU_FORWARD', false); // small tensors stay on the GPU
}

async function otherDevice() {
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' });
  return adapter.requestDevice();
}

test('webffi/node-gpu: navigator.gpu, the WebGPU globals, a compatibility-level answer, shared views copied before writes', async () => {
  assert.equal(navigator.gpu, gpu);
  assert.equal(String(gpu), '[object GPU]');
  assert.equal(typeof GPUBufferUsage.STORAGE, 'number');
  assert.ok(device instanceof GPUDevice, 'webffi found the installed navigator.gpu');
  // no core-level adapter on Dawn's OpenGL ES backend: asked as ORT asks, the compatibility level answers;
  // a request that names its level gets what that level has
  assert.equal(await gpu.requestAdapter({ featureLevel: 'core' }), null);
  const adapter = await gpu.requestAdapter({ powerPreference: undefined });
  assert.ok(adapter && typeof adapter.requestDevice === 'function');
  // writes from shared memory (what ORT's threaded wasm passes): views with offsets and sizes in
  // elements, a DataView and the buffer itself in bytes, all read back as written
  const target = device.createBuffer({ size: 32, usage: 0x8 | 0x1 }); // COPY_DST | MAP_READ
  const shared = new SharedArrayBuffer(64);
  new Uint8Array(shared).forEach((_, i, a) => { a[i] = i; });
  device.queue.writeBuffer(target, 0, new Float32Array(shared, 4, 6), 1, 2); // bytes 8..16
  device.queue.writeBuffer(target, 8, new DataView(shared, 16), 4, 8);       // bytes 20..28
  device.queue.writeBuffer(target, 16, shared, 40, 8);                        // bytes 40..48
  device.queue.writeBuffer(target, 24, new Uint32Array(shared, 48, 2));       // bytes 48..56
  await target.mapAsync(GPUMapMode.READ);
  const range = (a, b) => Array.from({ length: b - a }, (_, i) => a + i);
  assert.deepEqual(Array.from(new Uint8Array(target.getMappedRange())),
    [...range(8, 16), ...range(20, 28), ...range(40, 48), ...range(48, 56)]);
  target.destroy();
  for (const bad of [null, 1, { backend: 3 }, { gpu: {} }]) assert.throws(() => installWebGPU(bad), TypeError);
});

test('rt.gpuDevice is the device webffi uses (null before its backend is initialised)', async () => {
  const fresh = await load({ logger: quiet });
  assert.equal(fresh.gpuDevice, null);
  await fresh.backends.ensure('webgpu');
  assert.ok(fresh.gpuDevice && typeof fresh.gpuDevice.createBuffer === 'function');
  fresh.dispose();
  assert.equal(fresh.gpuDevice, null);
  assert.equal(typeof device.createBuffer, 'function');
});

test('ORT on webffi\'s device: webffi -> ORT -> webffi through the same GPUBuffers, checked against the CPU', () =>
  ortRoundTrip(rt, ort, session));

test('ORT writes its output into a webffi tensor (a bound output)', () => ortBoundOutput(rt, ort, session));

test('lifetimes: a disposed webffi tensor\'s buffer stays intact for ORT; an ORT output disposed after webffi\'s work was submitted', () =>
  ortLifetimes(rt, ort, session));

test('TensorFlow.js on webffi\'s device: tfjs -> webffi -> tfjs through the same GPUBuffers', async () => {
  await tfOn(device);
  await tfRoundTrip(rt, tf);
});

test('a device another library made: load({ gpuDevice }) adopts it, and ORT and tfjs share it with webffi', async () => {
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' });
  const theirs = await adapter.requestDevice({ label: 'another library' });
  const shared = await load({ gpuDevice: theirs, logger: quiet });
  assert.equal(shared.gpuDevice, theirs);
  const info = shared.backends.get('webgpu').engine.info();
  assert.equal(info.adopted, true);
  const s = await ort.InferenceSession.create(denseModel(), {
    executionProviders: [{ name: 'webgpu', device: theirs }], preferredOutputLocation: 'gpu-buffer',
  });
  await ortRoundTrip(shared, ort, s);
  await tfOn(theirs);
  await tfRoundTrip(shared, tf);
  await s.release();
  shared.dispose();
  // webffi let go of the device but did not destroy it: its owner still computes on it.
  assert.equal(shared.gpuDevice, null);
  const x = tf.tensor([1, 2, 3, 4]);
  assert.deepEqual(Array.from(await tf.add(x, x).data()), [2, 4, 6, 8]);
  await assertThrows(() => shared.tensorFromGPUBuffer(theirs.createBuffer({ size: 16, usage: 0x80 }), { shape: [4] }),
    'ValueError', /disposed runtime/);
});

test('bad imports: another device, destroyed, no STORAGE usage, mapped, too small, misaligned, bad options', async () => {
  await refusedImports(rt, device, await otherDevice());
});

test('property: any shape, dtype and byteOffset make a tensor that fits the buffer, or a TypeError/ValueError', async () => {
  const buffer = device.createBuffer({ size: 256, usage: 0x80 | 0x4 | 0x8 });
  const dtypes = ['float32', 'float16', 'int32', 'uint8', 'int64', 'float64', 'bool', 'int4', 'float32x4', 'nope'];
  const dim = fc.oneof(fc.integer({ min: 0, max: 70 }), fc.constantFrom(-1, 1.5, 2 ** 53, NaN, '3', 3n));
  const offset = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(-4, 2.5, 2 ** 60, '8', null));
  await fc.assert(fc.asyncProperty(fc.array(dim, { maxLength: 4 }), fc.constantFrom(...dtypes), offset, fc.boolean(),
    async (shape, dtype, byteOffset, dispose) => {
      let t;
      try {
        t = await rt.tensorFromGPUBuffer(buffer, { shape, dtype, byteOffset, dispose: false });
      } catch (e) {
        assert.ok(e.kind === 'TypeError' || e.kind === 'ValueError', `${e.kind}: ${e.message}`);
        return;
      }
      try {
        assert.equal(t.gpuBuffer, buffer);
        assert.ok(t.byteOffset + t.nbytes <= buffer.size, `${t.byteOffset} + ${t.nbytes}`);
        assert.equal(t.byteOffset % (t.dtype.bits / 8 * t.dtype.lanes), 0);
      } finally {
        t.dispose();
      }
      void dispose;
    }), { numRuns: 300 });
  // The buffer was never the imports' to destroy, and the runtime still works.
  const t = await rt.tensorFromGPUBuffer(buffer, { shape: [4] });
  assert.equal((await rt.getGlobal('webgpu.add_scalar')(t, 1).data()).length, 4);
  t.dispose();
  buffer.destroy();
});

test('imports never enter the reuse pool; dispose: true destroys the buffer, dispose: false leaves it', async () => {
  const kept = device.createBuffer({ size: 64, usage: 0x80 | 0x4 | 0x8 });
  const given = device.createBuffer({ size: 64, usage: 0x80 | 0x4 | 0x8 });
  const a = await rt.tensorFromGPUBuffer(kept, { shape: [16] });
  const b = await rt.tensorFromGPUBuffer(given, { shape: [16], dispose: true });
  const before = rt.backends.get('webgpu').engine.info().bytesAllocated;
  a.dispose();
  b.dispose();
  assert.equal(rt.backends.get('webgpu').engine.info().bytesAllocated, before, 'imports are not webffi\'s allocations');
  for (let i = 0; i < 4; i++) {
    const t = rt.empty([16], 'float32', 'webgpu');
    assert.ok(t.gpuBuffer !== kept && t.gpuBuffer !== given, 'a disposed import is never handed out again');
    t.dispose();
  }
  await rt.backends.get('webgpu').sync();
  const again = await rt.tensorFromGPUBuffer(kept, { shape: [16] }); // still alive
  again.dispose();
  await assertThrows(() => rt.tensorFromGPUBuffer(given, { shape: [16] }), 'ValueError', /the buffer was destroyed/);
});

test('tensor.gpuBuffer submits webffi\'s pending work first: a consumer that submits at once sees the results', async () => {
  const X = randomFloats(64, 31);
  const x = await rt.tensor(X).toDevice('webgpu');
  const y = rt.getGlobal('webgpu.mul_scalar')(x, 2); // recorded only
  const staging = device.createBuffer({ size: 256, usage: 0x1 | 0x8 });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(y.gpuBuffer, 0, staging, 0, 256);
  device.queue.submit([encoder.finish()]); // in the same task: before webffi's own end-of-task submit
  await staging.mapAsync(1);
  assertClose(new Float32Array(staging.getMappedRange().slice(0)), X.map((v) => 2 * v), 'read by the consumer');
  staging.destroy();
  await assertThrows(() => rt.tensor(X).gpuBuffer, 'ValueError', /Tensor.gpuBuffer: the data lives on cpu:0, not in a GPUBuffer/);
  x.dispose();
  y.dispose();
});

test('flush() submits the recorded work without waiting (engine level: a consumer that submits next sees it)', async () => {
  const be = createWebGPUBackend({ device: await otherDevice() });
  await be.init();
  const a = be.allocate(16);
  be.upload(a, 0, Float32Array.of(1, 2, 3, 4));
  const out = be.allocate(16);
  be.addScalar({ data: a, shape: [4], dtype: 'float32' }, 10, { data: out, shape: [4], dtype: 'float32' });
  be.flush();
  const d = be.device;
  const staging = d.createBuffer({ size: 16, usage: 0x1 | 0x8 });
  const encoder = d.createCommandEncoder();
  encoder.copyBufferToBuffer(out.buffer, 0, staging, 0, 16);
  d.queue.submit([encoder.finish()]);
  await staging.mapAsync(1);
  assert.deepEqual(Array.from(new Float32Array(staging.getMappedRange().slice(0))), [11, 12, 13, 14]);
  be.dispose();
  d.destroy();
});

test('an adopted device lost: webffi says so, and does not replace a device it did not make', async () => {
  const theirs = await otherDevice();
  const warnings = [];
  const shared = await load({ gpuDevice: theirs, autoloadBackends: false, logger: { log() {}, warn: (m) => warnings.push(m) } });
  const t = await shared.tensor(Float32Array.of(1, 2)).toDevice('webgpu');
  theirs.destroy(); // its owner ends it
  await theirs.lost;
  await assertThrows(() => t.data(), 'RuntimeError', /the WebGPU device was lost \(reason "destroyed"[^)]*\).*does not replace a device another library made/);
  await assertThrows(() => shared.backends.ensure('webgpu'), 'RuntimeError', /No backend serves webgpu.*does not replace a device it did not make/);
  assert.equal(shared.gpuDevice, null);
  assert.deepEqual(warnings.filter((w) => !/unavailable/.test(w)), [], 'a destroyed device is not a warning');
});

test('load({ gpuDevice }) refuses what is not a GPUDevice', async () => {
  await assertThrows(() => load({ gpuDevice: {}, logger: quiet }), 'TypeError', /gpuDevice: expected a GPUDevice, got Object/);
  await assertThrows(() => load({ gpuDevice: null, logger: quiet }), 'TypeError', /gpuDevice: expected a GPUDevice, got null/);
});

test('the dense model\'s CPU reference is what ORT computes on the CPU too', async () => {
  // Guards the reference itself: ORT's wasm provider (CPU) agrees with denseRef.
  const cpu = await ort.InferenceSession.create(denseModel(), { executionProviders: ['wasm'] });
  const X = randomFloats(M * K, 41);
  const { y } = await cpu.run({ x: new ort.Tensor('float32', X, [M, K]) });
  assert.deepEqual(y.dims, [M, N]);
  assertClose(y.data, denseRef(X), 'ORT on the CPU', { rtol: 1e-5, atol: 1e-6 });
  await cpu.release();
});

test('tests/fixtures/tiny-bert (the transformers.js model of the Chromium test and the README) is what tiny_bert.mjs makes', () => {
  for (const [name, content] of Object.entries(tinyBertFiles())) {
    const committed = readFileSync(new URL(`../fixtures/tiny-bert/${name}`, import.meta.url));
    assert.ok(committed.equals(Buffer.from(content)), `${name} differs: run \`node tests/support/tiny_bert.mjs\``);
  }
});

test('an import without COPY_SRC / COPY_DST: webffi kernels read it, transfers say which usage is missing', async () => {
  const storageOnly = device.createBuffer({ size: 16, usage: 0x80 });
  const t = await rt.tensorFromGPUBuffer(storageOnly, { shape: [4] });
  await assertThrows(() => t.data(), 'ValueError', /^download: the imported buffer's usage \(0x80\) lacks COPY_SRC \(0x4\)$/);
  assert.throws(() => t.set(new Float32Array(4)), (e) => e.kind === 'ValueError' && /upload: .* lacks COPY_DST/.test(e.message));
  const copied = rt.getGlobal('webgpu.add_scalar')(t, 1); // a kernel reads it as storage: fine
  assert.deepEqual(Array.from(await copied.data()), [1, 1, 1, 1]); // a new buffer is zeroed
  copied.dispose();
  t.dispose();
  storageOnly.destroy();
});

test('GPU errors on a device handed to other libraries are reported with a note, and not kept from the console', async () => {
  const fresh = await load({ logger: quiet });
  await fresh.backends.ensure('webgpu');
  const dev = fresh.gpuDevice; // shared from now on
  const errors = [];
  dev.addEventListener('uncapturederror', (e) => errors.push(e.defaultPrevented));
  dev.createBuffer({ size: 16, usage: 0x1 | 0x2 }); // MAP_READ | MAP_WRITE: invalid, outside any error scope
  await dev.queue.onSubmittedWorkDone();
  await new Promise((r) => setTimeout(r, 50));
  await assertThrows(() => fresh.backends.get('webgpu').sync(), 'ValueError', /on the shared GPUDevice: the error may come from another library's work/);
  assert.deepEqual(errors, [false], 'webffi did not prevent the default (the console report)');
  fresh.dispose();
});
