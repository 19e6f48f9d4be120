// The WebGPU backend (js/backends/webgpu/) as a runtime backend: allocation
// handles C can hold (non-zero ints standing for WebGPUAllocations), the
// device operations the registry installs in C, and the KERNELS table
// registered as global functions `webgpu.*` taking and returning tensors.
// A library TVM compiled reaches the device through TVM's own protocol
// instead: the globals `wasm.WebGPUDeviceAPI` and `wasm.WebGPUCreateShader`,
// registered with it here. Buffers shared with other libraries enter as
// imported allocations (adopt) and leave through exportBuffer; neither kind
// ever enters the reuse pool.
import { createWebGPUBackend, KERNELS, WEBGPU_DEVICE_TYPE } from './webgpu/index.js';
import { tvmShaders } from './webgpu/tvm_shaders.js';
import { makeError } from '../errors.js';
import { INTERNALS } from '../objects.js';

const POOL_BYTES = 256 << 20; // freed GPU memory kept for reuse, at most

/** A kernel's type schema as ffi.GetGlobalFuncMetadata gives it (upstream's form). */
const SCHEMA_TYPES = {
  Tensor: { type: 'ffi.Tensor' },
  float: { type: 'float' },
  'Optional[int]': { type: 'Optional', args: [{ type: 'int' }] },
};
function kernelMetadata(k) {
  const args = [k.returns, ...k.args.map((a) => a.type)].map((t) => SCHEMA_TYPES[t]);
  return { type_schema: JSON.stringify({ type: 'ffi.Function', args }) };
}

/**
 * @param {(() => GPU | Promise<GPU>) | null} getGPU the host's WebGPU object, asked for on first init
 * @param {{ priority?: number, device?: GPUDevice }} options device: with getGPU null, a
 *   GPUDevice another library made, used instead of acquiring one (load({ gpuDevice }))
 */
