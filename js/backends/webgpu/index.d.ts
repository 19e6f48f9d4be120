// Types for the WebGPU device backend (js/backends/webgpu/index.js).
/// <reference types="@webgpu/types" />

/**
 * The WebGPU device backend for `webgpu:0` (DLPack device type 15), usable
 * on its own: `createWebGPUBackend` gives memory operations and compute
 * kernels over a GPUDevice; a runtime creates one for itself and registers
 * its kernels as the `webgpu.*` global functions (`WebGPUGlobals`).
 *
 * @example
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load(); // finds WebGPU: navigator.gpu, or npm `webgpu` in Node
 * const x = await rt.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2] }).toDevice('webgpu');
 * const y = rt.getGlobal('webgpu.add_scalar')(rt.getGlobal('webgpu.matmul')(x, x), 1);
 * console.log(String(y), await y.data());
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * float32[2, 2]@webgpu:0 Float32Array(4) [ 8, 11, 16, 23 ]
 * ```
 * @module webffi/js/backends/webgpu
 */

import type { Tensor } from '../../index.js';

/**
 * The error kinds the backend raises through `makeError` (a runtime makes
 * them its error classes): a bad size or offset is a ValueError, a wrong
 * dtype a TypeError, an allocation past the device's limits a MemoryError, a
 * lost device a RuntimeError.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend, type WebGPUErrorKind } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const kinds: WebGPUErrorKind[] = [];
 * const be = createWebGPUBackend({ gpu, makeError: (kind, message) => { kinds.push(kind); return new Error(message); } });
 * await be.init();
 * const a = be.allocate(8);
 * try {
 *   be.upload(a, 2, new Uint8Array(4)); // offsets of writes are multiples of 4
 * } catch (e) {
 *   console.log(kinds, (e as Error).message);
 * }
 * be.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 'ValueError' ] upload: destination offset 2 is not a multiple of 4
 * ```
 */
export type WebGPUErrorKind = 'RuntimeError' | 'MemoryError' | 'ValueError' | 'TypeError';

/**
 * What `createWebGPUBackend` takes: the host's WebGPU entry point, how to
 * make errors, where to report a lost device, and which adapter to ask for.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend, type WebGPUBackendOptions } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const options: WebGPUBackendOptions = {
 *   gpu,
 *   logger: { warn: (message) => console.warn(message) }, // a device lost for another reason than dispose()
 *   powerPreference: 'high-performance',
 * };
 * const be = createWebGPUBackend(options);
 * console.log((await be.init()).featureLevel.length > 0);
 * be.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true
 * ```
 */
export interface WebGPUBackendOptions {
  /** `navigator.gpu` in browsers, or `create([...])` from npm `webgpu` in Node. */
  gpu?: GPU | null | undefined;
  /**
   * A GPUDevice another library made, used instead of acquiring one: init()
   * checks it against what the kernels need; dispose() leaves it to its owner;
   * after its loss init() rejects (webffi does not replace it).
   */
  device?: GPUDevice;
  /** Builds the runtime's error of a kind; default: an Error with `.kind`. */
  makeError?: (kind: WebGPUErrorKind, message: string) => Error;
  /** Receives one warning when the device is lost for a reason other than destroy(). */
  logger?: { warn?(message: string): void };
  /** Only this feature level; default: 'core', then 'compatibility'. */
  featureLevel?: 'core' | 'compatibility';
  powerPreference?: GPUPowerPreference;
}

/**
 * A device allocation (`be.allocate(nbytes)`): a GPUBuffer of at least
 * `nbytes`, which belongs to one device generation (after a device loss it
 * refuses every use with a RuntimeError).
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const be = createWebGPUBackend({ gpu, makeError: (kind, message) => Object.assign(new Error(message), { kind }) });
 * await be.init();
 * const a = be.allocate(10);
 * console.log(a.nbytes, a.buffer.size, a.generation, a.freed);
 * be.free(a);
 * console.log(a.freed);
 * be.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * 10 16 1 false
 * true
 * ```
 */
