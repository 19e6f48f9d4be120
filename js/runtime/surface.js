// The public surface: the runtime object load() returns, and the internals
// js/tensor.js and the backends reach through runtime[INTERNALS].
import { PTR, RUNTIME, INTERNALS, AS_POD, runtimeOf, stampRuntime } from '../objects.js';
import { isTrap, DISPOSED } from './poison.js';
import { moduleLoader, ModuleLoadError } from '../dylink.js';
import { DataType, Device } from '../values.js';
import { makeError } from '../errors.js';
import { textOf, describe } from './checks.js';

export function install(state) {
  const { x, w, L, meta, heap, hooks } = state;
  const { ANY, PAYLOAD, size } = L;

  /** A device id or type: an int32 (DLDevice's fields are 32-bit). */
  function deviceField(v, what) {
    if (Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff) return v;
    throw makeError('ValueError', `Invalid device ${what}: ${typeof v === 'number' ? v : describe(v)}`);
  }

  function parseDevice(spec, id) {
    const deviceId = id === undefined || id === null ? 0 : deviceField(id, 'id');
    if (typeof spec === 'number') return state.deviceOf(deviceField(spec, 'type'), deviceId);
    if (spec instanceof Device) return id === undefined ? spec : state.deviceOf(spec.deviceType, deviceId);
    const text = textOf(spec, 'device');
    const m = /^([a-z_]+)(?::(\d+))?$/.exec(text);
    const type = m && Object.hasOwn(meta.device_type, m[1]) ? meta.device_type[m[1]] : undefined;
    if (type === undefined) throw makeError('ValueError', `Unknown device: ${text}`);
    return state.deviceOf(type, m[2] !== undefined ? deviceField(Number(m[2]), 'id') : deviceId);
  }

  function parseDataType(text) {
    if (text instanceof DataType) return text;
    return state.inFrame(() => {
      const ba = state.byteArray(textOf(text, 'dtype'));
      const out = state.alloc(size.DLDataType);
      state.check(w.TVMFFIDataTypeFromString(ba, out));
      return state.dataTypeAt(out);
    });
  }

  const runtime = {
    [RUNTIME]: hooks,
    /** The ABI metadata of the loaded core. */
    metadata: meta,
    /** Which kind of core this runtime drives: 'webffi' (its own) or 'tvm-ffi' (a library TVM compiled). */
    coreKind: state.core.kind,
    /** The wasm instance's exports (for tools and benchmarks). */
    exports: x,
    getGlobal: state.getGlobal,
    registerGlobal: state.registerGlobal,
    listGlobals: state.listGlobals,
    removeGlobal: state.removeGlobal,
    device: parseDevice,
    dtype: parseDataType,
    /**
     * Runs fn; every handle created meanwhile (except the value returned) is
     * disposed when it ends, however it ends.
     */
    scope: state.scope,
    toFFI: state.toFFI,
    /**
     * The JS class of a registered type: reflected fields as properties,
     * methods on the prototype, static methods (e.g. `__ffi_init__`) on the class.
     */
    objectClass(key) {
      if (state.trap.poisoned) throw state.fatal();
      return state.inFrame(() => {
        const out = state.alloc(ANY);
        const text = textOf(key, 'objectClass');
        if (w.TVMFFITypeKeyToIndex(state.byteArray(text), out) !== 0) {
          state.fresh();
          state.takeRaised(); // the core's own error for the miss, replaced by ours
          throw makeError('KeyError', `Unknown type key ${text}`);
        }
        state.fresh();
        return state.wrapperClass(heap.i32[out >> 2]);
      });
    },
    /** Makes objects of `typeKey` JS instances of cls (a subclass of FFIObject). */
    registerObjectClass(typeKeyOrIndex, cls) {
      const key = typeof typeKeyOrIndex === 'number' ? typeKeyOrIndex : textOf(typeKeyOrIndex, 'registerObjectClass');
      const index = typeof key === 'number' ? key : Object.hasOwn(L.T, key) ? L.T[key] : undefined;
      if (index === undefined) throw makeError('KeyError', `Unknown type key ${key}`);
      state.objectClasses.set(index, cls);
    },
    /**
     * Loads a C module built with `webffi build --module`: a URL (a path in
     * Node), wasm bytes or a WebAssembly.Module. The same module already
     * loaded under its name is returned instead of being instantiated
     * again; a different one is refused unless options.replace (dylink.js).
     */
    async loadModule(source, options) {
      if (state.trap.poisoned) throw state.fatal();
      if (!state.core.modules) {
        throw makeError('RuntimeError',
          'loadModule: this runtime runs a tvm-ffi library, which cannot link webffi modules; ' +
          'load webffi\'s own core (load() without `wasm`) to load modules');
      }
      let ptr;
      try {
        ptr = await moduleLoader(x).load(source, options);
      } catch (e) {
        if (isTrap(e)) state.poison(e); // a trap the loader did not handle: the core's state is unknown
        state.trap.unwound = true; // another exception may have unwound the loader's calls into wasm
        state.unwindPending();
        throw e instanceof ModuleLoadError ? makeError(e.kind, e.message) : e;
      } finally {
        state.fresh();
      }
      return readModule(ptr);
    },
    /** Removes a module from the loaded table (it lives on while referenced). */
    unloadModule(name) {
      return state.withGlobal('webffi.ModuleUnload', (f) => f(name));
    },
    /** How many JS values C holds references to (callbacks, thrown values). */
    get liveJSValues() {
      return state.liveHandles;
    },
    /**
     * Switches C backtraces on or off; returns the previous setting. Off,
     * errors raised in C keep their kind, message and JS stack but capture
     * no C frames (`backtrace` is empty), which is what makes an error cost
     * about what `new Error()` does: for validation in hot loops.
     */
    setBacktraces(on) {
      if (typeof on !== 'boolean') throw makeError('TypeError', `setBacktraces: expected a boolean, got ${describe(on)}`);
      const before = state.backtraces.on;
      state.backtraces.on = on;
      return before;
    },
    /** Whether errors raised in C capture their C frames (load({ backtraces }), setBacktraces). */
    get backtraces() {
      return state.backtraces.on;
    },
    /** The trap that poisoned this instance, or null. */
    get poisoned() {
      const p = state.trap.poisoned;
      return p === DISPOSED ? null : p;
    },
    /**
     * Releases what the runtime holds outside its wasm memory (the device
     * backends: the GPU device it created) and refuses every later use
     * with a ValueError; the memory goes with the last reference. Handles
     * of the runtime then dispose as no-ops. Idempotent.
     */
    dispose() {
      if (state.trap.poisoned === DISPOSED) return;
      try {
        runtime.backends?.dispose();
      } finally {
        state.trap.poisoned = DISPOSED;
        state.core.stopThreads?.(); // the threaded core's workers
      }
    },
    [Symbol.dispose]() {
      runtime.dispose();
    },
    /** Whether dispose() was called. */
    get disposed() {
      return state.trap.poisoned === DISPOSED;
    },
    logger: state.logger,
    /** Threads a parallel launch (TVMBackendParallelLaunch) runs on: 1 on the single-threaded core. */
    threads: state.core.threads ?? 1,
  };

  /** The module at ptr (a new reference) as its wrapper. */
  function readModule(ptr) {
    const cls = state.objectClasses.get(L.T_MODULE) ?? state.wrapperClass(L.T_MODULE);
    return new cls(hooks, ptr, L.T_MODULE);
  }

  // For js/tensor.js and the backend registry: frames, errors, wrappers.
  Object.defineProperty(runtime, INTERNALS, {
    value: {
      hooks, inFrame: state.inFrame, alloc: state.alloc, check: state.check,
      /** The exports, each guarded: a trap in one poisons the instance. */
      guarded: w,
      poisonCheck: state.poisonCheck,
      /**
       * For a callback's result: moves the wrapper's reference into the
       * current frame (released when the callback returns, after C took its
       * own) and returns a value that writes the object.
       */
      handOff(wrapper) {
        const p = hooks.ptrOf(wrapper);
        hooks.forget(wrapper);
        state.queueDecref(p);
        const typeIndex = wrapper.typeIndex;
        return stampRuntime({ [AS_POD]: () => [p, typeIndex] }, hooks);
      },
      /** handOff() for an object address the caller holds a new reference to (no wrapper). */
      handOffPtr(p, typeIndex) {
        state.queueDecref(p);
        return stampRuntime({ [AS_POD]: () => [p, typeIndex] }, hooks);
      },
      /** How a `DLTensor*` reaches JS (js/tensor.js: a TensorView). */
      setDLTensorReader: state.setDLTensorReader,
      /** How a typed array argument becomes an FFI value (js/tensor.js: a 1-D CPU tensor the call owns). */
      setTypedArrayConverter: state.setTypedArrayConverter,
      /** A registered type's key, ancestors, fields and methods with their metadata, by key (bin/types.mjs). */
      typeInfoOf: state.typeInfoOf,
      /** The key of the type with that index. */
      typeKey: state.typeKey,
      /**
       * The global function `name` as a wrapper the runtime keeps (not to be
       * disposed), reused while the name maps to the same function: for
       * callers that call globals by name per request (js/session.js).
       */
      globalByName: state.globalByName,
      /** What protects the owner from peers: the peer budget and its device charges (js/core/peer_guard.js). */
      peers: state.peers,
    },
  });
  state.runtime = runtime;
}

