// Types for the WebGPU device backend (js/backends/webgpu/index.js).
/// <reference types="@webgpu/types" />

/** The error kinds the backend raises through `makeError`. */
export type WebGPUErrorKind = 'RuntimeError' | 'MemoryError' | 'ValueError' | 'TypeError';

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

/** A device allocation; it belongs to one device generation. */
export interface WebGPUAllocation {
  /** Unique per process; a runtime can use it as the tensor's data pointer value. */
  readonly id: number;
  readonly buffer: GPUBuffer;
  /** The size asked for (the GPU buffer is rounded up to a multiple of 4). */
  readonly nbytes: number;
  readonly generation: number;
  readonly freed: boolean;
  /** Over another library's buffer (importBuffer). */
  readonly imported: boolean;
  /** Imported: whether free() destroys the buffer. */
  readonly owned: boolean;
  /** Its buffer was handed out (exportBuffer): free() neither reuses nor destroys it. */
  readonly exported: boolean;
}

export type WebGPUDType = 'float32' | 'float16' | { code: number; bits: number; lanes?: number };

/** A compact row-major tensor in device memory. */
export interface WebGPUTensor {
  data: WebGPUAllocation;
  shape: readonly number[];
  dtype: WebGPUDType;
  /** Bytes from the start of the allocation; a multiple of the element size. */
  byteOffset?: number;
  /** Checked when present: only compact row-major strides are accepted. */
  strides?: readonly (number | bigint)[];
}

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

/** One kernel the runtime registers as a global function. */
export interface WebGPUKernel {
  /** Global function name, e.g. 'webgpu.matmul'. */
  readonly name: string;
  /** Backend method, called as backend[method](...args, out). */
  readonly method: string;
  readonly args: readonly { name: string; type: 'Tensor' | 'float' | 'Optional[int]' }[];
  readonly returns: 'Tensor';
  /** Checks the inputs (throws Error with .kind) and gives the output's shape and dtype. */
  output(...args: unknown[]): { shape: number[]; dtype: 'float32' | 'float16' };
  readonly doc: string;
}

export const KERNELS: readonly WebGPUKernel[];
export const WEBGPU_DEVICE_TYPE: 15;

export interface WebGPUBackend {
  readonly name: 'webgpu';
  readonly deviceType: 15;
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
   * 4, one made on another device and a destroyed one. owned: free()
   * destroys the buffer. `what` names the caller in errors.
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
  sub(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  mul(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  div(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  addScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  subScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  mulScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  divScalar(a: WebGPUTensor, scalar: number, out: WebGPUTensor): WebGPUTensor;
  matmul(a: WebGPUTensor, b: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
  /** axis null or undefined: all elements (out has shape []). */
  sum(a: WebGPUTensor, axis: number | null | undefined, out: WebGPUTensor): WebGPUTensor;
  max(a: WebGPUTensor, axis: number | null | undefined, out: WebGPUTensor): WebGPUTensor;
  /** Over the last axis. */
  softmax(a: WebGPUTensor, out: WebGPUTensor): WebGPUTensor;
}

export function createWebGPUBackend(options: WebGPUBackendOptions): WebGPUBackend;
