// Wrapper lifetimes: every handle owns one strong reference, released by
// dispose()/a scope, or by the FinalizationRegistry when the wrapper is
// collected. The hooks object here is what wrappers reach as this[RUNTIME].
//
// Registering with the finalizer is most of what a short-lived handle
// costs, so it is put off until it is needed:
//   - a handle made inside rt.scope() belongs to that scope, which disposes
//     it: it is never registered (the scope's result, if it leaves the last
//     scope, joins the pending list below);
//   - any other handle joins a pending list, which is registered at the next
//     checkpoint: when PENDING_MAX handles wait, or in a microtask once the
//     running JS job ends. A handle disposed before then is skipped.
// Until its checkpoint the list holds the handle strongly: one dropped at
// once is collectable from the end of its job on, which delays nothing (a
// finalizer never runs before the job that made its handle has ended).
// Registration gives the wrapper a cell { p } as the held value, with no
// unregister token (with one, a registration cost 2-5x as much: the floor
// rows of bench/objects_paired.mjs): dispose() empties the cell instead of
// unregistering, and the finalizer releases only a cell that still holds
// its address.
import { PTR, CELL, runtimeOf, isHandle } from '../objects.js';
import { describe } from './checks.js';
import { containerClasses } from '../containers.js';
import { ModuleObject } from '../module_object.js';
import { ValueError, FFITypeError, makeError } from '../errors.js';

/** Handles waiting for their registration; more are registered at once. */
const PENDING_MAX = 256;