export interface WebGPUAllocation {
  /** Unique per process; a runtime can use it as the tensor's data pointer value. */
  readonly id: number;
  readonly buffer: GPUBuffer;
  /** The size asked for (the GPU buffer is rounded up to a multiple of 16, as other libraries' vec4 kernels read it). */
  readonly nbytes: number;
  readonly generation: number;
  readonly freed: boolean;
  /** Over another library's buffer (importBuffer). */
  readonly imported: boolean;
  /** Imported: whether free() destroys the buffer. */
  readonly owned: boolean;
  /** Imported: the buffer's usage as the engine gave it at import (transfers check this). */
  readonly usage?: number;
  /** Its buffer was handed out (exportBuffer): free() neither reuses nor destroys it. */
  readonly exported: boolean;
}

/**
 * The dtypes the kernels take: float32, and float16 where the adapter has
 * `shader-f16` (by name, or as DLPack's `{ code, bits, lanes }`).
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend, type WebGPUDType } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const be = createWebGPUBackend({ gpu, makeError: (kind, message) => Object.assign(new Error(message), { kind }) });
 * await be.init();
 * const dtype: WebGPUDType = { code: 2, bits: 32 }; // float32
 * const a = be.allocate(8);
 * be.upload(a, 0, new Float32Array([1, 2]));
 * be.mulScalar({ data: a, shape: [2], dtype }, 3, { data: a, shape: [2], dtype: 'float32' });
 * console.log(new Float32Array((await be.download(a, 0, 8)).slice().buffer));
 * be.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * Float32Array(2) [ 3, 6 ]
 * ```
 */
export type WebGPUDType = 'float32' | 'float16' | { code: number; bits: number; lanes?: number };

/**
 * A compact row-major tensor in device memory, as the kernels take it: an
 * allocation, a shape, a dtype and a byte offset into the allocation.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend, type WebGPUTensor } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const be = createWebGPUBackend({ gpu, makeError: (kind, message) => Object.assign(new Error(message), { kind }) });
 * await be.init();
 * const data = be.allocate(4 * 6);
 * be.upload(data, 0, new Float32Array([1, 2, 3, 4, 5, 6]));
 * const rows: WebGPUTensor = { data, shape: [2, 3], dtype: 'float32' };
 * const secondRow: WebGPUTensor = { data, shape: [3], dtype: 'float32', byteOffset: 12 };
 * const out = be.allocate(4 * 6);
 * be.add(rows, secondRow, { data: out, shape: [2, 3], dtype: 'float32' }); // the row broadcasts
 * console.log(new Float32Array((await be.download(out, 0, 24)).slice().buffer));
 * be.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * Float32Array(6) [ 5, 7, 9, 8, 10, 12 ]
 * ```
 */
export interface WebGPUTensor {
  data: WebGPUAllocation;
  shape: readonly number[];
  dtype: WebGPUDType;
  /** Bytes from the start of the allocation; a multiple of the element size. */
  byteOffset?: number;
  /** Checked when present: only compact row-major strides are accepted. */
  strides?: readonly (number | bigint)[];
}

/**
 * What `be.init()` resolves to (and `be.info()` gives): the device
 * generation, its feature level, adapter, limits and features, the dtypes
 * the kernels take there, and the bytes allocated.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend, type WebGPUInfo } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const be = createWebGPUBackend({ gpu });
 * const info: WebGPUInfo = await be.init();
 * console.log(info.name, info.deviceType, info.generation, info.dtypes.includes('float32'), info.limits.maxBufferSize > 0);
 * be.allocate(1024);
 * console.log(be.info()!.bytesAllocated);
 * be.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * webgpu 15 1 true true
 * 1024
 * ```
 */
export interface WebGPUInfo {
  name: 'webgpu';
  deviceType: 15;
  /** Increments each time init() acquires a new device. */
  generation: number;
  featureLevel: 'core' | 'compatibility';
  /** The device was made by another library (WebGPUBackendOptions.device). */
  adopted: boolean;
  adapter: { vendor: string; architecture: string; device: string; description: string };
  limits: {
    maxBufferSize: number;
    maxStorageBufferBindingSize: number;
    maxComputeWorkgroupStorageSize: number;
    maxComputeInvocationsPerWorkgroup: number;
    maxComputeWorkgroupsPerDimension: number;
    maxStorageBuffersPerShaderStage: number;
    minStorageBufferOffsetAlignment: number;
  };
  features: string[];
  /** The dtypes the kernels accept on this device. */
  dtypes: ('float32' | 'float16')[];
  /** Bytes held by live allocations. */
  bytesAllocated: number;
}

