// The WebGPU device backend: adapter and device acquisition (or adoption of
// a GPUDevice another library made), device memory
// (allocate/free/upload/download/copy), buffers shared with other libraries
// (importBuffer/exportBuffer), error reporting and device loss.
// It depends on nothing else in webffi: the runtime hands it a `gpu` object
// (navigator.gpu, or `create([...])` from npm `webgpu` in Node) or a
// `device`, and a `makeError(kind, message)` that builds the runtime's error
// values, and plugs it in as the backend for device type 15 (`webgpu:0`).

import { BufferUsage, MapMode } from './gpu_flags.js';
import { CommandBatch } from './batch.js';
import { StagingPool } from './staging.js';
import { KERNELS, kernelMethods } from './kernels.js';
import { missingNeeds } from './tvm_shaders.js';

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
// Allocations are rounded up to 16 bytes: other libraries' kernels (ORT's)
// read and write whole vec4s, and the padding is then the allocation's own.
const ALLOC_ALIGN = 16;
const COMPUTE = 0x4; // GPUShaderStage.COMPUTE
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

/** One acquired (or adopted) GPUDevice and everything that lives and dies with it. */
class DeviceState {
  constructor(generation, adapter, device, featureLevel, adopted) {
    this.generation = generation;
    this.adapter = adapter; // null for an adopted device
    this.device = device;
    this.featureLevel = featureLevel;
    this.adopted = adopted; // made by another library: never destroyed by webffi
    this.shared = adopted; // other libraries use it too (adopted, or handed out by shareDevice())
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
    this.probeLayout = null; // importBuffer's bind group layout, made on first use
    this.bufferGetters = null; // the engine's GPUBuffer accessors (size, usage, mapState), read on first import
  }
}

let nextAllocationId = 0;

/**
 * A device allocation. Knows the device generation it was made on. One over
 * a buffer another library made is `imported` (destroyed on free only when
 * `owned`); one whose buffer was handed out (exportBuffer) is `exported`
 * (never destroyed nor reused by webffi: the other library may still hold it).
 */
class WebGPUAllocation {
  constructor(state, buffer, nbytes, imported = false, owned = true) {
    this.id = nextAllocationId++;
    this.state = state;
    this.buffer = buffer;
    this.nbytes = nbytes;
    this.freed = false;
    this.imported = imported;
    this.owned = owned;
    this.exported = false;
  }
  get generation() {
    return this.state.generation;
  }
}

class WebGPUBackend {
  #gpu;
  #adopted; // a GPUDevice to use instead of acquiring one (undefined: acquire)
  #makeError;
  #logger;
  #options;
  #state = null;
  #lostState = null; // the last device, once lost, until init() replaces it
  #initPromise = null;
  #generation = 0;

