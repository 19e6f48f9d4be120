// node bench/webgpu.mjs [--quick] [--node-only | --browser-only]
// Benchmarks the WebGPU backend against raw WebGPU in Node (Dawn; by default
// its OpenGL ES backend on Mesa, set WEBFFI_DAWN_BACKEND=vulkan etc. on a
// machine with a GPU) and in headless Chromium (SwiftShader without a GPU).
import { runWebGPUBench, formatBench } from './webgpu_bench.mjs';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');

if (!args.has('--browser-only')) {
  const { nodeGPU } = await import('../tests/support/webgpu_node.mjs');
  const r = await runWebGPUBench(nodeGPU(process.env.WEBFFI_DAWN_BACKEND ?? 'opengles'), { quick });
  console.log(formatBench('Node, Dawn', r));
}
if (!args.has('--node-only')) {
  const { runBenchPage } = await import('./chromium.mjs');
  console.log(formatBench('Chromium', await runBenchPage('webgpu.html', quick)));
}