/**
 * One kernel the runtime registers as a global function (an entry of
 * `KERNELS`): its global name, the backend method behind it, its argument
 * schema, and the rule that checks its inputs and gives its output's shape
 * and dtype (no GPU needed).
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { KERNELS, type WebGPUKernel } from 'webffi/js/backends/webgpu/index.js';
 * const sum: WebGPUKernel = KERNELS.find((k) => k.name === 'webgpu.sum')!;
 * console.log(sum.method, sum.args.map((a) => `${a.name}: ${a.type}`).join(', '), '->', sum.returns);
 * console.log(sum.output({ shape: [4, 5], dtype: 'float32' }, 1), sum.doc);
 * try {
 *   sum.output({ shape: [4, 5], dtype: 'float32' }, 2);
 * } catch (e) {
 *   console.log((e as Error & { kind: string }).kind, (e as Error).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * sum a: Tensor, axis: Optional[int] -> Tensor
 * { shape: [ 4 ], dtype: 'float32' } sum over one axis, or over all elements when axis is null
 * ValueError webgpu.sum: axis 2 is out of range for a 2-D tensor
 * ```
 */
export interface WebGPUKernel {
  /** Global function name, e.g. 'webgpu.matmul'. */
  readonly name: string;
  /** Backend method, called as backend[method](...args, out). */
  readonly method: string;
  /** The arguments, as the global function takes them (`out` is made by the runtime). */
  readonly args: readonly { name: string; type: 'Tensor' | 'float' | 'Optional[int]' }[];
  /** What the global function returns: a new tensor on webgpu:0. */
  readonly returns: 'Tensor';
  /** Checks the inputs (throws Error with .kind) and gives the output's shape and dtype. */
  output(...args: unknown[]): { shape: number[]; dtype: 'float32' | 'float16' };
  /** One line on what it computes (the global's doc). */
  readonly doc: string;
}

/**
 * The kernels the runtime registers as global functions (`webgpu.add`, ...
 * `webgpu.softmax`: see `WebGPUGlobals` for each one's signature and
 * behaviour), in the order registered.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { KERNELS } from 'webffi/js/backends/webgpu/index.js';
 * for (const k of KERNELS) console.log(`${k.name}(${k.args.map((a) => a.name).join(', ')})`);
 * ```
 * <!-- doc: output -->
 * ```text
 * webgpu.add(a, b)
 * webgpu.sub(a, b)
 * webgpu.mul(a, b)
 * webgpu.div(a, b)
 * webgpu.add_scalar(a, scalar)
 * webgpu.sub_scalar(a, scalar)
 * webgpu.mul_scalar(a, scalar)
 * webgpu.div_scalar(a, scalar)
 * webgpu.matmul(a, b)
 * webgpu.sum(a, axis)
 * webgpu.max(a, axis)
 * webgpu.softmax(a)
 * ```
 */
export const KERNELS: readonly WebGPUKernel[];
/**
 * DLPack's device type of WebGPU (15, as TVM's `kDLWebGPU`): `rt.device(15)`
 * is `webgpu:0`.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { load } from 'webffi';
 * import { WEBGPU_DEVICE_TYPE } from 'webffi/js/backends/webgpu/index.js';
 * const rt = await load({ autoloadBackends: false });
 * console.log(WEBGPU_DEVICE_TYPE, String(rt.device(WEBGPU_DEVICE_TYPE)));
 * ```
 * <!-- doc: output -->
 * ```text
 * 15 webgpu:0
 * ```
 */
export const WEBGPU_DEVICE_TYPE: 15;

/**
 * A WebGPU backend (`createWebGPUBackend`): the device, its memory
 * (allocate, upload, download, copy), and the compute kernels, which record
 * into one command batch submitted at the end of the current task or before
 * anything that observes it.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const be = createWebGPUBackend({ gpu });
 * await be.init();                                   // lazy, single-flight; a failure is remembered
 * const x = be.allocate(4 * 4);
 * be.upload(x, 0, new Float32Array([1, 2, 3, 4]));
 * const y = be.allocate(4 * 4);
 * be.copy(x, 0, y, 0, 16);                           // device to device
 * const t = (data: typeof x, shape: number[]) => ({ data, shape, dtype: 'float32' as const });
 * be.matmul(t(x, [2, 2]), t(y, [2, 2]), t(y, [2, 2])); // recorded; out may alias an input
 * await be.sync();                                   // submitted, and the GPU is done
 * const bytes = await be.download(y, 0, 16);
 * console.log(be.ready, new Float32Array(bytes.slice().buffer));
 * be.dispose();                                      // destroys the device; init() would acquire a new one
 * ```
 * <!-- doc: output -->
 * ```text
 * true Float32Array(4) [ 7, 10, 15, 22 ]
 * ```
 */
