// Sharing one WebGPU device and its buffers with other libraries
// (onnxruntime-web, TensorFlow.js, transformers.js): rt.gpuDevice,
// rt.tensorFromGPUBuffer() and the checks load({ gpuDevice }) makes.
// Exporting is Tensor.gpuBuffer (js/tensor.js).
import { makeError } from './errors.js';
import { describe, optionsOf } from './runtime/checks.js';
import { checkShape } from './tensor.js';
import { combineNeeds, missingNeeds, shaderNeeds } from './backends/webgpu/tvm_shaders.js';

const WEBGPU = 15;

/**
 * Adds gpuDevice and tensorFromGPUBuffer to a runtime.
 * @param {object} runtime
 * @param {object} backends the backend registry
 * @param {Function} tensorOver js/tensor.js's tensor over memory a backend already has
 */
export function installGPUInterop(runtime, backends, tensorOver) {
  Object.defineProperty(runtime, 'gpuDevice', {
    enumerable: true,
    /** The GPUDevice webffi's WebGPU backend uses (null before it is initialised, after a loss or rt.dispose()). */
    get() {
      try {
        return backends.deviceFor(WEBGPU)?.gpuDevice ?? null;
      } catch {
        return null; // disposed
      }
    },
  });

  /**
   * A webgpu:0 tensor over `buffer`, a GPUBuffer another library made on
   * the device webffi uses: no copy. The buffer is the other library's
   * unless `dispose` is true (then disposing the tensor destroys it); it
   * never enters webffi's reuse pool.
   */
  async function tensorFromGPUBuffer(buffer, options) {
    const what = 'tensorFromGPUBuffer';
    if (buffer === null || typeof buffer !== 'object') {
      throw makeError('TypeError', `${what}: expected a GPUBuffer, got ${describe(buffer)}`);
    }
    const opts = optionsOf(options, what);
    if (opts.shape === undefined) throw makeError('TypeError', `${what}: options.shape is required`);
    const dims = checkShape(opts.shape);
    const dtype = runtime.dtype(opts.dtype ?? 'float32');
    const { byteOffset = 0, dispose = false } = opts;
    if (typeof dispose !== 'boolean') throw makeError('TypeError', `${what}: options.dispose must be a boolean, got ${describe(dispose)}`);
    if (dtype.bits % 8 || dtype.bits === 0) {
      throw makeError('TypeError', `${what}: dtype ${dtype} packs elements below a byte; tensors over GPU buffers need whole-byte elements`);
    }
    const elementBytes = (dtype.bits / 8) * dtype.lanes;
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0) {
      throw makeError('ValueError', `${what}: byteOffset must be a non-negative integer, got ${describe(byteOffset)}`);
    }
    if (byteOffset % elementBytes) {
      throw makeError('ValueError', `${what}: byteOffset ${byteOffset} is misaligned: it must be a multiple of the ${dtype} element size (${elementBytes} bytes)`);
    }
    let count = 1;
    for (const d of dims) count *= d;
    const nbytes = count * elementBytes;
    const backend = await backends.ensure(WEBGPU);
    if (typeof backend?.importBuffer !== 'function') {
      throw makeError('TypeError', `${what}: the backend serving webgpu:0 (${backend?.name}) cannot take GPUBuffers`);
    }
    // The size checked is the one the engine gives for the buffer (never its
    // own `size` property, which may lie), as the allocation records it.
    const allocation = await backend.importBuffer(buffer, dispose, what);
    const size = allocation.nbytes;
    if (!(byteOffset + nbytes <= size)) {
      throw makeError('ValueError',
        `${what}: a ${dtype} tensor of shape [${dims}] at byteOffset ${byteOffset} needs bytes [${byteOffset}, ${byteOffset + nbytes}), the buffer has ${size}`);
    }
    return tensorOver(dims, dtype, 'webgpu', byteOffset, (make) => backend.adopt(allocation, make), (h) => backend.holds(h, allocation));
  }

  runtime.tensorFromGPUBuffer = tensorFromGPUBuffer;
}

/**
 * load({ gpuDevice }): a model library's WebGPU kernels checked against the
 * adopted device (webffi's own kernels are checked when the backend adopts
 * it). Throws a RuntimeError naming every limit and feature that falls short.
 */
export function checkLibraryNeeds(runtime, device) {
  const missing = runtime.scope(() => {
    const loadExecutable = runtime.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable');
    const executable = loadExecutable?.();
    const fmap = executable?.getFunction('webgpu.get_fmap');
    if (!fmap) return []; // no WebGPU kernels
    const getShader = executable.getFunction('webgpu.get_shader');
    return missingNeeds(device, combineNeeds(Object.keys(JSON.parse(fmap())).map((name) => shaderNeeds(getShader(name)))));
  });
  if (missing.length) {
    throw makeError('RuntimeError', `the GPUDevice given to webffi (gpuDevice) lacks what this model library's kernels need: ${missing.join(', ')}`);
  }
}
