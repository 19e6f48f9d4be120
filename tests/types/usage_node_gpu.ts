// Compiled (not run) by tests/node/types.test.mjs with @types/node and the
// DOM library (which WebGPU's types, @webgpu/types, build on, as npm
// `webgpu`'s own do): webffi/node-gpu as a Node user writes it.
import { installWebGPU, type InstallWebGPUOptions } from 'webffi/node-gpu';

export async function nodeGPU(): Promise<boolean> {
  const options: InstallWebGPUOptions = { backend: 'opengles' };
  const gpu: GPU = installWebGPU(options);
  const adapter: GPUAdapter | null = await gpu.requestAdapter();
  return adapter !== null && navigator.gpu === gpu && typeof GPUBufferUsage.STORAGE === 'number';
}
