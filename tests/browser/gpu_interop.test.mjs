// One GPU, no copies, in headless Chromium (WebGPU on SwiftShader): webffi
// tensors handed to and from onnxruntime-web, TensorFlow.js and a
// transformers.js pipeline (tests/fixtures/tiny-bert, served with the
// repository: no network), on webffi's device and on devices those
// libraries made.
import { test } from 'node:test';
import { useChromium } from './harness.mjs';

const { expectPass } = useChromium({ webgpu: true });

test('ORT, tfjs and transformers.js share one device with webffi in Chromium, tensors both ways without copies', async () => {
  await expectPass('gpu_interop.html', 6, { timeout: 300000 });
});
