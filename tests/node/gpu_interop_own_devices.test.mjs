// On webffi/node-gpu, onnxruntime-web and TensorFlow.js make GPU devices of
// their own in Node as in a browser (Dawn on llvmpipe has no core-level
// adapter; installWebGPU answers their requests at the compatibility level),
// and webffi adopts each with load({ gpuDevice }). A process of its own:
// ORT sets up its WebGPU device once per process.
import { test, after } from 'node:test';
import v8 from 'node:v8';
import assert from 'node:assert/strict';
import { installWebGPU } from 'webffi/node-gpu';
import { load } from '../../js/index.js';
import { denseModel, ortRoundTrip, tfRoundTrip } from '../support/interop_cases.mjs';

v8.setFlagsFromString('--liftoff-only'); // see gpu_interop.test.mjs
installWebGPU({ backend: 'opengles' });
const ort = await import('onnxruntime-web/webgpu');
const tf = await import('@tensorflow/tfjs-core');
await import('@tensorflow/tfjs-backend-webgpu'); // registers its backend, which asks navigator.gpu for a device
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const quiet = { log() {}, warn() {} };
const runtimes = [];
after(() => runtimes.forEach((rt) => rt.dispose()));

test('ORT\'s own device (executionProviders: [\'webgpu\']) adopted by webffi: webffi -> ORT -> webffi', async () => {
  const session = await ort.InferenceSession.create(denseModel(), {
    executionProviders: ['webgpu'], preferredOutputLocation: 'gpu-buffer',
  });
  const device = ort.env.webgpu.device;
  assert.ok(device instanceof GPUDevice);
  const rt = await load({ gpuDevice: device, logger: quiet });
  runtimes.push(rt);
  assert.equal(rt.gpuDevice, device);
  await ortRoundTrip(rt, ort, session);
  await session.release();
});

test('tfjs\'s own device (tf.setBackend(\'webgpu\')) adopted by webffi: tfjs -> webffi -> tfjs', async () => {
  assert.equal(await tf.setBackend('webgpu'), true);
  tf.env().set('WEBGPU_CPU_FORWARD', false);
  const rt = await load({ gpuDevice: tf.backend().device, logger: quiet });
  runtimes.push(rt);
  assert.equal(rt.backends.get('webgpu').engine.info().adopted, true);
  await tfRoundTrip(rt, tf);
});
