// An MLC model library's output handed to onnxruntime-web on the same
// GPUDevice without a copy (Node, Dawn on llvmpipe), and load({ gpuDevice })
// checking a device against what the library's kernels need.
import { test, after } from 'node:test';
import v8 from 'node:v8';
import assert from 'node:assert/strict';
import { load } from '../../js/index.js';
import { RelaxVM } from '../../js/model_library.js';
import { installWebGPU } from 'webffi/node-gpu';
import { modelPath, ARCTIC_S, makeTensorCache, makeInputs } from '../support/model_fixture.mjs';
import { onnxModel } from '../support/onnx_model.mjs';
import { assertClose } from '../support/numeric.mjs';
import { assertThrows } from '../browser/harness_page.mjs';
import { readFileSync } from 'node:fs';

v8.setFlagsFromString('--liftoff-only'); // see gpu_interop.test.mjs: ORT's wasm in V8's optimizing tier stalls this machine
const gpu = installWebGPU({ backend: 'opengles' }); // navigator.gpu and the WebGPU globals, as a Node user does
const ort = await import('onnxruntime-web/webgpu');
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const wasm = readFileSync(modelPath(ARCTIC_S));
const quiet = { log() {}, warn() {} };
const disposers = [];
after(() => {
  for (const d of disposers.reverse()) d();
});

/** A device as another library would make it: default limits, or with the adapter's maxima of `raised`. */
async function deviceWith(raised = []) {
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' });
  const requiredLimits = {};
  for (const k of raised) requiredLimits[k] = adapter.limits[k];
  const device = await adapter.requestDevice({ requiredLimits });
  disposers.push(() => device.destroy());
  return device;
}

test('load({ wasm: library, gpuDevice }) names every limit a device falls short of for the library\'s kernels', async () => {
  const device = await deviceWith();
  const e = await assertThrows(() => load({ wasm, gpuDevice: device, autoloadBackends: false, logger: quiet }),
    'RuntimeError', /^the GPUDevice given to webffi \(gpuDevice\) lacks what this model library's kernels need: /);
  for (const limit of ['maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX']) {
    assert.match(e.message, new RegExp(`${limit} \\d+ \\(the device has ${device.limits[limit]}\\)`));
  }
});

test('a model library\'s prefill output goes to ORT on the same device, the same GPUBuffer, checked against the CPU', async () => {
  const device = await deviceWith(['maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX', 'maxStorageBuffersPerShaderStage',
    'maxComputeWorkgroupStorageSize', 'maxBufferSize', 'maxStorageBufferBindingSize']);
  const rt = await load({ wasm, gpuDevice: device, autoloadBackends: false, logger: quiet });
  disposers.push(() => rt.dispose());
  assert.equal(rt.gpuDevice, device);
  const vm = await RelaxVM.create(rt);
  disposers.push(() => vm.dispose());
  await vm.loadParams(makeTensorCache(vm.metadata.params));
  const L = 8;
  const inputs = makeInputs(L);
  const ids = rt.empty([1, L], 'int32', 'webgpu').set(inputs.ids);
  const mask = rt.empty([1, L], 'int32', 'webgpu').set(inputs.mask);
  const out = vm.getFunction('prefill')(ids, mask, vm.params); // recorded on the device, not awaited
  assert.deepEqual(out.shape, [1, L, 384]);
  assert.equal(out.byteOffset, 0);

  // ORT: y = relu(x * 2 - 0.1) over the embeddings, on the library's device.
  const model = onnxModel({
    inputs: [['x', 'float32', [1, L, 384]]],
    outputs: [['y', 'float32', [1, L, 384]]],
    nodes: [
      { op: 'Mul', inputs: ['x', 'two'], outputs: ['a'] },
      { op: 'Sub', inputs: ['a', 'tenth'], outputs: ['b'] },
      { op: 'Relu', inputs: ['b'], outputs: ['y'] },
    ],
    initializers: [['two', Float32Array.of(2), []], ['tenth', Float32Array.of(0.1), []]],
  });
  const session = await ort.InferenceSession.create(model, {
    executionProviders: [{ name: 'webgpu', device }], preferredOutputLocation: 'gpu-buffer',
  });
  const input = ort.Tensor.fromGpuBuffer(out.gpuBuffer, { dataType: 'float32', dims: [1, L, 384] });
  assert.equal(input.gpuBuffer, out.gpuBuffer, 'ORT reads the library\'s output buffer itself');
  const { y } = await session.run({ x: input });
  const embeddings = await out.data();
  assert.ok(embeddings.some((v) => v !== 0) && embeddings.every(Number.isFinite), 'a real prefill output');
  const expected = Float64Array.from(embeddings, (v) => Math.max(0, Math.fround(Math.fround(v * 2) - Math.fround(0.1))));
  assertClose(await y.getData(), expected, 'ORT on the prefill output', { rtol: 1e-5, atol: 1e-6 });

  // And back: ORT's output as a webffi tensor, summed by a webffi kernel.
  const back = await rt.tensorFromGPUBuffer(y.gpuBuffer, { shape: [1, L, 384] });
  assert.equal(back.gpuBuffer, y.gpuBuffer);
  const [total] = await rt.getGlobal('webgpu.sum')(back).data();
  const want = expected.reduce((a, v) => a + v, 0);
  assert.ok(Math.abs(total - want) <= 1e-4 * Math.abs(want) + 1e-3, `${total} vs ${want}`);
  back.dispose();
  y.dispose();
  await session.release();
});
