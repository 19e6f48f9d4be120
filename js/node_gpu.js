// webffi/node-gpu: WebGPU in Node where browser libraries look for it.
// Dawn (npm `webgpu`, which the application installs) gives Node a GPU
// object but not the browser's globals; onnxruntime-web and TensorFlow.js
// find WebGPU as `navigator.gpu` and use the GPU* classes and constants as
// globals. installWebGPU() puts them there, answers an adapter request at
// the compatibility level where only that level exists (Dawn's OpenGL ES
// backend on Mesa's llvmpipe), and copies views of a SharedArrayBuffer
// before `writeBuffer`, which Dawn refuses ("Invalid argument") and
// onnxruntime-web's threaded wasm passes. Nothing happens at import.
import { create, globals } from 'webgpu';
import { dawnGPU } from './backends/discover.js';

const SHARED_COPY = Symbol.for('webffi.sharedViewCopy');
// Dawn's devices need their instance alive: every GPU handed out is kept.
const instances = new Set();

/** Dawn on a named backend (`opengles` runs headless on Mesa: EGL_PLATFORM=surfaceless). */
function dawnOn(backend) {
  if (backend === 'opengles') process.env.EGL_PLATFORM ??= 'surfaceless';
  return create([`backend=${backend}`]);
}

/**
 * `gpu` as a browser's `navigator.gpu`: a request that names no feature
 * level and finds no adapter at the default (core) level is asked again at
 * the compatibility level.
 */
function browserShaped(gpu) {
  return {
    async requestAdapter(options = {}) {
      const adapter = await gpu.requestAdapter(options);
      if (adapter || (options && options.featureLevel !== undefined)) return adapter;
      return gpu.requestAdapter({ ...options, featureLevel: 'compatibility' });
    },
    getPreferredCanvasFormat() {
      return gpu.getPreferredCanvasFormat?.() ?? 'rgba8unorm';
    },
    get wgslLanguageFeatures() {
      return gpu.wgslLanguageFeatures ?? new Set();
    },
    get [Symbol.toStringTag]() {
      return 'GPU';
    },
  };
}

const isShared = (buffer) => typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer;

/** The bytes `writeBuffer(buffer, offset, data, dataOffset, size)` reads, copied out of shared memory. */
function unsharedCopy(data, dataOffset, size) {
  if (isShared(data)) return new Uint8Array(data, dataOffset, size ?? data.byteLength - dataOffset).slice();
  const unit = data.BYTES_PER_ELEMENT ?? 1; // typed arrays count in elements, a DataView in bytes
  const count = size ?? data.byteLength / unit - dataOffset;
  return new Uint8Array(data.buffer, data.byteOffset + dataOffset * unit, count * unit).slice();
}

function patchSharedWrites(GPUQueue) {
  const proto = GPUQueue.prototype;
  if (proto[SHARED_COPY]) return;
  const { writeBuffer, writeTexture } = proto;
  proto.writeBuffer = function (buffer, offset, data, dataOffset = 0, size) {
    if (isShared(data) || (ArrayBuffer.isView(data) && isShared(data.buffer))) {
      const copy = unsharedCopy(data, dataOffset, size);
      return writeBuffer.call(this, buffer, offset, copy, 0, copy.byteLength);
    }
    return writeBuffer.call(this, buffer, offset, data, dataOffset, size);
  };
  proto.writeTexture = function (destination, data, layout, size) {
    if (isShared(data)) data = new Uint8Array(data).slice();
    else if (ArrayBuffer.isView(data) && isShared(data.buffer)) {
      data = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
    }
    return writeTexture.call(this, destination, data, layout, size);
  };
  Object.defineProperty(proto, SHARED_COPY, { value: true });
}

/**
 * Gives Node the browser's WebGPU globals from Dawn and returns the GPU now
 * at `navigator.gpu`. Options: `backend` (a Dawn backend name: 'vulkan',
 * 'opengles', ...; default: as `load()` chooses, WEBFFI_DAWN_BACKEND or the
 * platform's, falling back to OpenGL ES) or `gpu` (a GPU object from
 * `create()` to install instead).
 */
export function installWebGPU(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('installWebGPU(options): options must be an object ({ backend } or { gpu })');
  }
  const { backend, gpu } = options;
  if (backend !== undefined && typeof backend !== 'string') {
    throw new TypeError(`installWebGPU: backend must be a Dawn backend name such as 'opengles', not ${typeof backend}`);
  }
  if (gpu !== undefined && typeof gpu?.requestAdapter !== 'function') {
    throw new TypeError('installWebGPU: gpu must be a GPU object (create([...]) from npm `webgpu`)');
  }
  const dawn = gpu ?? (backend ? dawnOn(backend) : dawnGPU(create));
  instances.add(dawn);
  for (const [name, value] of Object.entries(globals)) {
    if (!(name in globalThis)) Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
  }
  patchSharedWrites(globals.GPUQueue);
  const shaped = browserShaped(dawn);
  const property = { value: shaped, configurable: true, writable: true, enumerable: true };
  if (globalThis.navigator && Object.isExtensible(globalThis.navigator)) {
    Object.defineProperty(globalThis.navigator, 'gpu', property);
  } else {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu: shaped }, configurable: true, writable: true });
  }
  return shaped;
}