export function install(state) {
  const { L, hooks } = state;
  const decref = state.decref;
  // held: a wrapper's cell, or the address of an object held for a JS value
  // (raise.js: an ffi.Error kept for its JS error)
  const finalizer = new FinalizationRegistry((held) => {
    const p = typeof held === 'number' ? held : held.p;
    if (p === 0) return; // disposed or handed off after its registration
    try {
      decref(p);
    } catch {
      // the instance is poisoned: nothing more is released
    }
  });
  state.finalizer = finalizer;
  // The handles the open scopes own, innermost last: scope() owns those
  // from its start index to the top when it ends.
  const owned = [];
  let top = 0;
  let depth = 0;
  const objectClasses = state.objectClasses; // type index -> wrapper class
  for (const [key, cls] of Object.entries(containerClasses)) objectClasses.set(L.T[key], cls);
  objectClasses.set(L.T_MODULE, ModuleObject);
  const cachedGlobals = new Map();

  // A handle disposed inside a callback may be the very object a C frame
  // below is using (an argument the caller passed as a borrowed view):
  // its reference is released once no wasm frame is live, in a microtask.
  let later = [];
  function releaseLater(p) {
    if (later.length === 0) queueMicrotask(releaseNow);
    later.push(p);
  }
  function releaseNow() {
    const ps = later;
    later = [];
    for (const p of ps) decref(p);
  }

  // Handles not yet registered (see the header), and whether a microtask
  // will register them.
  const pending = new Array(PENDING_MAX).fill(null);
  let npending = 0;
  let flushQueued = false;
  function release(wrapper, p) {
    const cell = wrapper[CELL];
    if (cell !== null) cell.p = 0;
    if (state.callbackDepth() === 0) decref(p);
    else releaseLater(p);
  }
  function register(wrapper) {
    const p = wrapper[PTR];
    if (p !== 0 && wrapper[CELL] === null) {
      const cell = { p };
      wrapper[CELL] = cell;
      finalizer.register(wrapper, cell);
    }
  }
  function defer(wrapper) {
    if (npending === PENDING_MAX) registerPending();
    pending[npending++] = wrapper;
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(checkpoint);
    }
  }
  function registerPending() {
    const n = npending;
    npending = 0;
    for (let i = 0; i < n; i++) {
      register(pending[i]);
      pending[i] = null;
    }
  }
  function checkpoint() {
    flushQueued = false;
    registerPending();
  }

  function foreign(v, owner) {
    if (owner === undefined) {
      return new FFITypeError(`Cannot use a ${describe(v)} as a webffi handle: it is not one (a Proxy or a copy of a handle is not a handle)`);
    }
    let key;
    try {
      key = owner.typeKeyOf(v);
    } catch {
      key = 'handle';
    }
    return new FFITypeError(`Cannot use this \`${key}\` here: it belongs to another webffi runtime instance`);
  }
  state.foreign = foreign;

  Object.assign(hooks, {
    track(wrapper) {
      if (depth !== 0) owned[top++] = wrapper;
      else defer(wrapper);
    },
    release,
    /**
     * Registers a wrapper with the finalizer now, if it is not yet: for one
     * whose reference may outlive dispose() (a tensor with views).
     */
    register,
    /** Takes the reference away from a wrapper (handed to C): nothing releases it here any more. */
    forget(wrapper) {
      const cell = wrapper[CELL];
      if (cell !== null) cell.p = 0;
      wrapper[PTR] = 0;
    },
    /**
     * The object address of one of this runtime's handles. Another runtime's
     * handle (an address in another heap) and anything else that only looks
     * like a handle (a Proxy, a forged object) are refused.
     */
    ptrOf(wrapper) {
      const owner = runtimeOf(wrapper);
      if (owner !== hooks) throw foreign(wrapper, owner);
      const p = wrapper[PTR];
      if (!p) {
        throw new ValueError(`Cannot use a disposed \`${hooks.typeKeyOf(wrapper)}\``);
      }
      return p;
    },
    typeKeyOf(wrapper) {
      return typeof wrapper === 'function' ? 'ffi.Function' : state.typeKey(wrapper.typeIndex);
    },
    /**
     * A global function kept for the runtime's lifetime (container
     * operations); `optional`: null when it is not registered (not kept:
     * it may be registered later).
     */
    global(name, optional = false) {
      let f = cachedGlobals.get(name);
      if (f === undefined) {
        const p = state.lookupGlobal(name);
        if (!p && optional) return null;
        if (!p) throw makeError('ValueError', `Cannot find global function ${name}`);
        f = state.makeCallable(p, false);
        cachedGlobals.set(name, f);
      }
      return f;
    },
    /** Whether FFI floats are read as FloatValue (so 1.0 stays a float); returns the previous setting. */
    setFloatsAsValues(on) {
      return state.setFloatsAsValues(on);
    },
    /** Type key, field names and whether a creator exists, for a type index. */
    reflection(index) {
      const info = state.typeInfo(index);
      if (!info) return null;
      return { key: info.key, fields: info.fields.map((f) => f.name), hasCreator: state.creatorOf(index) !== 0 };
    },
    /** A new object of type key made by its creator (fields at their defaults). */
    create(key) {
      return state.create(key);
    },
  });

  /**
   * Runs fn; every handle created meanwhile (except the value returned) is
   * disposed when it ends, however it ends.
   */
  state.scope = function scope(fn) {
    const start = top;
    depth++;
    let result;
    try {
      result = fn();
      return result;
    } finally {
      depth--;
      // A dispose throws only on a trap (the instance is then poisoned and
      // releases nothing more): what it leaves above start, the enclosing
      // scope disposes again, harmlessly.
      const end = top;
      for (let i = start; i < end; i++) {
        const h = owned[i];
        owned[i] = null;
        if (h !== null && h !== result) h.dispose();
      }
      // what disposing made (nothing, as a rule) moves down to the enclosing scope
      let to = start;
      for (let i = end; i < top; i++) {
        owned[to++] = owned[i];
        owned[i] = null;
      }
      top = to;
      // the result leaves this scope: the enclosing one takes it, or
      // outside every scope it waits for registration as any other handle
      if (result !== undefined && isHandle(result)) {
        if (depth !== 0) owned[top++] = result;
        else if (result[CELL] === null && runtimeOf(result) === hooks) defer(result);
      }
    }
  };
}