export interface WebGPUBackend {
  /** 'webgpu'. */
  readonly name: 'webgpu';
  /** 15. */
  readonly deviceType: 15;
  /** The kernels (KERNELS). */
  readonly kernels: readonly WebGPUKernel[];
  /** True between a successful init() and the device's loss. */
  readonly ready: boolean;
  /** The GPUDevice, for callers that run their own pipelines (throws before init). */
  readonly device: GPUDevice;
  /** The GPUDevice, handed to another library: GPU errors are then reported with a note and no longer kept from the console. */
  shareDevice(): GPUDevice;

  /** Lazy and single-flight; a failure is remembered; after a device loss it acquires a new device. */
  init(): Promise<WebGPUInfo>;
  /** null before init() and after a device loss. */
  info(): WebGPUInfo | null;

  /** Synchronous (C callers allocate synchronously); larger than maxBufferSize: MemoryError. */
  allocate(nbytes: number): WebGPUAllocation;
  /** Releases an allocation (its buffer is destroyed). */
  free(handle: WebGPUAllocation): void;
  /** Host to device. byteOffset is a multiple of 4; so is the size unless the write ends the allocation. */
  upload(handle: WebGPUAllocation, byteOffset: number, bytes: ArrayBuffer | ArrayBufferView): void;
  /** Device to host through a pooled staging buffer; flushes pending work first. */
  download(handle: WebGPUAllocation, byteOffset: number, nbytes: number, out?: Uint8Array): Promise<Uint8Array>;
  /** Device to device, recorded in the current command batch. Imported buffers need COPY_SRC / COPY_DST for transfers (a ValueError names the missing one). */
  copy(src: WebGPUAllocation, srcOffset: number, dst: WebGPUAllocation, dstOffset: number, nbytes: number): void;
  /**
   * An allocation over another library's GPUBuffer (no copy). Rejects
   * (TypeError / ValueError) what is not a GPUBuffer, a buffer without
   * STORAGE usage, a mapped one, one whose size is not a non-zero multiple of
   * 4, one made on another device and a destroyed one. Size, usage and map
   * state are read through the engine's own GPUBuffer accessors, once: a
   * buffer's own lying properties are not asked, and a Proxy of a GPUBuffer
   * or an object made from one is a TypeError. owned: free() destroys the
   * buffer. `what` names the caller in errors.
   */
  importBuffer(buffer: GPUBuffer, owned?: boolean, what?: string): Promise<WebGPUAllocation>;
  /** The allocation's GPUBuffer, for another library: recorded work is submitted first; the allocation becomes `exported`. */
  exportBuffer(handle: WebGPUAllocation): GPUBuffer;
  /** Submits the recorded work without waiting for it. */
  flush(): void;
  /**
   * Submits pending work and waits for it; rejects with deferred GPU errors
   * (ValueError / MemoryError), or a RuntimeError naming the loss when the
   * device was lost and init() has not run since.
   */
  sync(): Promise<void>;
  /** Destroys the device (loss reason "destroyed"); init() acquires a new one. An adopted device is only released, not destroyed. */
  dispose(): void;

