// Types for webffi/node-gpu (js/node_gpu.js).
/// <reference types="@webgpu/types" />

/**
 * WebGPU in Node where browser libraries look for it. Dawn (npm `webgpu`,
 * which the application installs: `npm install webgpu`) gives Node a GPU
 * object, but onnxruntime-web and TensorFlow.js look for `navigator.gpu`
 * and the WebGPU classes and constants (`GPUDevice`, `GPUBufferUsage`, ...)
 * as globals. `installWebGPU()` puts them there; webffi's own `load()` then
 * uses the same GPU. A runtime that only uses webffi needs none of this:
 * `load()` finds npm `webgpu` by itself. The types are WebGPU's own
 * (@webgpu/types, which npm `webgpu` brings), which build on the DOM
 * library: `"lib": ["es2022", "dom"]`, as for npm `webgpu`'s types.
 *
 * @example
 * ```ts
 * import { installWebGPU } from 'webffi/node-gpu';
 * import { load } from 'webffi';
 * const gpu = installWebGPU();
 * console.log(navigator.gpu === gpu, typeof GPUBufferUsage.STORAGE);
 * const rt = await load(); // webffi on navigator.gpu too
 * await rt.backends.ensure('webgpu');
 * console.log(rt.gpuDevice instanceof GPUDevice);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true number
 * true
 * ```
 * @module webffi/node-gpu
 */

/**
 * What `installWebGPU` takes: at most one of `backend` and `gpu`.
 *
 * @example
 * ```ts
 * import { installWebGPU, type InstallWebGPUOptions } from 'webffi/node-gpu';
 * const options: InstallWebGPUOptions = { backend: 'opengles' }; // Dawn on Mesa's llvmpipe, no GPU needed
 * const gpu = installWebGPU(options);
 * const adapter = await gpu.requestAdapter(); // no core-level adapter there: the compatibility level answers
 * console.log(adapter !== null);
 * ```
 * <!-- doc: output -->
 * ```text
 * true
 * ```
 */
export interface InstallWebGPUOptions {
  /**
   * A Dawn backend by name (`'vulkan'`, `'opengles'`, `'metal'`, `'d3d12'`,
   * `'null'`). Default: as `load()` chooses (`WEBFFI_DAWN_BACKEND`, else
   * the platform's, falling back to OpenGL ES, which runs on Mesa's llvmpipe
   * without a GPU or a display).
   */
  backend?: string;
  /** A GPU object made with `create([...])` from npm `webgpu`, installed as it is. */
  gpu?: GPU;
}

/**
 * Gives Node the browser's WebGPU globals from Dawn and returns the GPU it
 * put at `navigator.gpu`:
 * - `navigator.gpu`, and every WebGPU class and constant of npm `webgpu`
 *   (`GPUDevice`, `GPUBufferUsage`, `GPUMapMode`, ...) as a global, where
 *   Node has none of that name;
 * - an adapter at the compatibility level when a request that names no
 *   `featureLevel` finds none at the default (core) level, as on Dawn's
 *   OpenGL ES backend (onnxruntime-web asks for one even when it is given a
 *   device, and fails on `null`);
 * - `GPUQueue.writeBuffer` and `writeTexture` that copy data from a
 *   `SharedArrayBuffer` first: Dawn refuses it ("Invalid argument"), and
 *   onnxruntime-web's threaded wasm hands it views of its shared memory.
 *
 * Each call installs a new GPU; every one stays reachable for the process's
 * life, as Dawn's devices need their instance. Options that are not an
 * object, a backend that is not a string or a `gpu` without
 * `requestAdapter` are a `TypeError`.
 *
 * @example
 * ```ts
 * import { installWebGPU } from 'webffi/node-gpu';
 * installWebGPU();
 * const adapter = await navigator.gpu.requestAdapter();
 * const device = await adapter!.requestDevice();
 * const buffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
 * const shared = new Float32Array(new SharedArrayBuffer(16)).fill(7);
 * device.queue.writeBuffer(buffer, 0, shared); // Dawn alone: Error: Invalid argument
 * await buffer.mapAsync(GPUMapMode.READ);
 * console.log(new Float32Array(buffer.getMappedRange()));
 * device.destroy();
 * ```
 * <!-- doc: output -->
 * ```text
 * Float32Array(4) [ 7, 7, 7, 7 ]
 * ```
 */
export function installWebGPU(options?: InstallWebGPUOptions): GPU;
