// The WebGPU device backend: adapter and device acquisition, device memory
// (allocate/free/upload/download/copy), error reporting and device loss.
// It depends on nothing else in webffi: the runtime hands it a `gpu` object
// (navigator.gpu, or `create([...])` from npm `webgpu` in Node) and a
// `makeError(kind, message)` that builds the runtime's error values, and
// plugs it in as the backend for device type 15 (`webgpu:0`).

import { BufferUsage, MapMode } from './gpu_flags.js';
import { CommandBatch } from './batch.js';
import { StagingPool } from './staging.js';
import { KERNELS, kernelMethods } from './kernels.js';

export { KERNELS };
export const WEBGPU_DEVICE_TYPE = 15;

// What the kernels need; every conforming adapter (core or compatibility)
// has at least this, so a shortfall means a broken or unusual adapter.
const REQUIRED_LIMITS = {
  maxStorageBuffersPerShaderStage: 3,
  maxComputeInvocationsPerWorkgroup: 64,
  maxComputeWorkgroupSizeX: 64,
  maxComputeWorkgroupStorageSize: 8192,
  maxUniformBufferBindingSize: 256,
};
// Requested at the adapter's maximum: large tensors fit, and kernels TVM
// compiled (which ask for workgroups of 256 invocations, 32 KiB of
// workgroup memory and more storage buffers than the defaults) run.
const RAISED_LIMITS = [
  'maxBufferSize', 'maxStorageBufferBindingSize', 'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY', 'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupStorageSize', 'maxStorageBuffersPerShaderStage', 'maxComputeWorkgroupsPerDimension',
];
// Enabled where the adapter has them (TVM's f16 and subgroup kernels use them).
const OPTIONAL_FEATURES = ['shader-f16', 'subgroups'];
const LOST_GRACE_MS = 250;
const REPORTED_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'minStorageBufferOffsetAlignment',
];

function defaultMakeError(kind, message) {
  const e = new Error(message);
  e.kind = kind;
  return e;
}

// The advice fits where the code runs: a page's reader gets browser advice, Node's Node advice.
const IN_NODE = typeof process !== 'undefined' && !!process.versions?.node;
const NO_GPU_HINT = 'WebGPU is not available: no GPU object (navigator.gpu is undefined). ' + (IN_NODE
  ? "In Node pass `create([...])` from npm `webgpu` as `gpu` (on Linux without a GPU: create(['backend=opengles']) " +
    'with EGL_PLATFORM=surfaceless and Mesa installed)'
  : 'WebGPU needs a secure context (https, or http on localhost) and a browser that has it; ' +
    'Chromium on a machine without a supported GPU needs --enable-unsafe-webgpu');
const noAdapterHint = (levels) =>
  `No WebGPU adapter found: requestAdapter() returned null at feature level ${levels.join(' and ')}. ` + (IN_NODE
    ? "Dawn found no usable GPU; create(['backend=opengles']) with EGL_PLATFORM=surfaceless runs on Mesa's " +
      'llvmpipe (libegl1 libegl-mesa0 libgl1-mesa-dri)'
    : 'The browser offers no usable GPU (its GPU or driver may be blocklisted: chrome://gpu says why in Chromium); ' +
      'Chromium on a machine without a supported GPU needs --enable-unsafe-webgpu (SwiftShader)');

/** One acquired GPUDevice and everything that lives and dies with it. */
class DeviceState {
  constructor(generation, adapter, device, featureLevel) {
    this.generation = generation;
    this.adapter = adapter;
    this.device = device;
    this.featureLevel = featureLevel;
    // Fixed for the device, copied into a plain object: reading device.limits
    // builds a new object, and each of its fields is a native getter.
    this.limits = {};
    for (const k of REPORTED_LIMITS) this.limits[k] = device.limits[k];
    this.hasF16 = device.features.has('shader-f16');
    this.batch = new CommandBatch(device);
    this.staging = new StagingPool(device);
    this.pipelines = new Map();
    this.layouts = []; // bind group layouts by number of input tensors and parameter kind
    this.params = new Map(); // shape-only kernel parameters -> their uniform buffer (kernels.js)
    this.nextParamsId = 0;
    this.lost = null; // { reason, message } once device.lost resolved
    this.deferredError = null; // first uncaptured GPU error not yet reported
    this.bytesAllocated = 0;
    this.tail = new Uint8Array(4); // scratch for a write's last partial word
  }
}

let nextAllocationId = 0;

/** A device allocation. Knows the device generation it was made on. */
class WebGPUAllocation {
  constructor(state, buffer, nbytes) {
    this.id = nextAllocationId++;
    this.state = state;
    this.buffer = buffer;
    this.nbytes = nbytes;
    this.freed = false;
  }
  get generation() {
    return this.state.generation;
  }
}

