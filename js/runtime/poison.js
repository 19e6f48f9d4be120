// Poisoning: a wasm trap leaves the instance's memory in an unknown state,
// so the first one is remembered and every later call refuses to run.
// Only a real trap (a WebAssembly.RuntimeError thrown while wasm code ran)
// poisons: JS errors from callbacks travel through C as raised errors and
// never unwind wasm frames, and every host import catches what it calls.
import { FatalError, makeError } from '../errors.js';

/**
 * What trap.poisoned holds once the runtime is disposed (rt.dispose()): every
 * check that refuses a poisoned instance refuses a disposed one too, at no
 * extra cost on the hot paths.
 */
export const DISPOSED = Object.freeze({ message: 'the runtime was disposed' });

/** Whether e is a trap from wasm code (never throws, whatever e is). */
export function isTrap(e) {
  try {
    return e instanceof WebAssembly.RuntimeError;
  } catch {
    return false; // a Proxy whose getPrototypeOf trap throws is not a trap
  }
}

export function install(state) {
  const { x, trap } = state;

  /** The error every call throws once the instance is poisoned. */
  state.fatal = function fatal() {
    if (trap.poisoned === DISPOSED) return makeError('ValueError', 'Cannot use a disposed runtime (rt.dispose() was called): load a new one');
    return new FatalError(
      `webffi: the wasm instance was poisoned by an earlier trap (${trap.poisoned.message}); ` +
        'load a new runtime', { cause: trap.poisoned });
  };

  /**
   * Called when a call into wasm threw. A trap poisons the instance; a
   * FatalError (a nested call trapped) passes through; anything else did not
   * come from wasm code and is rethrown as it is.
   */
  state.poison = function poison(e) {
    if (e instanceof FatalError) throw e;
    if (!isTrap(e)) throw e;
    if (trap.poisoned) throw state.fatal();
    trap.poisoned = e;
    throw new FatalError(
      `webffi: wasm trap (${e.message}); the instance is poisoned and refuses every later call`,
      { cause: e });
  };

  state.poisonCheck = function poisonCheck() {
    if (trap.poisoned) throw state.fatal();
  };

  state.decref = function decref(p) {
    if (trap.poisoned) return;
    try {
      x.TVMFFIObjectDecRef(p);
    } catch (e) {
      state.poison(e);
    }
  };

  /**
   * The exports wrapped so that a trap in any of them poisons (cold paths:
   * the hot ones guard their calls themselves).
   */
  const guard = (f) => function guardedExport(...args) {
    try {
      return f(...args);
    } catch (e) {
      return state.poison(e);
    }
  };
  const guarded = {};
  // A core's entries may differ from its raw exports (js/core/tvm_core.js).
  for (const [name, f] of Object.entries(state.core.entries ?? x)) {
    if (typeof f === 'function') guarded[name] = guard(f);
  }
  state.w = guarded;
  state.guard = guard;
}