  constructor({ gpu, device, makeError = defaultMakeError, logger = console, ...options }) {
    this.#gpu = gpu;
    this.#adopted = device;
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

  /**
   * The GPUDevice, handed to another library (rt.gpuDevice): from now on
   * GPU errors are no longer kept from the console, as they may be that
   * library's.
   */
  shareDevice() {
    const s = this.#current('gpuDevice');
    s.shared = true;
    return s.device;
  }

  info() {
    const s = this.#state;
    if (!s) return null;
    const a = s.adapter?.info ?? s.device.adapterInfo ?? {};
    const limits = {};
    for (const k of REPORTED_LIMITS) limits[k] = s.limits[k];
    return {
      name: this.name,
      deviceType: this.deviceType,
      generation: s.generation,
      featureLevel: s.featureLevel,
      adopted: s.adopted,
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
        size: Math.max(ALLOC_ALIGN, Math.ceil(nbytes / ALLOC_ALIGN) * ALLOC_ALIGN),
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
    if (handle.imported) {
      // Another library's buffer: destroyed only when it was handed over (owned).
      if (handle.owned) s.batch.destroyAfterSubmit(handle.buffer);
      return;
    }
    if (s.lost) return; // the device took its memory with it
    s.bytesAllocated -= handle.buffer.size;
    // An exported buffer may still be in use by the library it went to: it is
    // left to that library (and the garbage collector), never destroyed here.
    if (!handle.exported) s.batch.destroyAfterSubmit(handle.buffer);
  }

  /**
   * An allocation over `buffer`, a GPUBuffer another library made on this
   * device (no copy). Refused: not a GPUBuffer, no STORAGE usage, mapped,
   * not a non-zero multiple of 4 bytes, made on another device, destroyed.
   * `owned`: free() destroys the buffer; otherwise it stays the other
   * library's. `what` names the caller in errors.
   */
  async importBuffer(buffer, owned = false, what = 'importBuffer') {
    const s = this.#current(what);
    // Read through the engine's own accessors, once: a buffer whose own
    // properties lie, a Proxy of one or an object deriving from one cannot
    // answer through them (they are refused here, not by the engine later).
    const facts = buffer !== null && typeof buffer === 'object' ? engineBufferFacts(s, buffer) : null;
    if (!facts) {
      let name;
      try {
        name = typeName(buffer);
      } catch {
        name = 'Object'; // a Proxy whose traps throw
      }
      throw this.#makeError('TypeError', `${what}: expected a GPUBuffer, got ${name === 'GPUBuffer'
        ? 'an object that only looks like one (a Proxy of a GPUBuffer, or an object made from one)' : name}`);
    }
    const { size, usage, mapState } = facts;
    if (!(usage & BufferUsage.STORAGE)) {
      throw this.#makeError('ValueError',
        `${what}: the buffer's usage (0x${usage.toString(16)}) lacks STORAGE (0x80); webffi's kernels bind tensors as storage buffers`);
    }
    if (mapState !== 'unmapped') {
      throw this.#makeError('ValueError', `${what}: the buffer is ${mapState === 'mapped' ? 'mapped' : 'being mapped'}; unmap it first`);
    }
    if (!(size >= 4) || size % 4) {
      throw this.#makeError('ValueError', `${what}: the buffer has ${size} bytes; storage buffers need a non-zero multiple of 4`);
    }
    const problem = await this.#probe(s, buffer);
    if (problem) throw this.#makeError('ValueError', `${what}: ${problem}`);
    if (s.lost) throw this.#lostError(s, what);
    const allocation = new WebGPUAllocation(s, buffer, size, true, owned);
    allocation.usage = usage; // as the engine gave it: transfers check this, not the buffer's own property
    return allocation;
  }

  /**
   * The GPUBuffer behind an allocation, for another library. The work
   * recorded so far is submitted first, so queue order makes the other
   * library's later submits see its results. The allocation is marked
   * exported: when freed, webffi neither reuses nor destroys the buffer.
   */
  exportBuffer(handle) {
    const s = this.#checkHandle(handle, 'exportBuffer');
    handle.exported = true;
    if (s.batch.pending) s.batch.flush();
    return handle.buffer;
  }

  /** Submits the work recorded so far (without waiting for it). */
  flush() {
    const s = this.#state;
    if (s?.batch.pending) s.batch.flush();
  }

  /** Host to device: writes `bytes` (an ArrayBuffer or a view) at byteOffset. */
  upload(handle, byteOffset, bytes) {
    const s = this.#checkHandle(handle, 'upload');
    if (handle.imported) this.#requireUsage(handle, BufferUsage.COPY_DST, 'COPY_DST (0x8)', 'upload');
    let view = ArrayBuffer.isView(bytes) ? bytes : isArrayBuffer(bytes) ? new Uint8Array(bytes) : null;
    if (!view) throw this.#makeError('TypeError', 'upload: bytes must be an ArrayBuffer or a typed array');
    // writeBuffer refuses shared memory (the threaded core's): a plain copy goes instead
    if (typeof SharedArrayBuffer !== 'undefined' && view.buffer instanceof SharedArrayBuffer) {
      view = new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
    }
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
    if (handle.imported) this.#requireUsage(handle, BufferUsage.COPY_SRC, 'COPY_SRC (0x4)', 'download');
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
    if (src.imported) this.#requireUsage(src, BufferUsage.COPY_SRC, 'COPY_SRC (0x4)', 'copy');
    if (dst.imported) this.#requireUsage(dst, BufferUsage.COPY_DST, 'COPY_DST (0x8)', 'copy');
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

  /**
   * Destroys the device (reason "destroyed"); init() acquires a new one. An
   * adopted device is not webffi's to destroy: what webffi made on it is
   * released and webffi stops using it.
   */
  dispose() {
    const s = this.#state;
    if (!s) return;
    if (!s.adopted) {
      s.device.destroy();
      return;
    }
    for (const { buffer } of s.params.values()) buffer.destroy();
    s.params.clear();
    s.pipelines.clear();
    this.#onLost(s, { reason: 'destroyed', message: 'webffi released the device it was given' });
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
    if (this.#adopted !== undefined) return this.#adopt(this.#adopted);
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
    return this.#use(new DeviceState(++this.#generation, adapter, device, featureLevel, false));
  }

  /** A GPUDevice another library made: checked against what the kernels need. */
  #adopt(device) {
    if (this.#generation > 0) {
      // After a loss: only the library that made the device can make another.
      throw this.#makeError('RuntimeError',
        'the GPUDevice webffi was given (load({ gpuDevice })) is gone, and webffi does not replace a device it did not make: load a runtime with the new device');
    }
    if (!isGPUDevice(device)) {
      throw this.#makeError('TypeError', `gpuDevice: expected a GPUDevice, got ${typeName(device)}`);
    }
    const missing = missingNeeds(device, REQUIRED_LIMITS);
    if (missing.length) {
      throw this.#makeError('RuntimeError', `the GPUDevice given to webffi lacks what its kernels need: ${missing.join(', ')}`);
    }
    const featureLevel = device.features.has('core-features-and-limits') ? 'core' : 'compatibility';
    return this.#use(new DeviceState(++this.#generation, null, device, featureLevel, true));
  }

  #use(state) {
    const device = state.device;
    device.addEventListener('uncapturederror', (event) => {
      const err = event.error;
      const kind = err?.constructor?.name === 'GPUOutOfMemoryError' ? 'MemoryError' : 'ValueError';
      let message = `WebGPU ${kind === 'MemoryError' ? 'out of memory' : 'validation error'}: ${err?.message}`;
      if (state.shared) {
        // The device is shared: the error may be another library's, which may want it reported as usual.
        message += ' (on the shared GPUDevice: the error may come from another library\'s work)';
      } else {
        event.preventDefault?.(); // reported through sync()/download(), not the console
      }
      state.deferredError ??= { kind, message };
    });
    device.lost.then((info) => this.#onLost(state, info));
    this.#state = state;
    this.#lostState = null;
    return this.info();
  }

  /**
   * Why `buffer` cannot be used on this device, or null: a bind group over it
   * fails when another device made it, and a submit that uses it fails when
   * it was destroyed (WebGPU reports both only asynchronously).
   */
  async #probe(s, buffer) {
    const device = s.device;
    s.probeLayout ??= device.createBindGroupLayout({
      entries: [{ binding: 0, visibility: COMPUTE, buffer: { type: 'read-only-storage' } }],
    });
    let foreign;
    let destroyed;
    let group;
    device.pushErrorScope('validation');
    try {
      group = device.createBindGroup({ layout: s.probeLayout, entries: [{ binding: 0, resource: { buffer, offset: 0, size: 4 } }] });
    } catch (e) {
      group = e; // thrown (not reported) where the buffer is not a GPUBuffer of this implementation
    } finally {
      foreign = device.popErrorScope();
    }
    if (group instanceof Error) {
      await foreign.catch(() => null);
      return `the buffer cannot be bound on webffi's device: ${group.message}`;
    }
    device.pushErrorScope('validation');
    try {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setBindGroup(0, group);
      pass.end();
      device.queue.submit([encoder.finish()]);
    } finally {
      destroyed = device.popErrorScope();
    }
    const [f, d] = await Promise.all([foreign, destroyed]);
    if (f) return `the buffer belongs to another GPUDevice, not the one webffi uses (pass that device as load({ gpuDevice }), or put the other library on rt.gpuDevice) [${firstLine(f.message)}]`;
    if (d) return `the buffer was destroyed [${firstLine(d.message)}]`;
    return null;
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
      this.#logger?.warn?.(`webffi: ${lostText(state)}; ${nextDevice(state)}`);
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

  /** An imported buffer may lack the usage a transfer needs (webffi's own have them all). */
  #requireUsage(handle, bit, name, what) {
    if (!(handle.usage & bit)) {
      throw this.#makeError('ValueError', `${what}: the imported buffer's usage (0x${handle.usage.toString(16)}) lacks ${name}`);
    }
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
    return this.#makeError('RuntimeError', `${what}: ${lostText(s)}; ${nextDevice(s)}`);
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

function nextDevice(s) {
  return s.adopted
    ? 'webffi does not replace a device another library made: load a runtime with that library\'s new device (load({ gpuDevice }))'
    : 'call init() to acquire a new device';
}

function describeAdapter(adapter) {
  const i = adapter.info ?? {};
  return `"${[i.vendor, i.architecture, i.device, i.description].filter(Boolean).join(' ') || 'unknown'}"`;
}

function firstLine(text) {
  return String(text).split('\n')[0];
}

/**
 * size, usage and mapState of `buffer` as the engine has them (its own
 * GPUBuffer accessors, taken from a buffer this device made), or null when
 * it is not a GPUBuffer of this implementation (the accessors refuse it).
 */
function engineBufferFacts(s, buffer) {
  if (!s.bufferGetters) {
    const made = s.device.createBuffer({ size: 4, usage: BufferUsage.STORAGE });
    const getters = {};
    for (const name of ['size', 'usage', 'mapState']) {
      for (let o = Object.getPrototypeOf(made); o !== null && !getters[name]; o = Object.getPrototypeOf(o)) {
        getters[name] = Object.getOwnPropertyDescriptor(o, name)?.get;
      }
    }
    made.destroy();
    s.bufferGetters = getters;
  }
  const { size, usage, mapState } = s.bufferGetters;
  try {
    const facts = { size: size.call(buffer), usage: usage.call(buffer), mapState: mapState.call(buffer) };
    return typeof facts.size === 'number' && typeof facts.usage === 'number' ? facts : null;
  } catch {
    return null; // Illegal invocation (browsers), Invalid argument (Dawn in Node)
  }
}

function isGPUDevice(v) {
  return v !== null && typeof v === 'object' && typeof v.createBuffer === 'function' && typeof v.queue === 'object' &&
    typeof v.limits === 'object' && typeof v.features?.has === 'function' && typeof v.pushErrorScope === 'function';
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
