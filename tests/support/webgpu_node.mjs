// The WebGPU implementation Node tests and benchmarks use: Dawn from npm
// `webgpu` on its OpenGL ES backend, which runs on Mesa's llvmpipe without a
// GPU or a display (EGL_PLATFORM=surfaceless).
import { create, globals } from 'webgpu';

const SHARED_COPY = Symbol('webffi.sharedCopy');

export function nodeGPU(backend = 'opengles') {
  process.env.EGL_PLATFORM ??= 'surfaceless';
  return create([`backend=${backend}`]);
}

/**
 * What other WebGPU libraries expect of the host, given to Node: the GPU as
 * navigator.gpu and the WebGPU classes as globals (onnxruntime-web checks
 * `device instanceof GPUDevice`, TensorFlow.js reads GPUBufferUsage). And one
 * difference from browsers made up for: Dawn's writeBuffer refuses views of a
 * SharedArrayBuffer, which onnxruntime-web's threaded wasm build hands it (its
 * memory is shared), so such views are copied first. Returns the GPU.
 */
export function browserLikeWebGPU(gpu) {
  Object.assign(globalThis, globals);
  Object.defineProperty(globalThis, 'navigator', { value: { ...globalThis.navigator, gpu }, configurable: true, writable: true });
  const proto = globals.GPUQueue.prototype;
  if (!proto[SHARED_COPY]) {
    const writeBuffer = proto.writeBuffer;
    proto.writeBuffer = function (buffer, offset, data, dataOffset = 0, size) {
      if (ArrayBuffer.isView(data) && typeof SharedArrayBuffer !== 'undefined' && data.buffer instanceof SharedArrayBuffer) {
        const el = data.BYTES_PER_ELEMENT ?? 1;
        const n = size ?? data.byteLength / el - dataOffset;
        const copy = new Uint8Array(data.buffer, data.byteOffset + dataOffset * el, n * el).slice();
        return writeBuffer.call(this, buffer, offset, copy, 0, copy.byteLength);
      }
      return writeBuffer.call(this, buffer, offset, data, dataOffset, size);
    };
    proto[SHARED_COPY] = true;
  }
  return gpu;
}
