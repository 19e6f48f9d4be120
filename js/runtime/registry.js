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

  // Globals called by name again and again (a worker session serving its
  // peer): one wrapper per name, reused while the registry still maps the
  // name to the same function (a lookup costs far less than making and
  // releasing a wrapper per call). The cache holds a reference to each, so
  // an address seen again is the same function. Bounded: the oldest goes.
  const byName = new Map();
  const BY_NAME_MAX = 256;
  function forget(name, f) {
    byName.delete(name);
    const p = f[PTR];
    f[PTR] = 0; // a wrapper still held somewhere is disposed, not dangling
    state.decref(p);
  }
  function globalByName(name) {
    if (state.trap.poisoned) throw state.fatal();
    const p = lookupGlobal(textOf(name, 'getGlobal'));
    const hit = byName.get(name);
    if (hit !== undefined) {
      if (hit[PTR] === p) {
        state.decref(p); // the lookup's reference: the cache holds one
        return hit;
      }
      forget(name, hit); // removed or replaced since
    }
    if (!p) throw makeError('ValueError', `Cannot find global function ${name}`);
    if (byName.size >= BY_NAME_MAX) {
      const [oldest, f] = byName.entries().next().value;
      forget(oldest, f);
    }
    const f = state.makeCallable(p, false);
    byName.set(name, f);
    return f;
  }

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

  /**
   * options.metadata (JSON text, or a value JSON.stringify writes) is what
   * ffi.GetGlobalFuncMetadata gives for it, e.g. `{ type_schema: ... }`.
   */
  function registerGlobal(name, fn, options) {
    if (state.trap.poisoned) throw state.fatal();
    const opts = optionsOf(options, 'registerGlobal');
    const override = Boolean(opts.override);
    if (typeof fn !== 'function') throw new FFITypeError('registerGlobal expects a function');
    const metadata = opts.metadata === undefined || typeof opts.metadata === 'string'
      ? opts.metadata : JSON.stringify(opts.metadata);
    return state.inFrame(() => {
      const ba = state.byteArray(textOf(name, 'registerGlobal'));
      const f = fn[PTR] !== undefined ? hooks.ptrOf(fn) : state.queueDecref(state.jsFunctionToFFI(fn));
      if (metadata === undefined) {
        state.check(w.TVMFFIFunctionSetGlobal(ba, f, override ? 1 : 0));
        return;
      }
      // a TVMFFIMethodInfo: name, doc (empty), metadata, flags 0, the function
      const { off, size } = L;
      const text = state.byteArray(metadata);
      const info = state.alloc(size.TVMFFIMethodInfo);
      state.fresh();
      heap.u8.fill(0, info, info + size.TVMFFIMethodInfo);
      heap.u8.copyWithin(info + off['TVMFFIMethodInfo.name'], ba, ba + size.TVMFFIByteArray);
      heap.u8.copyWithin(info + off['TVMFFIMethodInfo.metadata'], text, text + size.TVMFFIByteArray);
      const method = info + off['TVMFFIMethodInfo.method'];
      heap.i32[method >> 2] = L.T_FUNCTION;
      heap.u32[(method + L.PAYLOAD) >> 2] = f;
      state.check(w.TVMFFIFunctionSetGlobalFromMethodInfo(info, override ? 1 : 0));
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

  Object.assign(state, { getGlobal, globalByName, registerGlobal, listGlobals, removeGlobal, withGlobal });
}
