// node bench/tensors.mjs [--quick] [--node-only | --browser-only]
// Tensors through the runtime on WebGPU against raw WebGPU and plain typed
// arrays, in Node (Dawn, discovered by load(); WEBFFI_DAWN_BACKEND picks
// its backend) and in headless Chromium (SwiftShader without a GPU).
import { runTensorBench, formatTensorBench } from './tensors_bench.mjs';
import { load } from '../js/index.js';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');

if (!args.has('--browser-only')) {
  const rt = await load({ logger: { log() {}, warn: console.warn } });
  const r = await runTensorBench(rt, { quick });
  console.log(formatTensorBench('Node, Dawn', r));
  rt.backends.get('webgpu').engine.dispose();
}
if (!args.has('--node-only')) {
  const { runBenchPage } = await import('./chromium.mjs');
  console.log(formatTensorBench('Chromium', await runBenchPage('tensors.html', quick)));
}
