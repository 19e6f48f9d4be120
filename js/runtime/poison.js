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

  // Unwinding. A JS exception that is not a trap (a stack overflow: wasm
  // frames and JS frames share one stack) unwinds wasm frames without
  // running their epilogues: the shadow stack pointer and the core's
  // per-call counters stay where the deepest frame left them. Each catch
  // around a call into wasm notes it in `trap.unwound` (a store: right
  // after an overflow not even a function call may fit) and then tries to
  // put the core back; what it cannot finish, the next call finishes
  // before it enters wasm (`unwindPending`), or the next turn of the event
  // loop. Back means where the JS that runs now stands: inside the nth
  // nested callback (calls.js counts them), the mark C made when it called
  // that callback (src/wasm/js_function.c); outside every callback, the
  // stack pointer read here before any call.
  const canUnwind = typeof x.WebFFIUnwind === 'function' && typeof x.WebFFIStackRestore === 'function' &&
    typeof x.WebFFIStackPointer === 'function';
  const stackBase = canUnwind ? x.WebFFIStackPointer() : 0;
  trap.unwound = false;
  let retryQueued = false;

  /** Puts the core back to where the JS running now stands, when an unwind is noted (never throws). */
  state.unwindPending = function unwindPending() {
    if (!trap.unwound) return;
    if (!canUnwind || trap.poisoned) {
      trap.unwound = false;
      return;
    }
    const depth = state.callbackDepth();
    try {
      const sp = x.WebFFIUnwind(depth);
      if (depth === 0) x.WebFFIStackRestore(stackBase);
      else if (sp !== 0) x.WebFFIStackRestore(sp);
      trap.unwound = false;
    } catch (e) {
      if (isTrap(e)) {
        trap.poisoned = e;
        trap.unwound = false;
      } else if (!retryQueued) {
        retryQueued = true;
        try {
          queueMicrotask(() => {
            retryQueued = false;
            if (state.callbackDepth() === 0) unwindPending();
          });
        } catch {
          retryQueued = false;
        }
      }
    }
  };

  /**
   * Called when a call into wasm threw. A trap poisons the instance; a
   * FatalError (a nested call trapped) passes through; anything else did not
   * come from wasm code (or unwound it without a trap: the core is put back
   * first) and is rethrown as it is.
   */
  state.poison = function poison(e) {
    if (e instanceof FatalError) throw e;
    if (!isTrap(e)) {
      trap.unwound = true;
      state.unwindPending();
      // the call may have grown memory before it was unwound (a model
      // library's growth refused to a peer, js/core/peer_guard.js): the
      // views after every call are refreshed here too
      state.fresh?.();
      throw e;
    }
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
    if (trap.unwound) state.unwindPending();
    try {
      x.TVMFFIObjectDecRef(p);
    } catch (e) {
      trap.unwound = true;
      state.poison(e);
    }
  };

  /**
   * The exports wrapped so that a trap in any of them poisons (cold paths:
   * the hot ones guard their calls themselves).
   */
  const guard = (f) => function guardedExport(...args) {
    if (trap.unwound) state.unwindPending();
    try {
      return f(...args);
    } catch (e) {
      trap.unwound = true;
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
