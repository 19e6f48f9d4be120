// The global function registry: lookup, registration, listing, removal.
import { PTR } from '../objects.js';
import { FFITypeError, makeError } from '../errors.js';
import { optionsOf, textOf } from './checks.js';

export function install(state) {
  const { w, L, heap, hooks } = state;

  function lookupGlobal(name) {
    return state.inFrame(() => {
      const ba = state.byteArray(name);
      const out = state.alloc(L.ANY);
      state.check(w.TVMFFIFunctionGetGlobal(ba, out));
      return heap.u32[out >> 2];
    });
  }
  state.lookupGlobal = lookupGlobal;

  function getGlobal(name, options) {
    if (state.trap.poisoned) throw state.fatal();
    const optional = Boolean(optionsOf(options, 'getGlobal').optional);
    const text = textOf(name, 'getGlobal');
    const p = lookupGlobal(text);
    if (!p) {
      if (optional) return null;
      throw makeError('ValueError', `Cannot find global function ${text}`);
    }
    return state.makeCallable(p);
  }

  function registerGlobal(name, fn, options) {
    if (state.trap.poisoned) throw state.fatal();
    const override = Boolean(optionsOf(options, 'registerGlobal').override);
    if (typeof fn !== 'function') throw new FFITypeError('registerGlobal expects a function');
    return state.inFrame(() => {
      const ba = state.byteArray(textOf(name, 'registerGlobal'));
      const f = fn[PTR] !== undefined ? hooks.ptrOf(fn) : state.queueDecref(state.jsFunctionToFFI(fn));
      state.check(w.TVMFFIFunctionSetGlobal(ba, f, override ? 1 : 0));
    });
  }

  function listGlobals() {
    const functor = getGlobal('ffi.FunctionListGlobalNamesFunctor')();
    try {
      const n = functor(-1);
      const names = new Array(n);
      for (let i = 0; i < n; i++) names[i] = functor(i);
      return names;
    } finally {
      functor.dispose();
    }
  }

  function withGlobal(name, body) {
    const f = getGlobal(name);
    try {
      return body(f);
    } finally {
      f.dispose();
    }
  }

  function removeGlobal(name) {
    return withGlobal('ffi.FunctionRemoveGlobal', (f) => f(textOf(name, 'removeGlobal')));
  }

  Object.assign(state, { getGlobal, registerGlobal, listGlobals, removeGlobal, withGlobal });
}