  // Kernels: record work into `out` (returned) and check shapes and dtypes.
  // Recorded work is batched into one command encoder (one compute pass)
  // and submitted at the end of the current task, every 256 dispatches, or
  // before anything that observes it (upload, download, copy, sync).
  /**
   * add/sub/mul/div: a and b share a dtype; their shapes broadcast as in NumPy
   * (right-aligned, each dimension equal or 1) and out has the broadcast shape.
   * Broadcasts needing more than 4 dimensions once neighbours that broadcast
   * alike are merged are a ValueError.
   */
  add(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  /** out = a - b (see add). */
  sub(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  /** out = a * b (see add). */
  mul(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  /** out = a / b (see add). */
  div(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  /** out = a + scalar; out has a's shape and dtype. */
  addScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  /** out = a - scalar. */
  subScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  /** out = a * scalar. */
  mulScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  /** out = a / scalar. */
  divScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  /** out[M, N] = a[M, K] b[K, N] (2-D; 32x32 tiles, f32 accumulation). */
  matmul(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  /** axis null or undefined: all elements (out has shape []). */
  sum(a: WebGPUTensor, axis: number | null | undefined, out: WebGPUTensor): WebGPUTensor;
  /** The maximum over `axis` (see sum); an empty reduction is a ValueError. */
  max(a: WebGPUTensor, axis: number | null | undefined, out: WebGPUTensor): WebGPUTensor;
  /** Over the last axis. */
  softmax(a: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
}

/**
 * A WebGPU backend over the host's WebGPU (`navigator.gpu` in browsers, npm
 * `webgpu`'s `create([...])` in Node). It depends on nothing else in webffi;
 * a runtime creates its own (`rt.backends.get('webgpu')`), and this is for
 * using the device and kernels without one, or for tests. Nothing happens
 * until `init()`.
 *
 * @group WebGPU backend
 * @example
 * ```ts
 * import { createWebGPUBackend } from 'webffi/js/backends/webgpu/index.js';
 * import { create } from 'webgpu';
 * process.env.EGL_PLATFORM ??= 'surfaceless'; // Node on Linux without a display: Dawn on Mesa
 * const gpu = globalThis.navigator?.gpu ?? create(['backend=opengles']);
 * const be = createWebGPUBackend({ gpu, makeError: (kind, message) => Object.assign(new Error(message), { kind }) });
 * await be.init();
 * const a = be.allocate(4 * 6);
 * be.upload(a, 0, new Float32Array([1, 2, 3, 4, 5, 6]));
 * const out = be.allocate(4 * 6);
 * const t = (data: typeof a) => ({ data, shape: [2, 3], dtype: 'float32' as const });
 * be.softmax(t(a), t(out));                  // recorded; submitted with the next read
 * const bytes = await be.download(out, 0, 24);
 * console.log(Array.from(new Float32Array(bytes.slice().buffer), (v) => v.toFixed(3)).join(' '));
 * be.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * 0.090 0.245 0.665 0.090 0.245 0.665
 * ```
 */
export function createWebGPUBackend(options: WebGPUBackendOptions): WebGPUBackend;

/**
 * The `webgpu.*` global functions a runtime registers once its WebGPU
 * backend is there (a browser's `navigator.gpu`, or npm `webgpu` in Node):
 * one per entry of `KERNELS`, callable from JS (`rt.getGlobal`) and from C
 * (`TVMFFIFunctionGetGlobal`) alike. Each takes tensors on `webgpu:0`
 * (float32, and float16 where the adapter has `shader-f16`; compact
 * row-major) and returns a new tensor on `webgpu:0`; the work is recorded
 * into the backend's command batch and runs when something reads a result
 * (`await t.data()`), so calls chain on the GPU without waiting. Shapes and
 * dtypes are checked before anything reaches the GPU: a bad shape, or a
 * tensor elsewhere than `webgpu:0`, is a ValueError that says what to do,
 * a wrong dtype or argument count a TypeError naming the signature.
 *
 * The members are the globals by name (use them to type what
 * `rt.getGlobal` returns).
 *
 * @group WebGPU kernels
 * @example
 * ```ts
 * import { load } from 'webffi';
 * import type { WebGPUGlobals } from 'webffi/js/backends/webgpu/index.js';
 * const rt = await load();
 * const matmul: WebGPUGlobals['webgpu.matmul'] = rt.getGlobal('webgpu.matmul');
 * const softmax: WebGPUGlobals['webgpu.softmax'] = rt.getGlobal('webgpu.softmax');
 * const x = await rt.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2] }).toDevice('webgpu');
 * const y = softmax(matmul(x, x)); // two dispatches in one batch; nothing waits yet
 * console.log(y.shape, Array.from(await y.data(), (v) => v.toFixed(3)));
 * try {
 *   matmul(x, rt.tensor(new Float32Array(6), { shape: [3, 2] }));
 * } catch (e) {
 *   console.log(`${(e as Error).name}: ${(e as Error).message}`);
 * }
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 2, 2 ] [ '0.047', '0.953', '0.001', '0.999' ]
 * ValueError: webgpu.matmul: argument b is on cpu:0, not webgpu:0; move it with `await tensor.toDevice('webgpu')`
 * ```
 */
export interface WebGPUGlobals {
  /**
   * Elementwise `a + b`: a and b have one dtype, and their shapes broadcast
   * as in NumPy (aligned at the right, each dimension equal or 1), giving
   * the output's shape: `x[M, N] + bias[N]`, `x[M, 1] + y[1, N]`. Same-shape
   * inputs run a plain elementwise kernel; neighbouring dimensions that
   * broadcast alike are merged, and more than 4 left is a ValueError, as are
   * shapes that do not broadcast.
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3, 4, 5, 6], [2, 3]);
   * const bias = await gpu([10, 20, 30], [3]);
   * const add = rt.getGlobal('webgpu.add');
   * console.log(await add(x, x).data());        // same shapes
   * console.log(await add(x, bias).data());     // bias[3] broadcasts over the rows of x[2, 3]
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(6) [ 2, 4, 6, 8, 10, 12 ]
   * Float32Array(6) [ 11, 22, 33, 14, 25, 36 ]
   * ```
   */
  'webgpu.add': (a: Tensor, b: Tensor) => Tensor<Float32Array | Uint16Array>;
  /**
   * Elementwise `a - b`: a and b have one dtype, and their shapes broadcast
   * as in NumPy (aligned at the right, each dimension equal or 1), giving
   * the output's shape: `x[M, N] - bias[N]`, `x[M, 1] - y[1, N]`. Same-shape
   * inputs run a plain elementwise kernel; neighbouring dimensions that
   * broadcast alike are merged, and more than 4 left is a ValueError, as are
   * shapes that do not broadcast.
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const column = await gpu([1, 2], [2, 1]);
   * const row = await gpu([10, 20, 30], [1, 3]);
   * const d = rt.getGlobal('webgpu.sub')(row, column); // [1, 3] - [2, 1] -> [2, 3]
   * console.log(d.shape, await d.data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * [ 2, 3 ] Float32Array(6) [ 9, 19, 29, 8, 18, 28 ]
   * ```
   */
  'webgpu.sub': (a: Tensor, b: Tensor) => Tensor<Float32Array | Uint16Array>;
  /**
   * Elementwise `a * b`: a and b have one dtype, and their shapes broadcast
   * as in NumPy (aligned at the right, each dimension equal or 1), giving
   * the output's shape: `x[M, N] * bias[N]`, `x[M, 1] * y[1, N]`. Same-shape
   * inputs run a plain elementwise kernel; neighbouring dimensions that
   * broadcast alike are merged, and more than 4 left is a ValueError, as are
   * shapes that do not broadcast.
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3, 4], [2, 2]);
   * const scale = await gpu([10, 100], [2, 1]);   // one factor per row
   * console.log(await rt.getGlobal('webgpu.mul')(x, scale).data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(4) [ 10, 20, 300, 400 ]
   * ```
   */
  'webgpu.mul': (a: Tensor, b: Tensor) => Tensor<Float32Array | Uint16Array>;
  /**
   * Elementwise `a / b`: a and b have one dtype, and their shapes broadcast
   * as in NumPy (aligned at the right, each dimension equal or 1), giving
   * the output's shape: `x[M, N] / bias[N]`, `x[M, 1] / y[1, N]`. Same-shape
   * inputs run a plain elementwise kernel; neighbouring dimensions that
   * broadcast alike are merged, and more than 4 left is a ValueError, as are
   * shapes that do not broadcast.
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3, 4], [4]);
   * const div = rt.getGlobal('webgpu.div');
   * console.log(await div(x, await gpu([2], [1])).data());
   * try {
   *   div(x, await gpu([1, 2, 3], [3]));
   * } catch (e) {
   *   console.log(`${(e as Error).name}: ${(e as Error).message}`);
   * }
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(4) [ 0.5, 1, 1.5, 2 ]
   * ValueError: webgpu.div: shapes [4] and [3] cannot be broadcast (dimension -1: 4 vs 3)
   * ```
   */
  'webgpu.div': (a: Tensor, b: Tensor) => Tensor<Float32Array | Uint16Array>;
  /**
   * Elementwise `a + scalar`: the output has a's shape and dtype; the scalar
   * is a number (a float; an int is taken as one).
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3], [3]);
   * console.log(await rt.getGlobal('webgpu.add_scalar')(x, 0.5).data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(3) [ 1.5, 2.5, 3.5 ]
   * ```
   */
  'webgpu.add_scalar': (a: Tensor, scalar: number) => Tensor<Float32Array | Uint16Array>;
  /**
   * Elementwise `a - scalar`: the output has a's shape and dtype; the scalar
   * is a number (a float; an int is taken as one).
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3], [3]);
   * console.log(await rt.getGlobal('webgpu.sub_scalar')(x, 1).data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(3) [ 0, 1, 2 ]
   * ```
   */
  'webgpu.sub_scalar': (a: Tensor, scalar: number) => Tensor<Float32Array | Uint16Array>;
  /**
   * Elementwise `a * scalar`: the output has a's shape and dtype; the scalar
   * is a number (a float; an int is taken as one).
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3], [3]);
   * console.log(await rt.getGlobal('webgpu.mul_scalar')(x, -2).data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(3) [ -2, -4, -6 ]
   * ```
   */
  'webgpu.mul_scalar': (a: Tensor, scalar: number) => Tensor<Float32Array | Uint16Array>;
  /**
   * Elementwise `a / scalar`: the output has a's shape and dtype; the scalar
   * is a number (a float; an int is taken as one).
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3], [3]);
   * console.log(await rt.getGlobal('webgpu.div_scalar')(x, 4).data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(3) [ 0.25, 0.5, 0.75 ]
   * ```
   */
  'webgpu.div_scalar': (a: Tensor, scalar: number) => Tensor<Float32Array | Uint16Array>;
  /**
   * The matrix product of 2-D `a[M, K]` and `b[K, N]`: `out[M, N]`,
   * accumulated in f32 (32x32 output tiles per workgroup). Another rank, or
   * inner dimensions that differ, is a ValueError.
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const a = await gpu([1, 2, 3, 4, 5, 6], [2, 3]);
   * const b = await gpu([1, 0, 0, 1, 1, 1], [3, 2]);
   * const y = rt.getGlobal('webgpu.matmul')(a, b);
   * console.log(y.shape, await y.data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * [ 2, 2 ] Float32Array(4) [ 4, 5, 10, 11 ]
   * ```
   */
  'webgpu.matmul': (a: Tensor, b: Tensor) => Tensor<Float32Array | Uint16Array>;
  /**
   * The sum over one axis (negative counts from the end), which the output
   * drops, or over all elements when `axis` is null or left out (the output
   * has shape `[]`). Long axes with few outputs are reduced in parallel
   * passes. An axis out of range is a ValueError.
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 2, 3, 4, 5, 6], [2, 3]);
   * const sum = rt.getGlobal('webgpu.sum');
   * console.log(await sum(x, 0).data(), await sum(x, -1).data());
   * const all = sum(x);
   * console.log(all.shape, await all.data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(3) [ 5, 7, 9 ] Float32Array(2) [ 6, 15 ]
   * [] Float32Array(1) [ 21 ]
   * ```
   */
  'webgpu.sum': (a: Tensor, axis?: number | null) => Tensor<Float32Array | Uint16Array>;
  /**
   * The maximum over one axis, which the output drops, or over all elements
   * when `axis` is null or left out (as `webgpu.sum`). An empty reduction is
   * a ValueError (max has no identity).
   *
   * @example
   * ```ts
   * import { load } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([1, 9, 3, 4, 5, 6], [2, 3]);
   * const max = rt.getGlobal('webgpu.max');
   * console.log(await max(x, 1).data(), await max(x).data());
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * Float32Array(2) [ 9, 6 ] Float32Array(1) [ 9 ]
   * ```
   */
  'webgpu.max': (a: Tensor, axis?: number | null) => Tensor<Float32Array | Uint16Array>;
  /**
   * Softmax over the last axis (`exp(x - max) / sum`, so large inputs do not
   * overflow): the output has a's shape and each row sums to 1. A 0-D tensor
   * is a ValueError.
   *
   * @example
   * ```ts
   * import { load, type Tensor } from 'webffi';
   * const rt = await load();
   * const gpu = (data: number[], shape: number[]) => rt.tensor(new Float32Array(data), { shape }).toDevice('webgpu');
   * const x = await gpu([0, 0, Math.log(2), 1000, 1000, 1000], [2, 3]);
   * const y: Tensor<Float32Array> = rt.getGlobal('webgpu.softmax')(x);
   * console.log(Array.from(await y.data(), (v) => v.toFixed(3)).join(' '));
   * rt.dispose();
   * ```
   * <!-- doc: output -->
   * ```text
   * 0.250 0.250 0.500 0.333 0.333 0.333
   * ```
   */
  'webgpu.softmax': (a: Tensor) => Tensor<Float32Array | Uint16Array>;
}