export function webgpuRuntimeBackend(getGPU, { priority = 10, device: gpuDevice = null } = {}) {
  let be = null;
  const allocations = new Map(); // handle -> WebGPUAllocation
  let nextHandle = 1;
  let lastAlloc = null; // the allocation alloc() made last (a kernel's output, see kernelGlobal)
  let adopting = null; // an imported allocation the next alloc() hands out (adopt)
  let disposed = false;
  // The runtime's peer guard (js/core/peer_guard.js): memory allocated while
  // a peer's request runs is charged to the peer budget until it is freed.
  let peers = null;
  const charged = new Map(); // handle -> bytes charged to the peer budget

  function allocation(handle, what) {
    const a = allocations.get(handle);
    if (!a) throw makeError('ValueError', `${what}: ${handle} is not a live WebGPU allocation handle`);
    return a;
  }

  // Freed buffers are kept for reuse by size: creating a GPU buffer (inside
  // error scopes) costs more than a small kernel. The queue orders work, so
  // a reused buffer is written only after earlier work on it.
  const pool = new Map(); // nbytes -> [WebGPUAllocation]
  let pooledBytes = 0;
  let generation = 0; // of the device the pool holds buffers of

  function drainPool() {
    for (const list of pool.values()) for (const a of list) be.free(a);
    pool.clear();
    pooledBytes = 0;
  }

  const device = {
    alloc(nbytes) {
      const engine = current('allocate');
      const size = Number(nbytes);
      if (adopting !== null) {
        const a = adopting;
        adopting = null;
        if (size > a.nbytes) throw makeError('ValueError', `allocate: ${size} bytes do not fit the imported buffer of ${a.nbytes}`);
        const h = nextHandle++;
        allocations.set(h, a);
        lastAlloc = a;
        return h;
      }
      const peer = peers !== null && peers.deviceTake(size); // a MemoryError past the budget
      const reused = engine.ready ? pool.get(size)?.pop() : undefined;
      let a;
      if (reused) {
        pooledBytes -= size;
        a = reused;
      } else {
        try {
          a = engine.allocate(size);
        } catch (e) {
          if (e?.kind !== 'MemoryError' || pooledBytes === 0) {
            if (peer) peers.deviceGive(size);
            throw e;
          }
          drainPool(); // out of memory: give the pooled buffers back and try once more
          try {
            a = engine.allocate(size);
          } catch (e2) {
            if (peer) peers.deviceGive(size);
            throw e2;
          }
        }
      }
      const h = nextHandle++;
      allocations.set(h, a);
      if (peer) charged.set(h, size);
      lastAlloc = a;
      return h;
    },
    free(handle) {
      const a = allocations.get(handle);
      if (!a) return;
      allocations.delete(handle);
      const bytes = charged.get(handle);
      if (bytes !== undefined) {
        charged.delete(handle);
        peers.deviceGive(bytes);
      }
      if (be.ready && a.generation === generation && !a.imported && !a.exported && pooledBytes + a.nbytes <= POOL_BYTES) {
        let list = pool.get(a.nbytes);
        if (!list) pool.set(a.nbytes, (list = []));
        list.push(a);
        pooledBytes += a.nbytes;
      } else {
        be.free(a);
      }
    },
    upload: (handle, byteOffset, bytes) => current('upload').upload(allocation(handle, 'upload'), byteOffset, bytes),
    download: (handle, byteOffset, nbytes, out) =>
      current('download').download(allocation(handle, 'download'), byteOffset, nbytes, out),
    copy: (src, srcOffset, dst, dstOffset, nbytes) =>
      current('copy').copy(allocation(src, 'copy'), srcOffset, allocation(dst, 'copy'), dstOffset, nbytes),
    /** The GPUBuffer behind a handle, for another library (tensor.gpuBuffer; pending work submitted first). */
    exportBuffer: (handle) => current('gpuBuffer').exportBuffer(allocation(handle, 'gpuBuffer')),
    /** The GPUDevice in use (rt.gpuDevice; null before init and after a loss). */
    get gpuDevice() {
      return be?.ready ? be.shareDevice() : null;
    },
  };

  function current(what) {
    if (!be) throw makeError('RuntimeError', `${what}: the WebGPU backend is not initialised; await rt.backends.ensure('webgpu') first`);
    return be;
  }

  // Copies into wasm memory TVM's protocol asked for: they land when the
  // read finishes, and sync() waits for them (as TVM's web runtime does).
  const pendingReads = new Set();
  let readFailure = null;
  let shaders = null;

  /** TVM's device API and shader globals (web/emcc/webgpu_runtime.cc's protocol). */
  function tvmGlobals(runtime) {
    const memory = runtime.exports.memory;
    const api = {
      deviceAllocDataSpace: (nbytes) => device.alloc(nbytes),
      deviceFreeDataSpace: (handle) => device.free(handle),
      deviceCopyToGPU: (from, to, toOffset, nbytes) =>
        device.upload(to, Number(toOffset), new Uint8Array(memory.buffer, from, Number(nbytes))),
      deviceCopyFromGPU(from, fromOffset, to, nbytes) {
        const n = Number(nbytes);
        const read = device.download(from, Number(fromOffset), n).then((bytes) => {
          new Uint8Array(memory.buffer, to, n).set(bytes);
        }, (e) => {
          readFailure ??= e;
        }).finally(() => pendingReads.delete(read));
        pendingReads.add(read);
      },
      deviceCopyWithinGPU: (from, fromOffset, to, toOffset, nbytes) =>
        device.copy(from, Number(fromOffset), to, Number(toOffset), Number(nbytes)),
    };
    return {
      'wasm.WebGPUDeviceAPI': (name) => {
        if (!Object.hasOwn(api, name)) throw makeError('ValueError', `wasm.WebGPUDeviceAPI: unknown device function ${name}`);
        return api[name];
      },
      'wasm.WebGPUCreateShader': (info, code) => shadersOf('WebGPUCreateShader').create(info, code),
    };
  }

  function shadersOf(what) {
    const engine = current(what);
    shaders ??= tvmShaders(engine, allocation);
    return shaders;
  }

  /**
   * The backend's description of a tensor argument of kernel `name`: its
   * fields read once (the shape array is shared with the tensor: kernels
   * read it only), strides only where the tensor is not compact.
   */
  function describe(t, arg, name, Tensor, fields) {
    if (!(t instanceof Tensor)) return t;
    const d = fields(t);
    const dev = d.device;
    if (dev.deviceType !== WEBGPU_DEVICE_TYPE) {
      throw makeError('ValueError', `${name}: argument ${arg} is on ${dev}, not webgpu:0; move it with \`await tensor.toDevice('webgpu')\``);
    }
    return {
      data: allocation(d.dataPtr, name), shape: d.shape, dtype: d.dtype.text,
      byteOffset: d.byteOffset, strides: d.contiguous ? null : d.strides,
    };
  }

  function kernelGlobal(runtime, k) {
    const names = k.args.map((a) => a.name);
    const arity = k.args.length;
    // Optional trailing arguments (axis) may be left out; extra ones are refused.
    const least = arity - (k.args[arity - 1].type.startsWith('Optional') ? 1 : 0);
    const count = least === arity ? `${arity} argument${arity === 1 ? '' : 's'}` : `${least} or ${arity} arguments`;
    const arityError = (got) =>
      makeError('TypeError', `${k.name}(${k.args.map((a) => `${a.name}: ${a.type}`).join(', ')}) takes ${count}, got ${got}`);
    return (...args) => {
      const { Tensor } = runtime;
      try {
        if (args.length > arity || args.length < least) throw arityError(args.length);
        const fields = runtime[INTERNALS].tensorFields;
        const descs = new Array(arity);
        for (let i = 0; i < arity; i++) descs[i] = describe(args[i], names[i], k.name, Tensor, fields);
        let spec;
        try {
          spec = k.output(...descs);
        } catch (e) {
          throw e.kind ? makeError(e.kind, e.message) : e;
        }
        const internals = runtime[INTERNALS];
        lastAlloc = null;
        // The output goes to C as it is made (released with this call's
        // frame once C holds it, or on failure); it is compact at offset 0 of
        // the allocation C just asked alloc() for, so it is not read back.
        const result = internals.emptyHandOff(spec.shape, spec.dtype, 'webgpu');
        const made = lastAlloc;
        if (made === null) throw makeError('RuntimeError', `${k.name}: the output was not allocated on webgpu:0`);
        const outDesc = { data: made, shape: spec.shape, dtype: spec.dtype, byteOffset: 0, strides: null };
        current(k.name)[k.method](...descs, outDesc, spec);
        return result; // C owns the result
      } finally {
        // Tensor arguments arrive as fresh wrappers made for this call.
        for (const v of args) if (v instanceof Tensor) v.dispose();
      }
    };
  }

  return {
    name: 'webgpu',
    deviceType: WEBGPU_DEVICE_TYPE,
    priority,
    kernels: KERNELS,
    device,
    get ready() {
      return be?.ready ?? false;
    },
    /** The underlying WebGPU backend (null before the first init). */
    get engine() {
      return be;
    },
    async init(runtime) {
      if (disposed) throw makeError('ValueError', 'webgpu: the runtime was disposed');
      peers ??= runtime[INTERNALS]?.peers ?? null;
      // Without getGPU, the backend adopts `device` (checked there: it may be anything a caller passed).
      be ??= getGPU === null
        ? createWebGPUBackend({ device: gpuDevice, makeError, logger: runtime.logger })
        : createWebGPUBackend({ gpu: await getGPU(), makeError, logger: runtime.logger });
      const info = await be.init();
      if (disposed) {
        be.dispose(); // disposed while the device was being acquired
        throw makeError('ValueError', 'webgpu: the runtime was disposed');
      }
      if (info.generation !== generation) {
        pool.clear(); // the buffers of a lost device are gone with it
        pooledBytes = 0;
        generation = info.generation;
      }
      return info;
    },
    globals(runtime) {
      peers ??= runtime[INTERNALS]?.peers ?? null;
      const kernels = Object.fromEntries(KERNELS.map((k) => [k.name, { fn: kernelGlobal(runtime, k), metadata: kernelMetadata(k) }]));
      return runtime.coreKind === 'tvm-ffi' ? { ...kernels, ...tvmGlobals(runtime) } : kernels;
    },
    /** TVM's kernels: the dispatch function of a kernel (function info, WGSL), its pipeline compiled asynchronously. */
    createShaderAsync: (info, code) => shadersOf('createShaderAsync').createAsync(info, code),
    /**
     * Submits the work recorded so far and waits until the device has done
     * it and every copy into wasm memory has landed; reports GPU errors.
     */
    async sync() {
      await current('sync').sync();
      while (pendingReads.size) await Promise.all(pendingReads);
      const e = readFailure;
      readFailure = null;
      if (e) throw e;
    },
    /** Submits the work recorded so far, without waiting for it (other libraries then see its results). */
    flush() {
      be?.flush();
    },
    /**
     * An imported allocation over another library's GPUBuffer (checked:
     * this device, STORAGE usage, not destroyed, not mapped). owned: freeing
     * it destroys the buffer.
     */
    importBuffer: (buffer, owned, what = 'importBuffer') => current(what).importBuffer(buffer, owned, what),
    /**
     * Runs make() (which allocates one tensor) with `allocation` as the memory
     * its alloc() gets; returns make()'s result and whether it was used.
     */
    adopt(allocation, make) {
      adopting = allocation;
      try {
        return make();
      } finally {
        adopting = null;
      }
    },
    /** Whether `handle` (a tensor's data pointer) stands for `allocation`. */
    holds: (handle, allocation) => allocations.get(handle) === allocation,
    /**
     * rt.dispose(): frees every buffer and destroys the GPU device this
     * backend created. On an adopted device only webffi's own buffers are
     * destroyed (not exported ones, nor imports it does not own).
     */
    dispose() {
      disposed = true;
      if (!be) return;
      if (getGPU === null && be.ready) {
        for (const a of allocations.values()) be.free(a);
        for (const list of pool.values()) for (const a of list) be.free(a);
      }
      allocations.clear();
      for (const bytes of charged.values()) peers.deviceGive(bytes); // the runtime's again
      charged.clear();
      pool.clear();
      pooledBytes = 0;
      be.dispose();
    },
  };
}