class WebGPUBackend {
  #gpu;
  #makeError;
  #logger;
  #options;
  #state = null;
  #lostState = null; // the last device, once lost, until init() replaces it
  #initPromise = null;
  #generation = 0;

  constructor({ gpu, makeError = defaultMakeError, logger = console, ...options }) {
    this.#gpu = gpu;
    this.#makeError = makeError;
    this.#logger = logger;
    this.#options = options;
    this.name = 'webgpu';
    this.deviceType = WEBGPU_DEVICE_TYPE;
    this.kernels = KERNELS;
  }

  /**
   * Acquires adapter and device once; concurrent calls share the attempt, a
   * failure is remembered (later calls reject with the same error), and after
   * a device loss the next call acquires a new device.
   */
  init() {
    this.#initPromise ??= this.#acquire();
    return this.#initPromise;
  }

  get ready() {
    return this.#state !== null;
  }

  /** The GPUDevice, for callers that build their own pipelines. */
  get device() {
    return this.#current('device').device;
  }

  info() {
    const s = this.#state;
    if (!s) return null;
    const a = s.adapter.info ?? {};
    const limits = {};
    for (const k of REPORTED_LIMITS) limits[k] = s.limits[k];
    return {
      name: this.name,
      deviceType: this.deviceType,
      generation: s.generation,
      featureLevel: s.featureLevel,
      adapter: {
        vendor: a.vendor ?? '',
        architecture: a.architecture ?? '',
        device: a.device ?? '',
        description: a.description ?? '',
      },
      limits,
      features: [...s.device.features].sort(),
      dtypes: s.hasF16 ? ['float32', 'float16'] : ['float32'],
      bytesAllocated: s.bytesAllocated,
    };
  }

