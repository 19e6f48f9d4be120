// The runtime's device backends: registration with priorities, lazy
// single-flight initialisation with failures remembered (each reported once
// through the logger), and, for a backend that serves a device type, its
// installation in the C core through `webffi.SetDeviceAPI`, so tensors C
// allocates (TVMFFIEnvTensorAlloc) or copies (WebFFITensorCopy) reach it.
//
// A backend is an object:
//   { name, deviceType?, priority? (default 0), init(runtime) (may be async),
//     globals?(runtime): { name: fn | { fn, metadata } } (global functions registered with it),
//     device?: { alloc(nbytes) -> non-zero int handle, free(handle),
//                upload(handle, byteOffset, Uint8Array),
//                download(handle, byteOffset, nbytes, out?: Uint8Array) -> Promise<Uint8Array>,
//                copy(src, srcOffset, dst, dstOffset, nbytes),
//                exportBuffer?(handle) -> the GPUBuffer behind it (tensor.gpuBuffer),
//                gpuDevice? (rt.gpuDevice) },
//     ready? (false after a loss: the next use initialises it again),
//     dispose?() (the runtime is disposed: release the device and what it holds) }
import { makeError } from '../errors.js';

const CPU = 1;

export function createBackendRegistry(runtime) {
  const logger = runtime.logger;
  const entries = new Map(); // name -> entry
  const installed = new Map(); // device type -> entry whose device C uses
  const missing = new Map(); // device type -> how to get a backend for it (discovery found none)
  let disposed = null; // the error every later use gets, once the runtime is disposed

  function deviceTypeOf(backend) {
    const t = backend.deviceType;
    return t === undefined ? undefined : runtime.device(t).deviceType;
  }

  /** Registers a backend (or a factory `(runtime) => backend`): its name, or null (one warning) when it throws. */
  function register(backendOrFactory, source = '') {
    if (disposed) return null; // a disposed runtime takes no backends (pushed onto the global queue later)
    let backend;
    try {
      backend = typeof backendOrFactory === 'function' ? backendOrFactory(runtime) : backendOrFactory;
      if (!backend || typeof backend.name !== 'string' || typeof backend.init !== 'function') {
        throw new TypeError('a backend is an object with a string `name` and an `init` function');
      }
      if (entries.has(backend.name)) {
        throw new Error(`a backend named ${backend.name} is already registered`);
      }
      const entry = {
        backend, name: backend.name, deviceType: deviceTypeOf(backend),
        priority: backend.priority ?? 0, status: 'registered', error: null, promise: null,
      };
      const fns = backend.globals?.(runtime) ?? {};
      for (const [name, g] of Object.entries(fns)) {
        // a function, or { fn, metadata } (what ffi.GetGlobalFuncMetadata gives for it)
        const [fn, metadata] = typeof g === 'function' ? [g, undefined] : [g?.fn, g?.metadata];
        runtime.registerGlobal(name, fn, { override: true, metadata });
      }
      entries.set(backend.name, entry);
      return backend.name;
    } catch (e) {
      const name = backend?.name ?? (source || 'backend');
      logger.warn?.(`webffi: backend ${name} could not be registered: ${e?.message ?? e}`);
      return null;
    }
  }

  /** Initialises a backend once (concurrent calls share it); a failure is remembered. */
  function init(name) {
    if (disposed) return Promise.reject(disposed);
    const entry = entries.get(name);
    if (!entry) return Promise.reject(makeError('ValueError', `No backend named ${name} is registered`));
    if (entry.status === 'ready' && entry.backend.ready === false) entry.promise = null; // lost: again
    entry.promise ??= (async () => {
      entry.status = 'initialising';
      try {
        await entry.backend.init(runtime);
      } catch (e) {
        entry.status = 'failed';
        entry.error = e;
        logger.warn?.(`webffi: backend ${name} is unavailable: ${e?.message ?? e}`);
        throw e;
      }
      entry.status = 'ready';
      if (entry.deviceType !== undefined && entry.backend.device) install(entry);
      return entry.backend;
    })();
    return entry.promise;
  }

  function candidates(type) {
    return [...entries.values()].filter((e) => e.deviceType === type).sort((a, b) => b.priority - a.priority);
  }

  /** Initialises the best backend for a device type: by priority, skipping those that fail. */
  async function ensure(type) {
    if (disposed) throw disposed;
    if (type === CPU) return null;
    const list = candidates(type);
    const current = installed.get(type);
    if (current && current.backend.ready !== false && current === list[0]) return current.backend;
    for (const entry of list) {
      try {
        return await init(entry.name);
      } catch {
        // reported by init(); try the next one
      }
    }
    throw noBackend(type, list);
  }

  function noBackend(type, tried) {
    const dev = runtime.device(type);
    const why = tried.length
      ? `: ${tried.map((e) => `${e.name} failed (${e.error?.message ?? e.error})`).join('; ')}`
      : `; none is registered for it${missing.has(type) ? ` (${missing.get(type)})` : ''}`;
    return makeError('RuntimeError', `No backend serves ${dev.name}${why}`);
  }

  /** Synchronous check before allocating on a device: its backend must be initialised. */
  function requireReady(type) {
    if (installed.has(type)) return;
    const dev = runtime.device(type);
    const hint = candidates(type).length === 0 && missing.has(type) ? ` (${missing.get(type)})` : '';
    throw makeError('RuntimeError',
      `No initialised backend serves ${dev.name}: await rt.backends.ensure('${dev.name}') (or tensor.toDevice('${dev.name}')) first${hint}`);
  }

  /** Hands the device's memory operations to the C core. */
  function install(entry) {
    const type = entry.deviceType;
    const current = installed.get(type);
    if (current && current !== entry && current.priority >= entry.priority && current.status === 'ready') return;
    if (runtime.coreKind !== 'webffi') {
      // A library TVM compiled reaches its devices through TVM's own
      // protocol (globals the backend registered), not webffi's device table.
      installed.set(type, entry);
      return;
    }
    const dev = entry.backend.device;
    const memory = runtime.exports.memory;
    const setDeviceAPI = runtime.getGlobal('webffi.SetDeviceAPI');
    try {
      setDeviceAPI(
        type,
        (device, nbytes) => dev.alloc(nbytes),
        (device, handle) => dev.free(handle),
        (from, fromOffset, fromDevice, to, toOffset, toDevice, nbytes) => {
          if (fromDevice.deviceType === CPU) {
            dev.upload(to, toOffset, new Uint8Array(memory.buffer, from + fromOffset, nbytes));
          } else if (toDevice.deviceType === CPU) {
            throw makeError('RuntimeError',
              `Copying from ${fromDevice} to the CPU is asynchronous: use \`await tensor.data()\` or \`await tensor.toDevice('cpu')\``);
          } else {
            dev.copy(from, fromOffset, to, toOffset, nbytes);
          }
        },
        // Queued work runs in order on the device and reads are awaited, so a
        // synchronous sync has nothing to wait for.
        () => {},
      );
    } finally {
      setDeviceAPI.dispose();
    }
    installed.set(type, entry);
  }

  /** rt.dispose(): every backend releases what it holds; none serves the runtime again. */
  function dispose() {
    disposed ??= makeError('ValueError', 'Cannot use a disposed runtime (rt.dispose() was called): load a new one');
    installed.clear();
    for (const entry of entries.values()) {
      try {
        entry.backend.dispose?.();
      } catch (e) {
        logger.warn?.(`webffi: backend ${entry.name} failed to dispose: ${e?.message ?? e}`);
      }
      entry.status = 'disposed';
    }
  }

  return {
    register,
    dispose,
    /** Records how to get a backend for a device none serves, for the error that reports it. */
    explainMissing(device, text) {
      missing.set(runtime.device(device).deviceType, String(text));
    },
    init,
    /** Initialises the best backend for a device ('webgpu', 15, a Device). */
    ensure: (device) => ensure(runtime.device(device).deviceType),
    requireReady,
    /** The memory operations of the backend installed for a device type, or null. */
    deviceFor(type) {
      if (disposed) throw disposed;
      return installed.get(type)?.backend.device ?? null;
    },
    /** A registered backend object by name, or null. */
    get: (name) => entries.get(name)?.backend ?? null,
    /** Every backend, CPU first: name, device, priority, status and the remembered error. */
    list() {
      const rows = [{ name: 'cpu', device: 'cpu', priority: 0, status: 'ready', error: null }];
      for (const e of entries.values()) {
        rows.push({
          name: e.name,
          device: e.deviceType === undefined ? null : runtime.device(e.deviceType).name,
          priority: e.priority,
          status: e.status === 'ready' && e.backend.ready === false ? 'lost' : e.status,
          error: e.error,
        });
      }
      return rows;
    },
  };
}
