// node bench/gpu_interop.mjs [--quick] [--node-only | --browser-only]
// The cost of handing a WebGPU tensor between webffi and onnxruntime-web /
// TensorFlow.js on one device, against copying it through the host
// (bench/gpu_interop_bench.mjs), in Node (Dawn on llvmpipe here) and in
// headless Chromium (SwiftShader).
import v8 from 'node:v8';
import { runInteropBench, formatInteropBench } from './gpu_interop_bench.mjs';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');

if (!args.has('--browser-only')) {
  // ORT's 28 MB wasm in V8's optimizing tier stalls a small machine for minutes; the handoffs do not run ORT's kernels.
  v8.setFlagsFromString('--liftoff-only');
  const { installWebGPU } = await import('../js/node_gpu.js');
  installWebGPU({ backend: process.env.WEBFFI_DAWN_BACKEND ?? 'opengles' }); // navigator.gpu for ORT and tfjs
  const { load } = await import('../js/index.js');
  const ort = await import('onnxruntime-web/webgpu');
  const tf = await import('@tensorflow/tfjs-core');
  const { WebGPUBackend } = await import('@tensorflow/tfjs-backend-webgpu');
  const rt = await load({ logger: { log() {}, warn() {} } });
  await rt.backends.ensure('webgpu');
  tf.removeBackend('webgpu');
  tf.registerBackend('webgpu', () => new WebGPUBackend(rt.gpuDevice, rt.gpuDevice.adapterInfo));
  await tf.setBackend('webgpu');
  console.log(formatInteropBench('Node, Dawn', await runInteropBench({ rt, ort, tf, quick })));
  rt.dispose();
}
if (!args.has('--node-only')) {
  const { runBenchPage } = await import('./chromium.mjs');
  console.log(formatInteropBench('Chromium', await runBenchPage('gpu_interop.html', quick)));
}
