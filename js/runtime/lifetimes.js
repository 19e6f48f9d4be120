// Wrapper lifetimes: every handle owns one strong reference, released by
// dispose()/a scope, or by the FinalizationRegistry when the wrapper is
// collected. The hooks object here is what wrappers reach as this[RUNTIME].
import { PTR, runtimeOf } from '../objects.js';
import { describe } from './checks.js';
import { containerClasses } from '../containers.js';
import { ModuleObject } from '../module_object.js';
import { ValueError, FFITypeError, makeError } from '../errors.js';

export function install(state) {
  const { L, hooks } = state;
  const decref = state.decref;
  const finalizer = new FinalizationRegistry((p) => {
    try {
      decref(p);
    } catch {
      // the instance is poisoned: nothing more is released
    }
  });
  state.finalizer = finalizer;
  const scopes = [];
  state.scopes = scopes;
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
    track(wrapper, p) {
      finalizer.register(wrapper, p, wrapper);
      if (scopes.length) scopes[scopes.length - 1].push(wrapper);
    },
    release(wrapper, p) {
      finalizer.unregister(wrapper);
      if (state.callbackDepth() === 0) decref(p);
      else releaseLater(p);
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
  state.scope = function scope(fn, isHandle) {
    const created = [];
    scopes.push(created);
    let result;
    try {
      result = fn();
      return result;
    } finally {
      scopes.pop();
      for (const h of created) if (h !== result) h.dispose();
      if (result !== undefined && isHandle(result) && scopes.length) {
        scopes[scopes.length - 1].push(result);
      }
    }
  };
}
