// Reflection: what the core's type registry says about a type (key,
// ancestors, fields, methods), and the JS classes built from it.
import { FFIObject, PTR } from '../objects.js';
import { FFIError, makeError } from '../errors.js';
import { textOf } from './checks.js';

export function install(state) {
  const { x, w, L, heap, hooks, objectClasses } = state;
  const { off, size, T_OBJECT, PAYLOAD, ANY } = L;
  const typeInfos = new Map();
  const TINFO = (f) => off[`TVMFFITypeInfo.${f}`];
  const FINFO = (f) => off[`TVMFFIFieldInfo.${f}`];
  const MINFO = (f) => off[`TVMFFIMethodInfo.${f}`];

  state.typeKey = function typeKey(index) {
    return L.typeKeys.get(index) ?? typeInfo(index)?.key ?? `<type ${index}>`;
  };

  /** Key, ancestors, fields and methods of a registered type (null if unknown). */
  function typeInfo(index) {
    if (typeInfos.has(index)) return typeInfos.get(index);
    const p = w.TVMFFIGetTypeInfo(index);
    state.fresh();
    const I32 = heap.i32;
    const U32 = heap.u32;
    const text = state.byteArrayText;
    let info = null;
    if (p) {
      const depth = I32[(p + TINFO('type_depth')) >> 2];
      const ancestors = U32[(p + TINFO('type_ancestors')) >> 2];
      const parents = [];
      for (let i = 0; i < depth; i++) {
        parents.push(I32[(U32[(ancestors >> 2) + i] + TINFO('type_index')) >> 2]);
      }
      const fields = [];
      const fieldBase = U32[(p + TINFO('fields')) >> 2];
      for (let i = 0; i < I32[(p + TINFO('num_fields')) >> 2]; i++) {
        const f = fieldBase + i * size.TVMFFIFieldInfo;
        fields.push({
          name: text(f + FINFO('name')),
          flags: heap.dv.getInt32(f + FINFO('flags'), true),
          metadata: text(f + FINFO('metadata')),
        });
      }
      const methods = [];
      const methodBase = U32[(p + TINFO('methods')) >> 2];
      for (let i = 0; i < I32[(p + TINFO('num_methods')) >> 2]; i++) {
        const m = methodBase + i * size.TVMFFIMethodInfo;
        methods.push({
          name: text(m + MINFO('name')),
          flags: heap.dv.getInt32(m + MINFO('flags'), true),
          metadata: text(m + MINFO('metadata')),
          fn: U32[(m + MINFO('method') + PAYLOAD) >> 2],
        });
      }
      info = { key: text(p + TINFO('type_key')), parents, fields, methods };
    }
    typeInfos.set(index, info);
    return info;
  }
  state.typeInfo = typeInfo;

  /** typeInfo() by type key, with the index (null when no such type). */
  state.typeInfoOf = function typeInfoOf(key) {
    return state.inFrame(() => {
      const out = state.alloc(ANY);
      if (w.TVMFFITypeKeyToIndex(state.byteArray(textOf(key, 'typeInfoOf')), out) !== 0) {
        state.fresh();
        w.TVMFFIErrorMoveFromRaised(out);
        if (heap.u32[out >> 2]) state.decref(heap.u32[out >> 2]);
        return null;
      }
      state.fresh();
      const index = heap.i32[out >> 2];
      const info = typeInfo(index);
      return info && { index, ...info };
    });
  };

  /** A wrapper class for a reflected type: fields as properties, methods as functions. */
  function reflectedClass(index) {
    const info = typeInfo(index);
    const Base = info?.parents.length ? wrapperClass(info.parents[info.parents.length - 1]) : FFIObject;
    if (!info) return Base;
    const key = info.key;
    const init = info.methods.some((m) => m.name === '__ffi_init__' && m.flags & 4);
    const cls = {
      [key]: class extends Base {
        /**
         * `new Cls(...args)` makes an object as the type's `__ffi_init__`
         * does (as upstream's Python classes do); the runtime wraps objects
         * it receives with (hooks, pointer, type index).
         */
        constructor(...args) {
          if (args[0] === hooks) {
            super(...args);
          } else {
            if (!init) throw makeError('TypeError', `\`${key}\` has no __ffi_init__: it cannot be made with new`);
            const made = cls.__ffi_init__(...args);
            // a JS subclass of the class: the object is an instance of it
            if (new.target !== cls) Object.setPrototypeOf(made, new.target.prototype);
            return made;
          }
        }
      },
    }[key];
    for (const { name, flags } of info.fields) {
      Object.defineProperty(cls.prototype, name, {
        enumerable: true,
        get() {
          return fieldAccessor('ffi.MakeFieldGetter', key, name)(this);
        },
        set: flags & 1 ? function (v) {
          fieldAccessor('ffi.MakeFieldSetter', key, name)(this, v);
        } : undefined,
      });
    }
    for (const { name, flags, fn } of info.methods) {
      w.TVMFFIObjectIncRef(fn);
      const f = state.makeCallable(fn, false);
      if (flags & 4) cls[name] = f;
      else cls.prototype[name] = function (...args) { return f(this, ...args); };
    }
    return cls;
  }

  const fieldAccessors = new Map();
  function fieldAccessor(maker, key, name) {
    const id = `${maker}\0${key}\0${name}`;
    let f = fieldAccessors.get(id);
    if (f === undefined) {
      // kept for the runtime's lifetime, outside any scope
      const made = hooks.global(maker)(key, name);
      w.TVMFFIObjectIncRef(made[PTR]);
      f = state.makeCallable(made[PTR], false);
      made.dispose();
      fieldAccessors.set(id, f);
    }
    return f;
  }

  function wrapperClass(index) {
    let cls = objectClasses.get(index);
    if (cls === undefined) {
      cls = index >= T_OBJECT ? reflectedClass(index) : FFIObject;
      objectClasses.set(index, cls);
    }
    return cls;
  }
  state.wrapperClass = wrapperClass;

  /** The table index of a type's creator, or 0. */
  state.creatorOf = function creatorOf(index) {
    const p = w.TVMFFIGetTypeInfo(index);
    state.fresh();
    const meta = heap.u32[(p + TINFO('metadata')) >> 2];
    return meta ? heap.u32[(meta + off['TVMFFITypeMetadata.creator']) >> 2] : 0;
  };

  /** A new object of type key made by its creator (fields at their defaults). */
  state.create = function create(key) {
    const { inFrame, alloc, check } = state;
    return inFrame(() => {
      const index = alloc(ANY);
      check(w.TVMFFITypeKeyToIndex(state.byteArray(textOf(key, 'create')), index));
      const creator = state.creatorOf(heap.i32[index >> 2]);
      if (!creator) throw makeError('TypeError', `Type \`${key}\` has no creator`);
      const out = alloc(ANY);
      let rc;
      try {
        rc = x.__indirect_function_table.get(creator)(out);
      } catch (e) {
        if (e instanceof FFIError) throw e;
        state.poison(e);
      }
      check(rc);
      const obj = heap.u32[out >> 2];
      const ti = state.objectTypeIndex(obj);
      return new (objectClasses.get(ti) ?? wrapperClass(ti))(hooks, obj, ti);
    });
  };
}