  allocate(nbytes) {
    const s = this.#current('allocate');
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) {
      throw this.#makeError('ValueError', `allocate: size must be a non-negative integer, got ${String(nbytes)}`);
    }
    const max = s.limits.maxBufferSize;
    if (nbytes > max) {
      throw this.#makeError(
        'MemoryError',
        `WebGPU out of memory: cannot allocate ${nbytes} bytes, the device's maxBufferSize is ${max} bytes`,
      );
    }
    const device = s.device;
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    let buffer;
    try {
      buffer = device.createBuffer({
        size: Math.max(4, align4(nbytes)),
        usage: BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST,
      });
    } finally {
      const validation = device.popErrorScope();
      const oom = device.popErrorScope();
      this.#watchAllocation(s, nbytes, validation, oom);
    }
    s.bytesAllocated += buffer.size;
    return new WebGPUAllocation(s, buffer, nbytes);
  }

  free(handle) {
    this.#checkHandle(handle, 'free', true);
    handle.freed = true;
    const s = handle.state;
    if (s.lost) return; // the device took its memory with it
    s.bytesAllocated -= handle.buffer.size;
    s.batch.destroyAfterSubmit(handle.buffer);
  }

  /** Host to device: writes `bytes` (an ArrayBuffer or a view) at byteOffset. */
  upload(handle, byteOffset, bytes) {
    const s = this.#checkHandle(handle, 'upload');
    const view = ArrayBuffer.isView(bytes) ? bytes : isArrayBuffer(bytes) ? new Uint8Array(bytes) : null;
    if (!view) throw this.#makeError('TypeError', 'upload: bytes must be an ArrayBuffer or a typed array');
    const nbytes = view.byteLength;
    this.#checkRange('upload', handle, byteOffset, nbytes, true);
    if (nbytes === 0) return;
    if (s.batch.pending) s.batch.flush(); // earlier kernels must see the old contents
    const queue = s.device.queue;
    const whole = nbytes & ~3;
    if (whole) queue.writeBuffer(handle.buffer, byteOffset, view.buffer, view.byteOffset, whole);
    if (whole !== nbytes) {
      // The last partial word ends the allocation, so its padding is ours.
      s.tail.fill(0);
      s.tail.set(new Uint8Array(view.buffer, view.byteOffset + whole, nbytes - whole));
      queue.writeBuffer(handle.buffer, byteOffset + whole, s.tail.buffer, 0, 4);
    }
  }

  /** Device to host. Resolves to `out` (or a new Uint8Array) holding the bytes. */
  async download(handle, byteOffset, nbytes, out) {
    const s = this.#checkHandle(handle, 'download');
    this.#checkRange('download', handle, byteOffset, nbytes, false);
    if (out !== undefined && !(out instanceof Uint8Array && out.byteLength >= nbytes)) {
      throw this.#makeError('TypeError', `download: out must be a Uint8Array of at least ${nbytes} bytes`);
    }
    const result = out ?? new Uint8Array(nbytes);
    if (nbytes === 0) return result;
    const start = byteOffset & ~3;
    const size = align4(byteOffset + nbytes) - start;
    const staging = s.staging.acquire(size);
    s.batch.copy(handle.buffer, start, staging, 0, size);
    s.batch.flush(); // the copy and all work before it, in one submit
    try {
      await staging.mapAsync(MapMode.READ, 0, size);
    } catch (e) {
      staging.destroy();
      // A loss aborts the map before device.lost settles; give it a moment
      // so the error names the loss.
      if (!s.lost) await Promise.race([s.device.lost, new Promise((resolve) => setTimeout(resolve, LOST_GRACE_MS))]);
      throw this.#afterFailure(s, 'download', e);
    }
    result.set(new Uint8Array(staging.getMappedRange(0, size), byteOffset - start, nbytes));
    staging.unmap();
    s.staging.release(staging);
    this.#throwDeferred(s);
    return result;
  }

  /** Device to device, recorded in the current batch. */
  copy(src, srcOffset, dst, dstOffset, nbytes) {
    const s = this.#checkHandle(src, 'copy');
    if (this.#checkHandle(dst, 'copy') !== s) {
      throw this.#makeError('ValueError', 'copy: source and destination belong to different devices');
    }
    this.#checkRange('copy', src, srcOffset, nbytes, false);
    this.#checkRange('copy', dst, dstOffset, nbytes, true);
    if (srcOffset % 4) {
      throw this.#makeError('ValueError', `copy: source offset ${srcOffset} is not a multiple of 4`);
    }
    if (nbytes) s.batch.copy(src.buffer, srcOffset, dst.buffer, dstOffset, align4(nbytes));
  }

  /** Submits pending work, waits for the GPU, reports deferred GPU errors. */
  async sync() {
    const s = this.#state;
    if (!s) {
      if (this.#lostState) throw this.#lostError(this.#lostState, 'sync');
      return;
    }
    s.batch.flush();
    await s.device.queue.onSubmittedWorkDone();
    if (s.lost) throw this.#lostError(s, 'sync');
    this.#throwDeferred(s);
  }

  /** Destroys the device (reason "destroyed"); init() acquires a new one. */
  dispose() {
    this.#state?.device.destroy();
  }

  // ---- for kernels.js (mixed into this class) ----

  _error(kind, message) {
    return this.#makeError(kind, message);
  }

  _checkHandle(handle, what) {
    return this.#checkHandle(handle, what);
  }

  /** The current device's state (tvm_shaders.js). */
  _current(what) {
    return this.#current(what);
  }

  async #acquire() {
    const gpu = this.#gpu;
    if (!gpu || typeof gpu.requestAdapter !== 'function') {
      throw this.#makeError('RuntimeError', NO_GPU_HINT);
    }
    const opts = this.#options;
    const base = opts.powerPreference ? { powerPreference: opts.powerPreference } : {};
    const levels = opts.featureLevel ? [opts.featureLevel] : ['core', 'compatibility'];
    let adapter = null;
    let featureLevel = '';
    for (const level of levels) {
      adapter = await gpu.requestAdapter({ ...base, featureLevel: level });
      if (adapter) {
        featureLevel = level;
        break;
      }
    }
    if (!adapter) throw this.#makeError('RuntimeError', noAdapterHint(levels));
    const name = describeAdapter(adapter);
    for (const [key, need] of Object.entries(REQUIRED_LIMITS)) {
      if (!(adapter.limits[key] >= need)) {
        throw this.#makeError(
          'RuntimeError',
          `WebGPU adapter ${name} is not usable: its limit ${key} is ${adapter.limits[key]}, webffi needs at least ${need}`,
        );
      }
    }
    const requiredLimits = {};
    for (const key of RAISED_LIMITS) {
      if (adapter.limits[key] !== undefined) requiredLimits[key] = adapter.limits[key];
    }
    const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
    let device;
    try {
      device = await adapter.requestDevice({ requiredLimits, requiredFeatures, label: 'webffi' });
    } catch (e) {
      throw this.#makeError('RuntimeError', `WebGPU adapter ${name} refused a device: ${e?.message ?? e}`);
    }
    const state = new DeviceState(++this.#generation, adapter, device, featureLevel);
    device.addEventListener('uncapturederror', (event) => {
      event.preventDefault?.(); // reported through sync()/download(), not the console
      const err = event.error;
      const kind = err?.constructor?.name === 'GPUOutOfMemoryError' ? 'MemoryError' : 'ValueError';
      state.deferredError ??= { kind, message: `WebGPU ${kind === 'MemoryError' ? 'out of memory' : 'validation error'}: ${err?.message}` };
    });
    device.lost.then((info) => this.#onLost(state, info));
    this.#state = state;
    this.#lostState = null;
    return this.info();
  }

  #onLost(state, info) {
    state.lost = { reason: info?.reason ?? 'unknown', message: info?.message ?? '' };
    state.staging.destroy();
    state.batch.destroy();
    if (this.#state === state) {
      this.#state = null;
      this.#lostState = state;
      this.#initPromise = null;
    }
    if (state.lost.reason !== 'destroyed') {
      this.#logger?.warn?.(`webffi: ${lostText(state)}; call init() to acquire a new device`);
    }
  }

  #current(what) {
    const s = this.#state;
    if (s) return s;
    if (this.#lostState) throw this.#lostError(this.#lostState, what);
    throw this.#makeError('RuntimeError', `${what}: the WebGPU backend is not initialised; await init() first`);
  }

  #checkHandle(handle, what, freeing = false) {
    if (!(handle instanceof WebGPUAllocation)) {
      throw this.#makeError('TypeError', `${what}: expected a WebGPU allocation handle, got ${typeName(handle)}`);
    }
    const s = handle.state;
    if (handle.freed) throw this.#makeError('ValueError', `${what}: the WebGPU allocation was already freed`);
    if (freeing) return s;
    if (s.lost) throw this.#lostError(s, what);
    if (s !== this.#state) {
      throw this.#makeError('ValueError', `${what}: the allocation belongs to another WebGPU backend`);
    }
    return s;
  }

  #checkRange(what, handle, byteOffset, nbytes, writing) {
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || !Number.isSafeInteger(nbytes) || nbytes < 0) {
      throw this.#makeError('ValueError', `${what}: offset and size must be non-negative integers`);
    }
    if (byteOffset + nbytes > handle.nbytes) {
      throw this.#makeError(
        'ValueError',
        `${what}: range [${byteOffset}, ${byteOffset + nbytes}) is outside the allocation of ${handle.nbytes} bytes`,
      );
    }
    if (!writing) return;
    if (byteOffset % 4) {
      throw this.#makeError('ValueError', `${what}: destination offset ${byteOffset} is not a multiple of 4`);
    }
    if (nbytes % 4 && byteOffset + nbytes !== handle.nbytes) {
      throw this.#makeError(
        'ValueError',
        `${what}: a write of ${nbytes} bytes (not a multiple of 4) must end at the end of the allocation`,
      );
    }
  }

  #watchAllocation(state, nbytes, validation, oom) {
    // The scopes resolve after allocate() has returned (it must stay
    // synchronous for C callers), so a failure is reported by the next
    // sync() or download().
    Promise.all([validation, oom]).then(([v, o]) => {
      const err = o ?? v;
      if (!err) return;
      const kind = o ? 'MemoryError' : 'ValueError';
      const message = `WebGPU ${o ? 'out of memory' : 'validation error'} allocating ${nbytes} bytes: ${err.message}`;
      state.deferredError ??= { kind, message };
    }, () => {});
  }

  #throwDeferred(s) {
    const e = s.deferredError;
    if (!e) return;
    s.deferredError = null;
    throw this.#makeError(e.kind, e.message);
  }

  #lostError(s, what) {
    return this.#makeError('RuntimeError', `${what}: ${lostText(s)}; call init() to acquire a new device`);
  }

  #afterFailure(s, what, e) {
    if (s.lost) return this.#lostError(s, what);
    return this.#makeError('RuntimeError', `${what}: ${e?.name ?? 'Error'}: ${e?.message ?? e}`);
  }
}

function lostText(s) {
  const detail = s.lost.message ? `: ${s.lost.message}` : '';
  return `the WebGPU device was lost (reason "${s.lost.reason}"${detail}); its allocations are gone`;
}

function describeAdapter(adapter) {
  const i = adapter.info ?? {};
  return `"${[i.vendor, i.architecture, i.device, i.description].filter(Boolean).join(' ') || 'unknown'}"`;
}

function typeName(v) {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  return v.constructor?.name ?? 'Object';
}

function isArrayBuffer(v) {
  return v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer);
}

function align4(n) {
  return Math.ceil(n / 4) * 4;
}

Object.assign(WebGPUBackend.prototype, kernelMethods);

/**
 * Creates the backend. Nothing touches the GPU until init().
 * @param {import('./index.js').WebGPUBackendOptions} options
 */
export function createWebGPUBackend(options = {}) {
  return new WebGPUBackend(options);
}
