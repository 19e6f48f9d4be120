// The runtime over one instantiated webffi.wasm: marshaling JS values to and
// from TVMFFIAny, calling Functions both ways, errors across the boundary,
// and the global registry. Layouts come from the core's ABI metadata.
import { Heap } from './heap.js';
import { Device, DataType, IntValue, FloatValue } from './values.js';
import { FFIObject, PTR, RUNTIME, INTERNALS, AS_POD, RELEASE, functionPrototype, isHandle } from './objects.js';
import { jsStackToBacktrace, crossedWasmFrames, takeCapture } from './backtrace.js';
import { containerClasses } from './containers.js';
import { ModuleObject } from './module_object.js';
import { moduleLoader, ModuleLoadError } from './dylink.js';
import {
  FFIError, FatalError, MemoryError, OverflowError, ValueError, FFITypeError,
  makeError, makeDeferredError, kindOf, messageOf, describe,
} from './errors.js';

/** Bytes of argument space reused by every call (nested calls stack up). */
const SCRATCH_BYTES = 64 * 1024;
const TWO_32 = 4294967296;
const INT64_LIMIT = 9223372036854775808; // 2^63
const MIN_INT64 = -(1n << 63n);
const MAX_INT64 = (1n << 63n) - 1n;

// Cleanup actions queued during a call, run when its frame ends.
const DECREF = 0;
const FREE = 1;
const END_BORROW = 2; // the pair's second item is a view to call [RELEASE] on

/**
 * @param {WebAssembly.Instance} instance an initialised webffi.wasm
 * @param {object} meta its ABI metadata (already checked)
 * @param {{ logger?: Console }} options
 */
export function createRuntime(instance, meta, options = {}) {
  const x = instance.exports;
  const T = meta.type_index;
  const off = meta.offsetof;
  const size = meta.sizeof;
  const ANY = size.TVMFFIAny;
  const OBJ = size.TVMFFIObject;
  const BA = size.TVMFFIByteArray;
  // The Any's type index and small length are read as words 0 and 1 of the
  // Any, its payload from word 2 on: js/loader.js refuses any other layout.
  const PAYLOAD = off['TVMFFIAny.v_int64'];
  const BA_DATA = off['TVMFFIByteArray.data'];
  const BA_SIZE = off['TVMFFIByteArray.size'];
  const OBJ_TI = off['TVMFFIObject.type_index'];
  const ERR = {
    kind: off['TVMFFIErrorCell.kind'],
    message: off['TVMFFIErrorCell.message'],
    backtrace: off['TVMFFIErrorCell.backtrace'],
    extra: off['TVMFFIErrorCell.extra_context'],
  };
  const OPAQUE_HANDLE = off['TVMFFIOpaqueObjectCell.handle'];
  const DT = { code: off['DLDataType.code'], bits: off['DLDataType.bits'], lanes: off['DLDataType.lanes'] };
  const DEV = { type: off['DLDevice.device_type'], id: off['DLDevice.device_id'] };
  const T_NONE = T.None;
  const T_INT = T.int;
  const T_BOOL = T.bool;
  const T_FLOAT = T.float;
  const T_PTR = T['void*'];
  const T_DLTENSOR_PTR = T['DLTensor*'];
  const T_DTYPE = T.DataType;
  const T_DEVICE = T.Device;
  const T_RAW_STR = T['const char*'];
  const T_BYTE_ARRAY = T['TVMFFIByteArray*'];
  const T_SMALL_STR = T['ffi.SmallStr'];
  const T_SMALL_BYTES = T['ffi.SmallBytes'];
  const T_OBJECT = T['ffi.StaticObjectBegin'];
  const T_STR = T['ffi.String'];
  const T_BYTES = T['ffi.Bytes'];
  const T_ERROR = T['ffi.Error'];
  const T_FUNCTION = T['ffi.Function'];
  const T_OPAQUE = T['ffi.OpaquePyObject'];
  const SMALL_MAX = ANY - PAYLOAD - 1; // inline bytes, NUL included
  const typeKeys = new Map(Object.entries(T).filter(([k]) => !k.endsWith('ObjectBegin')).map(([k, v]) => [v, k]));
  const deviceNames = new Map(Object.entries(meta.device_type).map(([k, v]) => [v, k]));
  const logger = options.logger ?? console;

  // ------------------------------------------------------------ memory
  const heap = new Heap(x.memory);
  let U8 = heap.u8;
  let I32 = heap.i32;
  let U32 = heap.u32;
  let F64 = heap.f64;
  const fresh = () => {
    if (U8.length === 0) {
      heap.refresh();
      U8 = heap.u8;
      I32 = heap.i32;
      U32 = heap.u32;
      F64 = heap.f64;
    }
  };

  const scratch = x.WebFFIHeapAlloc(SCRATCH_BYTES);
  if (!scratch) throw new MemoryError('webffi: cannot allocate the call scratch area');
  fresh();
  const scratchEnd = scratch + SCRATCH_BYTES;
  let sp = scratch;
  const cleanups = []; // (action, pointer or view) pairs

  /** 16-aligned bytes in the current frame; the heap when scratch runs out. */
  function alloc(nbytes) {
    const p = sp;
    const next = (p + nbytes + 15) & -16;
    if (next <= scratchEnd) {
      sp = next;
      return p;
    }
    const q = x.WebFFIHeapAlloc(nbytes);
    fresh();
    if (!q) throw makeError('MemoryError', `Failed to allocate ${nbytes} bytes`);
    cleanups.push(FREE, q);
    return q;
  }

  /** Runs body in its own scratch frame, released however it ends (cold paths). */
  function inFrame(body) {
    const frame = sp;
    const mark = cleanups.length;
    try {
      return body();
    } finally {
      sp = frame;
      runCleanups(mark);
    }
  }

  function runCleanups(mark) {
    while (cleanups.length > mark) {
      const p = cleanups.pop();
      const action = cleanups.pop();
      if (action === DECREF) decref(p);
      else if (action === FREE) x.WebFFIHeapFree(p);
      else p[RELEASE]();
    }
  }

  // ------------------------------------------------- poisoning (traps)
  let poisoned = null;

  function fatal() {
    return new FatalError(
      `webffi: the wasm instance was poisoned by an earlier trap (${poisoned.message}); ` +
        'load a new runtime', { cause: poisoned });
  }

  /** Called when a wasm call threw: a trap, or a host error it cannot survive. */
  function poison(e) {
    if (e instanceof FatalError) throw e;
    if (poisoned) throw fatal();
    poisoned = e;
    throw new FatalError(
      `webffi: wasm trap (${e?.message ?? e}); the instance is poisoned and refuses every later call`,
      { cause: e });
  }

  function decref(p) {
    if (poisoned) return;
    try {
      x.TVMFFIObjectDecRef(p);
    } catch (e) {
      poison(e);
    }
  }

  // --------------------------------------------- JS values held by C
  const jsValues = [undefined]; // handle 0 is never used
  const jsOpaque = [0]; // handle -> the opaque object that holds it (0: none)
  const freeHandles = [];
  let liveHandles = 0;

  function addHandle(value) {
    const h = freeHandles.length ? freeHandles.pop() : jsValues.length;
    jsValues[h] = value;
    jsOpaque[h] = 0;
    liveHandles++;
    return h;
  }

  function releaseHandle(h) {
    jsValues[h] = undefined;
    jsOpaque[h] = 0;
    freeHandles.push(h);
    liveHandles--;
  }

  // ------------------------------------------------ wrapper lifetimes
  const finalizer = new FinalizationRegistry((p) => {
    try {
      decref(p);
    } catch {
      // the instance is poisoned: nothing more is released
    }
  });
  const scopes = [];
  const objectClasses = new Map(); // type index -> wrapper class
  for (const [key, cls] of Object.entries(containerClasses)) objectClasses.set(T[key], cls);
  objectClasses.set(T['ffi.Module'], ModuleObject);

  const runtimeHooks = {
    track(wrapper, p) {
      finalizer.register(wrapper, p, wrapper);
      if (scopes.length) scopes[scopes.length - 1].push(wrapper);
    },
    release(wrapper, p) {
      finalizer.unregister(wrapper);
      decref(p);
    },
    ptrOf(wrapper) {
      const p = wrapper[PTR];
      if (!p) {
        throw new ValueError(`Cannot use a disposed \`${runtimeHooks.typeKeyOf(wrapper)}\``);
      }
      return p;
    },
    typeKeyOf(wrapper) {
      return typeof wrapper === 'function' ? 'ffi.Function' : typeKey(wrapper.typeIndex);
    },
    /** A global function kept for the runtime's lifetime (container operations). */
    global(name) {
      let f = cachedGlobals.get(name);
      if (f === undefined) {
        const p = lookupGlobal(name);
        if (!p) throw makeError('ValueError', `Cannot find global function ${name}`);
        f = makeCallable(p, false);
        cachedGlobals.set(name, f);
      }
      return f;
    },
    /** A Shape's dimensions. */
    shapeDims(wrapper) {
      const cell = runtimeHooks.ptrOf(wrapper) + OBJ;
      const data = U32[(cell + off['TVMFFIShapeCell.data']) >> 2];
      const n = U32[(cell + off['TVMFFIShapeCell.size']) >> 2];
      const dims = new Array(n);
      for (let i = 0; i < n; i++) dims[i] = readInt64(data + 8 * i);
      return dims;
    },
  };
  const cachedGlobals = new Map();

  // Hooks for the by-value codec (js/clone.js), which must tell an FFI float
  // 1.0 from an int 1 and rebuild reflected objects through their creator.
  let floatsAsValues = false;
  /** [elements address, count] of an Array or List. */
  const seqCell = (wrapper) => {
    const cell = runtimeHooks.ptrOf(wrapper) + OBJ;
    return [U32[(cell + off['TVMFFISeqCell.data']) >> 2], readInt64(cell + off['TVMFFISeqCell.size'])];
  };
  // The codec's readers push onto the array they are given: a packed array,
  // which structured clone copies far faster than a holey one.
  /** The Any at p as JS, for the codec: int32s without a call (the common case), objects as new handles. */
  const readItem = (p) => {
    const w = p >> 2;
    return I32[w] === T_INT && I32[w + 3] === I32[w + 2] >> 31 ? I32[w + 2] : readAny(p, false);
  };
  const MAP = {
    entries: off['wf_map_cell.entries'],
    used: off['wf_map_cell.used'],
    entrySize: size.wf_map_entry,
    erased: off['wf_map_entry.erased'],
    key: off['wf_map_entry.key'],
    value: off['wf_map_entry.value'],
  };
  /** The table index of a type's creator, or 0. */
  const creatorOf = (index) => {
    const meta = U32[(x.TVMFFIGetTypeInfo(index) + TINFO('metadata')) >> 2];
    return meta ? U32[(meta + off['TVMFFITypeMetadata.creator']) >> 2] : 0;
  };
  Object.assign(runtimeHooks, {
    /** Whether FFI floats are read as FloatValue (so 1.0 stays a float); returns the previous setting. */
    setFloatsAsValues(on) {
      const before = floatsAsValues;
      floatsAsValues = on;
      return before;
    },
    /** Pushes the elements of an Array or List onto out, read straight from its cell (objects as new handles). */
    seqItems(wrapper, out) {
      const [data, n] = seqCell(wrapper);
      for (let i = 0; i < n; i++) out.push(readItem(data + ANY * i));
      return out;
    },
    /** An Array's or List's elements as an Int32Array when every one is an int32-range int, else null. */
    seqInt32(wrapper) {
      const [data, n] = seqCell(wrapper);
      const out = new Int32Array(n);
      const words = I32;
      for (let i = 0, w = data >> 2; i < n; i++, w += ANY >> 2) {
        const lo = words[w + 2];
        if (words[w] !== T_INT || words[w + 3] !== lo >> 31) return null;
        out[i] = lo;
      }
      return out;
    },
    /** Pushes a Map's or Dict's keys and values onto out, flat and in insertion order, read straight from its cell. */
    mapItems(wrapper, out) {
      const cell = runtimeHooks.ptrOf(wrapper) + OBJ;
      const entries = U32[(cell + MAP.entries) >> 2];
      const used = readInt64(cell + MAP.used);
      for (let e = entries, end = entries + MAP.entrySize * used; e < end; e += MAP.entrySize) {
        if (readInt64(e + MAP.erased) === 0) {
          out.push(readItem(e + MAP.key), readItem(e + MAP.value));
        }
      }
      return out;
    },
    /** Type key, field names and whether a creator exists, for a type index. */
    reflection(index) {
      const info = typeInfo(index);
      if (!info) return null;
      return { key: info.key, fields: info.fields.map((f) => f.name), hasCreator: creatorOf(index) !== 0 };
    },
    /** A new object of type key made by its creator (fields at their defaults). */
    create(key) {
      return inFrame(() => {
        const index = alloc(ANY);
        check(x.TVMFFITypeKeyToIndex(byteArray(String(key)), index));
        const creator = creatorOf(I32[index >> 2]);
        if (!creator) throw makeError('TypeError', `Type \`${key}\` has no creator`);
        const out = alloc(ANY);
        try {
          check(x.__indirect_function_table.get(creator)(out));
        } catch (e) {
          if (e instanceof FFIError) throw e;
          poison(e);
        }
        const obj = U32[out >> 2];
        const ti = objectTypeIndex(obj);
        return new (objectClasses.get(ti) ?? wrapperClass(ti))(runtimeHooks, obj, ti);
      });
    },
  });

  function typeKey(index) {
    return typeKeys.get(index) ?? typeInfo(index)?.key ?? `<type ${index}>`;
  }

  /** An int64 at p: a number when safe, a BigInt otherwise (never truncated). */
  function readInt64(p) {
    const lo = I32[p >> 2];
    const hi = I32[(p >> 2) + 1];
    if (hi === lo >> 31) return lo; // int32, the common case: no float math
    if (hi >= -0x200000 && hi < 0x200000) {
      const v = hi * TWO_32 + (lo >>> 0);
      if (v !== -9007199254740992) return v;
    }
    return heap.dv.getBigInt64(p, true);
  }

  // ------------------------------------------------------ reflection
  const typeInfos = new Map();
  const TINFO = (f) => off[`TVMFFITypeInfo.${f}`];
  const FINFO = (f) => off[`TVMFFIFieldInfo.${f}`];
  const MINFO = (f) => off[`TVMFFIMethodInfo.${f}`];

  /** Key, ancestors, fields and methods of a registered type (null if unknown). */
  function typeInfo(index) {
    if (typeInfos.has(index)) return typeInfos.get(index);
    const p = x.TVMFFIGetTypeInfo(index);
    fresh();
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
        fields.push({ name: byteArrayText(f + FINFO('name')), flags: heap.dv.getInt32(f + FINFO('flags'), true) });
      }
      const methods = [];
      const methodBase = U32[(p + TINFO('methods')) >> 2];
      for (let i = 0; i < I32[(p + TINFO('num_methods')) >> 2]; i++) {
        const m = methodBase + i * size.TVMFFIMethodInfo;
        methods.push({
          name: byteArrayText(m + MINFO('name')),
          flags: heap.dv.getInt32(m + MINFO('flags'), true),
          fn: U32[(m + MINFO('method') + PAYLOAD) >> 2],
        });
      }
      info = { key: byteArrayText(p + TINFO('type_key')), parents, fields, methods };
    }
    typeInfos.set(index, info);
    return info;
  }

  /** A wrapper class for a reflected type: fields as properties, methods as functions. */
  function reflectedClass(index) {
    const info = typeInfo(index);
    const Base = info?.parents.length ? wrapperClass(info.parents[info.parents.length - 1]) : FFIObject;
    if (!info) return Base;
    const cls = { [info.key]: class extends Base {} }[info.key];
    for (const { name, flags } of info.fields) {
      const key = info.key;
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
      x.TVMFFIObjectIncRef(fn);
      const f = makeCallable(fn, false);
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
      const made = runtimeHooks.global(maker)(key, name);
      x.TVMFFIObjectIncRef(made[PTR]);
      f = makeCallable(made[PTR], false);
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

  function objectTypeIndex(p) {
    return I32[(p + OBJ_TI) >> 2];
  }

  // ---------------------------------------------------- JS -> FFI
  /** Writes a JS value as a borrowed Any view at p; owned temporaries are queued for release. */
  function writeArg(p, v) {
    const w = p >> 2;
    switch (typeof v) {
      case 'number':
        if ((v | 0) === v && (v !== 0 || 1 / v > 0)) {
          I32[w] = T_INT;
          I32[w + 1] = 0;
          I32[w + 2] = v;
          I32[w + 3] = v >> 31;
        } else if (Number.isInteger(v) && v >= -INT64_LIMIT && v < INT64_LIMIT && !Object.is(v, -0)) {
          writeInt(w, v);
        } else {
          I32[w] = T_FLOAT;
          I32[w + 1] = 0;
          F64[(p + PAYLOAD) >> 3] = v;
        }
        return;
      case 'boolean':
        I32[w] = T_BOOL;
        I32[w + 1] = 0;
        I32[w + 2] = v ? 1 : 0;
        I32[w + 3] = 0;
        return;
      case 'string':
        writeString(p, v);
        return;
      case 'undefined':
        writeNone(w);
        return;
      case 'bigint':
        writeBigInt(p, v);
        return;
      case 'function':
        if (v[PTR] !== undefined) writeObject(w, runtimeHooks.ptrOf(v), T_FUNCTION);
        else writeObject(w, queueDecref(jsFunctionToFFI(v)), T_FUNCTION);
        return;
      default:
        writeObjectValue(p, w, v);
    }
  }

  /** writeArg with the int32 case inline (small enough for the JIT to inline). */
  function writeArgFast(p, v) {
    if (isInt32(v)) {
      const i32 = I32; // one load of the view for the four stores
      const w = p >> 2;
      i32[w] = T_INT;
      i32[w + 1] = 0;
      i32[w + 2] = v;
      i32[w + 3] = v >> 31;
    } else {
      writeArg(p, v);
    }
  }

  function isInt32(v) {
    return typeof v === 'number' && (v | 0) === v && (v !== 0 || 1 / v > 0);
  }

  function writeNone(w) {
    I32[w] = T_NONE;
    I32[w + 1] = 0;
    I32[w + 2] = 0;
    I32[w + 3] = 0;
  }

  function writeInt(w, v) {
    I32[w] = T_INT;
    I32[w + 1] = 0;
    if (v >= -0x80000000 && v <= 0x7fffffff) {
      I32[w + 2] = v;
      I32[w + 3] = v < 0 ? -1 : 0;
    } else {
      const hi = Math.floor(v / TWO_32);
      U32[w + 2] = v - hi * TWO_32;
      I32[w + 3] = hi;
    }
  }

  function writeBigInt(p, v) {
    if (v < MIN_INT64 || v > MAX_INT64) {
      throw new OverflowError(`${v} does not fit in an int64`);
    }
    I32[p >> 2] = T_INT;
    I32[(p >> 2) + 1] = 0;
    heap.dv.setBigInt64(p + PAYLOAD, v, true);
  }

  function writeObject(w, objPtr, typeIndex) {
    I32[w] = typeIndex;
    I32[w + 1] = 0;
    U32[w + 2] = objPtr;
    I32[w + 3] = 0;
  }

  function queueDecref(p) {
    cleanups.push(DECREF, p);
    return p;
  }

  function writeString(p, s) {
    const w = p >> 2;
    const n = s.length;
    if (n < SMALL_MAX) {
      // Encode inline; falls through to the heap form when it needs > 7 bytes.
      const tmp = alloc(3 * n + 1);
      const len = heap.writeUtf8(s, tmp);
      if (len < SMALL_MAX) {
        I32[w] = T_SMALL_STR;
        I32[w + 1] = len;
        I32[w + 2] = 0;
        I32[w + 3] = 0;
        U8.copyWithin(p + PAYLOAD, tmp, tmp + len);
        return;
      }
      writeLongString(w, s, tmp, len);
      return;
    }
    const tmp = alloc(3 * n + 1);
    fresh();
    writeLongString(w, s, tmp, heap.writeUtf8(s, tmp));
  }

  /** A NUL-free string goes as `const char*`; one with NUL bytes as a String. */
  function writeLongString(w, s, data, len) {
    U8[data + len] = 0;
    if (s.indexOf('\0') < 0) {
      I32[w] = T_RAW_STR;
      I32[w + 1] = 0;
      U32[w + 2] = data;
      I32[w + 3] = 0;
      return;
    }
    const out = alloc(ANY);
    check(x.TVMFFIStringFromByteArray(byteArrayOf(data, len), out));
    const ti = I32[out >> 2];
    if (ti >= T_OBJECT) queueDecref(U32[(out + PAYLOAD) >> 2]);
    U8.copyWithin(w << 2, out, out + ANY);
  }

  function writeBytes(w, bytes) {
    const data = alloc(bytes.length + 1);
    U8.set(bytes, data);
    const ba = byteArrayOf(data, bytes.length);
    I32[w] = T_BYTE_ARRAY;
    I32[w + 1] = 0;
    U32[w + 2] = ba;
    I32[w + 3] = 0;
  }

  function writeObjectValue(p, w, v) {
    if (v === null) return writeNone(w);
    if (v instanceof FFIObject) return writeObject(w, runtimeHooks.ptrOf(v), v.typeIndex);
    if (v instanceof IntValue) {
      if (typeof v.value === 'bigint') return writeBigInt(p, v.value);
      if (!(v.value >= -INT64_LIMIT && v.value < INT64_LIMIT)) {
        throw new OverflowError(`${v.value} does not fit in an int64`);
      }
      return writeInt(w, v.value);
    }
    if (v instanceof FloatValue) {
      I32[w] = T_FLOAT;
      I32[w + 1] = 0;
      F64[(p + PAYLOAD) >> 3] = v.value;
      return;
    }
    if (v instanceof Device) {
      writeNone(w);
      I32[w] = T_DEVICE;
      I32[(p + PAYLOAD + DEV.type) >> 2] = v.deviceType;
      I32[(p + PAYLOAD + DEV.id) >> 2] = v.deviceId;
      return;
    }
    if (v instanceof DataType) {
      writeNone(w);
      I32[w] = T_DTYPE;
      const q = p + PAYLOAD;
      U8[q + DT.code] = v.code;
      U8[q + DT.bits] = v.bits;
      heap.dv.setUint16(q + DT.lanes, v.lanes, true);
      return;
    }
    if (v instanceof Uint8Array) return writeBytes(w, v);
    if (v instanceof ArrayBuffer) return writeBytes(w, new Uint8Array(v));
    if (Array.isArray(v)) return writeContainer(w, 'ffi.Array', v, v.length);
    if (v instanceof Map) return writeContainer(w, 'ffi.Map', v, 2 * v.size);
    if (v[AS_POD]) return writeObject(w, ...v[AS_POD]()); // a tensor as DLTensor*, a handed-off object
    if (isPlainObject(v)) return writeContainer(w, 'ffi.Map', Object.entries(v), 2 * Object.keys(v).length);
    if (v instanceof FFIError) return writeError(w, v);
    throw new FFITypeError(`Cannot convert a JS ${describe(v)} to an FFI value`);
  }

  function isPlainObject(v) {
    const proto = Object.getPrototypeOf(v);
    return proto === Object.prototype || proto === null;
  }

  /** An FFI error passed as a value becomes an ffi.Error holding the JS object. */
  function writeError(w, e) {
    const errPtr = makeRaisableError(e, e.backtrace ?? '');
    writeObject(w, queueDecref(errPtr), T_ERROR);
  }

  /** Converts a JS array (or Map entries) through the container constructors. */
  function writeContainer(w, ctorName, items, count) {
    const ctor = containerConstructor(ctorName);
    const argv = alloc(ANY * Math.max(count, 1));
    if (Array.isArray(items) && ctorName === 'ffi.Array') {
      for (let i = 0; i < count; i++) writeArgFast(argv + ANY * i, items[i]);
    } else {
      let p = argv;
      for (const [key, value] of items) {
        writeArg(p, key);
        writeArg(p + ANY, value);
        p += 2 * ANY;
      }
    }
    const result = alloc(ANY);
    writeNone(result >> 2);
    check(webffiInvoke(ctor, argv, count, result));
    writeObject(w, queueDecref(U32[(result + PAYLOAD) >> 2]), I32[result >> 2]);
  }

  const containerCtors = new Map();
  function containerConstructor(name) {
    let f = containerCtors.get(name);
    if (f === undefined) {
      f = lookupGlobal(name);
      if (!f) throw new FFITypeError(`Converting to \`${name}\` needs the global function \`${name}\`, which this runtime does not register`);
      containerCtors.set(name, f);
    }
    return f;
  }

  // ---------------------------------------------------- FFI -> JS
  /** Reads the Any at p; `owned` says whether its reference passes to JS. */
  function readAny(p, owned) {
    const w = p >> 2;
    const ti = I32[w];
    switch (ti) {
      case T_INT:
        return readInt64(p + PAYLOAD);
      case T_FLOAT:
        return floatsAsValues ? new FloatValue(F64[(p + PAYLOAD) >> 3]) : F64[(p + PAYLOAD) >> 3];
      case T_NONE:
        return null;
      case T_BOOL:
        return (I32[w + 2] | I32[w + 3]) !== 0;
      case T_SMALL_STR:
        return heap.readUtf8(p + PAYLOAD, I32[w + 1]);
      case T_SMALL_BYTES:
        return heap.copyBytes(p + PAYLOAD, I32[w + 1]);
      case T_RAW_STR:
        return heap.readCString(U32[w + 2]);
      case T_BYTE_ARRAY: {
        const ba = U32[w + 2];
        return heap.copyBytes(U32[(ba + BA_DATA) >> 2], U32[(ba + BA_SIZE) >> 2]);
      }
      case T_DTYPE:
        return dataTypeAt(p + PAYLOAD);
      case T_DEVICE:
        return deviceOf(I32[(p + PAYLOAD + DEV.type) >> 2], I32[(p + PAYLOAD + DEV.id) >> 2]);
      case T_PTR:
        return U32[w + 2];
      case T_DLTENSOR_PTR:
        return readDLTensor(U32[w + 2]);
      default:
        if (ti < T_OBJECT) throw new FFITypeError(`Cannot convert an FFI \`${typeKey(ti)}\` to JS`);
        return readObject(U32[w + 2], ti, owned);
    }
  }

  /** A `DLTensor*` as a TensorView (js/tensor.js installs the reader). */
  let dlTensorReader = null;
  function readDLTensor(dl) {
    if (!dl) return null;
    if (!dlTensorReader) throw new FFITypeError('Cannot convert an FFI `DLTensor*` to JS: this runtime has no tensor support');
    return dlTensorReader(dl);
  }

  /** A callback argument: as readAny, but a `DLTensor*` view ends its borrow when the callback returns. */
  function readArg(p) {
    if (I32[p >> 2] !== T_DLTENSOR_PTR) return readAny(p, false);
    const view = readDLTensor(U32[(p >> 2) + 2]);
    if (view) cleanups.push(END_BORROW, view);
    return view;
  }

  function readObject(obj, ti, owned) {
    if (ti === T_STR || ti === T_BYTES) {
      const cell = obj + OBJ;
      const data = U32[(cell + BA_DATA) >> 2];
      const len = U32[(cell + BA_SIZE) >> 2];
      const v = ti === T_STR ? heap.readUtf8(data, len) : heap.copyBytes(data, len);
      if (owned) decref(obj);
      return v;
    }
    if (ti === T_OPAQUE) {
      const h = U32[(obj + OBJ + OPAQUE_HANDLE) >> 2];
      if (jsOpaque[h] === obj) {
        const v = jsValues[h];
        if (owned) decref(obj);
        return v;
      }
    }
    if (ti === T_ERROR) {
      const e = errorFromObject(obj);
      if (owned) decref(obj);
      return e;
    }
    if (!owned) x.TVMFFIObjectIncRef(obj);
    if (ti === T_FUNCTION) return makeCallable(obj);
    const cls = objectClasses.get(ti) ?? wrapperClass(ti);
    return new cls(runtimeHooks, obj, ti);
  }

  const dataTypes = new Map();
  function dataTypeAt(q) {
    const code = U8[q + DT.code];
    const bits = U8[q + DT.bits];
    const lanes = heap.dv.getUint16(q + DT.lanes, true);
    const key = code | (bits << 8) | (lanes << 16);
    let d = dataTypes.get(key);
    if (d === undefined) {
      d = inFrame(() => {
        const dt = alloc(size.DLDataType);
        U8[dt + DT.code] = code;
        U8[dt + DT.bits] = bits;
        heap.dv.setUint16(dt + DT.lanes, lanes, true);
        const out = alloc(ANY);
        check(x.TVMFFIDataTypeToString(dt, out));
        return new DataType(code, bits, lanes, readAny(out, true));
      });
      dataTypes.set(key, d);
    }
    return d;
  }

  function deviceOf(type, id) {
    return new Device(type, id, deviceNames.get(type) ?? `device(${type})`);
  }

  function makeCallable(obj, track = true) {
    // Up to four arguments go as named parameters: no arguments object per call.
    const f = function webffiFunction(a0, a1, a2, a3) {
      const n = arguments.length;
      return n <= 4 ? webffiCallFixed(f, n, a0, a1, a2, a3) : webffiCall(f, n, arguments);
    };
    Object.setPrototypeOf(f, functionPrototype);
    f[RUNTIME] = runtimeHooks;
    f[PTR] = obj;
    if (track) runtimeHooks.track(f, obj);
    return f;
  }

  // ----------------------------------------------------------- errors
  /**
   * The raised error as a JS value (the original JS object when it came from
   * JS). An error made in C thrown by a call of `callee` gets a stack that
   * starts where the user called it.
   */
  function takeRaised(callee) {
    const out = alloc(ANY);
    // Errors raised from C strings come with their stack captured but not
    // formatted: formatting waits until someone reads it (makeDeferredError).
    const capture = takeCapture(x.WebFFIErrorMoveFromRaisedPending(out));
    fresh();
    const err = U32[out >> 2];
    if (!err) return makeError('RuntimeError', 'a call failed without raising an error');
    const e = errorFromObject(err, callee, capture);
    decref(err);
    return e;
  }

  function byteArrayText(p) {
    return heap.readUtf8(U32[(p + BA_DATA) >> 2], U32[(p + BA_SIZE) >> 2]);
  }

  function errorFromObject(err, callee, capture = null) {
    const cell = err + OBJ;
    const extra = U32[(cell + ERR.extra) >> 2];
    if (extra && objectTypeIndex(extra) === T_OPAQUE) {
      const h = U32[(extra + OBJ + OPAQUE_HANDLE) >> 2];
      if (jsOpaque[h] === extra) {
        const original = jsValues[h];
        if (original !== null && (typeof original === 'object' || typeof original === 'function')) {
          try {
            Object.defineProperty(original, 'backtrace', {
              value: byteArrayText(cell + ERR.backtrace), writable: true, configurable: true, enumerable: false,
            });
          } catch {
            // a frozen object keeps its identity, without the backtrace
          }
        }
        return original;
      }
    }
    const kind = byteArrayText(cell + ERR.kind);
    const message = byteArrayText(cell + ERR.message);
    if (callee === undefined && capture === null) return makeError(kind, message, byteArrayText(cell + ERR.backtrace));
    // Capturing from the callee leaves the glue's frames out of the stack and
    // costs less: V8 spends most of an error's time on its stack, per frame.
    // A deferred capture already holds the stack: no second one at all.
    const limit = Error.stackTraceLimit;
    let e;
    try {
      Error.stackTraceLimit = undefined; // not a number: no capture at all
      e = capture !== null
        ? makeDeferredError(kind, message, capture, limit)
        : makeError(kind, message, byteArrayText(cell + ERR.backtrace));
    } finally {
      Error.stackTraceLimit = limit;
    }
    if (capture === null) Error.captureStackTrace?.(e, callee);
    return e;
  }

  /** Writes text as a TVMFFIByteArray in the current frame; returns its address. */
  function byteArray(s) {
    const data = alloc(3 * s.length + 1);
    const len = heap.writeUtf8(s, data);
    U8[data + len] = 0;
    return byteArrayOf(data, len);
  }

  /** A TVMFFIByteArray over [data, data + len) in the current frame; returns its address. */
  function byteArrayOf(data, len) {
    const ba = alloc(BA);
    U32[(ba + BA_DATA) >> 2] = data;
    U32[(ba + BA_SIZE) >> 2] = len;
    return ba;
  }

  /**
   * An ffi.Error (new reference) for a JS value, holding the value itself in
   * extra_context so it comes back out as the same object.
   */
  function makeRaisableError(value, backtrace) {
    const kind = byteArray(kindOf(value));
    const message = byteArray(messageOf(value));
    const bt = byteArray(backtrace);
    const out = alloc(ANY);
    const h = addHandle(value);
    let opaque = 0;
    if (x.WebFFIOpaqueFromJS(h, out) === 0) {
      opaque = U32[out >> 2];
      jsOpaque[h] = opaque;
    } else {
      releaseHandle(h);
      x.TVMFFIErrorMoveFromRaised(out); // drop the MemoryError: raise the original kind
      if (U32[out >> 2]) x.TVMFFIObjectDecRef(U32[out >> 2]);
    }
    fresh();
    const rc = x.TVMFFIErrorCreateWithCauseAndExtraContext(kind, message, bt, 0, opaque, out);
    fresh();
    if (opaque) x.TVMFFIObjectDecRef(opaque);
    if (rc !== 0) return 0;
    return U32[out >> 2];
  }

  /**
   * Errors whose backtrace already runs down to the outermost C frame (made
   * in JS while C was on the stack): later crossings add nothing. Errors made
   * in C hold the C frames of their own call only; each crossing of an outer
   * C call adds that call's frames.
   */
  const completeBacktraces = new WeakSet();

  /** Raises a JS exception into C, for a callback that threw. */
  function raiseFromJS(value) {
    const isObject = value !== null && (typeof value === 'object' || typeof value === 'function');
    let backtrace;
    if (isObject && typeof value.backtrace === 'string' && value.backtrace !== '') {
      backtrace = value.backtrace;
      if (!completeBacktraces.has(value)) backtrace += crossedWasmFrames();
    } else {
      const { text, complete } = jsStackToBacktrace(value?.stack);
      backtrace = complete ? text : text + crossedWasmFrames();
      if (isObject && complete) completeBacktraces.add(value);
    }
    const err = makeRaisableError(value, backtrace);
    if (err) {
      x.TVMFFIErrorSetRaised(err);
      x.TVMFFIObjectDecRef(err);
    } else {
      // Even the error could not be allocated: the core raises its MemoryError.
      x.TVMFFIErrorSetRaisedFromCStr(0, 0);
    }
  }

  function check(rc) {
    fresh();
    if (rc !== 0) throw takeRaised();
  }

  // ----------------------------------------------------------- calls
  // Exports on the hot paths, held in constants: a property load from the
  // exports object (hundreds of entries, a dictionary) costs more than the
  // call itself and keeps V8 from inlining the call.
  const functionCall = x.TVMFFIFunctionCall;
  const callWords = x.WebFFIFunctionCallWords;

  /** Calls Function fn with argv already written; returns the status code. */
  function webffiInvoke(fn, argv, n, result) {
    try {
      return functionCall(fn, argv, n, result);
    } catch (e) {
      return poison(e);
    }
  }

  /**
   * The general call: arguments of any kind written as borrowed Anys, the
   * temporaries they need released when it ends. Up to four come one by
   * one (no array made); more come as `args`.
   */
  function webffiCall(f, n, args, a0, a1, a2, a3) {
    if (poisoned) throw fatal();
    const fn = f[PTR];
    if (!fn) runtimeHooks.ptrOf(f);
    const frame = sp;
    const mark = cleanups.length;
    try {
      const argv = alloc(ANY * (n + 1));
      const result = argv + ANY * n;
      if (args) {
        for (let i = 0; i < n; i++) writeArgFast(argv + ANY * i, args[i]);
      } else {
        if (n > 0) writeArgFast(argv, a0);
        if (n > 1) writeArgFast(argv + ANY, a1);
        if (n > 2) writeArgFast(argv + 2 * ANY, a2);
        if (n > 3) writeArgFast(argv + 3 * ANY, a3);
      }
      writeNone(result >> 2);
      const rc = webffiInvoke(fn, argv, n, result);
      fresh();
      if (rc !== 0) throw takeRaised(f);
      return readAny(result, true);
    } finally {
      sp = frame;
      if (cleanups.length !== mark) runCleanups(mark);
    }
  }

  // Argument kinds of WebFFIFunctionCallWords (webffi.h), two bits each.
  const WORD_INT = 0;
  const WORD_NONE = 1;
  const WORD_BOOL = 2;
  const WORD_OBJECT = 3;

  /**
   * The kind of v when it travels as one 32-bit word (int32, null/undefined,
   * bool, a live handle); -1 when it needs the general path.
   */
  function wordKind(v) {
    switch (typeof v) {
      case 'number':
        return isInt32(v) ? WORD_INT : -1;
      case 'undefined':
        return WORD_NONE;
      case 'boolean':
        return WORD_BOOL;
      case 'function':
        return v[PTR] ? WORD_OBJECT : -1; // a plain JS function needs wrapping
      case 'object':
        if (v === null) return WORD_NONE;
        return v instanceof FFIObject && v[PTR] ? WORD_OBJECT : -1;
      default:
        return -1;
    }
  }

  /** The word of a value wordKind accepted. */
  function wordOf(v, kind) {
    if (kind === WORD_INT) return v;
    if (kind === WORD_BOOL) return v ? 1 : 0;
    return kind === WORD_NONE ? 0 : v[PTR];
  }

  /**
   * The entry of every call with up to four arguments. Arguments of one word
   * each (ints, bools, None, handles: the common case) go to C as wasm
   * parameters: C writes the Anys, which costs less than writing them from
   * JS, and nothing can throw or need releasing before the call, so no frame
   * bookkeeping is needed either.
   */
  function webffiCallFixed(f, n, a0, a1, a2, a3) {
    const fn = f[PTR];
    const result = sp;
    const k0 = n < 1 || isInt32(a0) ? WORD_INT : wordKind(a0);
    const k1 = n < 2 || isInt32(a1) ? WORD_INT : wordKind(a1);
    const k2 = n < 3 || isInt32(a2) ? WORD_INT : wordKind(a2);
    const k3 = n < 4 || isInt32(a3) ? WORD_INT : wordKind(a3);
    if (!fn || poisoned || result + ANY > scratchEnd || (k0 | k1 | k2 | k3) < 0) {
      return webffiCall(f, n, null, a0, a1, a2, a3);
    }
    // Missing arguments go as 0: cheaper to pass than undefined.
    const w0 = n < 1 ? 0 : k0 === WORD_INT ? a0 : wordOf(a0, k0);
    const w1 = n < 2 ? 0 : k1 === WORD_INT ? a1 : wordOf(a1, k1);
    const w2 = n < 3 ? 0 : k2 === WORD_INT ? a2 : wordOf(a2, k2);
    const w3 = n < 4 ? 0 : k3 === WORD_INT ? a3 : wordOf(a3, k3);
    sp = result + ANY; // callbacks run during the call allocate above the result
    let rc;
    try {
      rc = callWords(fn, n, k0 | (k1 << 2) | (k2 << 4) | (k3 << 6), w0, w1, w2, w3, result);
    } catch (e) {
      poison(e);
    }
    sp = result;
    fresh(); // a call returning None may have grown memory too
    if (rc === 0) return null;
    if (rc < 0) throw takeRaised(f);
    const r = result >> 2;
    if (I32[r] === T_INT && I32[r + 3] === I32[r + 2] >> 31) return I32[r + 2];
    return readAny(result, true);
  }

  /** A Function (new reference) that calls a JS function. */
  function jsFunctionToFFI(fn) {
    const out = alloc(ANY);
    const h = addHandle(fn);
    const rc = x.WebFFIFunctionFromJS(h, out);
    fresh();
    if (rc !== 0) {
      releaseHandle(h);
      throw takeRaised();
    }
    return U32[out >> 2];
  }

  /** The `webffi.call_js` import: C calls the JS function behind handle h. */
  function webffiCallJS(h, argsPtr, n, resultPtr) {
    fresh();
    const fn = jsValues[h];
    const frame = sp;
    const mark = cleanups.length;
    // Errors made in the callback keep enough frames to reach the C below.
    const limit = Error.stackTraceLimit;
    if (limit < 64) Error.stackTraceLimit = 64;
    try {
      let r;
      switch (n) {
        case 0:
          r = fn();
          break;
        case 1:
          r = fn(readArg(argsPtr));
          break;
        case 2:
          r = fn(readArg(argsPtr), readArg(argsPtr + ANY));
          break;
        default: {
          const args = new Array(n);
          for (let i = 0; i < n; i++) args[i] = readArg(argsPtr + ANY * i);
          r = fn(...args);
        }
      }
      Error.stackTraceLimit = limit;
      writeOwned(resultPtr, r);
    } catch (e) {
      Error.stackTraceLimit = limit;
      if (poisoned) throw e; // a nested call trapped: unwind the wasm frames too
      sp = frame;
      runCleanups(mark);
      raiseFromJS(e);
      sp = frame;
      runCleanups(mark);
      return -1;
    }
    // Each path releases the frame itself: no try/finally around the call.
    sp = frame;
    if (cleanups.length !== mark) runCleanups(mark);
    return 0;
  }

  /** Writes v as an owned Any (the result slot of a callback). */
  function writeOwned(p, v) {
    const t = typeof v;
    if (t === 'number' || t === 'boolean' || t === 'undefined' || t === 'bigint' || v === null) {
      writeArgFast(p, v);
      return;
    }
    const view = alloc(ANY);
    writeArg(view, v);
    check(x.TVMFFIAnyViewToOwnedAny(view, p));
  }

  // ------------------------------------------------- global registry
  function lookupGlobal(name) {
    return inFrame(() => {
      const ba = byteArray(name);
      const out = alloc(ANY);
      check(x.TVMFFIFunctionGetGlobal(ba, out));
      return U32[out >> 2];
    });
  }

  function getGlobal(name, { optional = false } = {}) {
    if (poisoned) throw fatal();
    const p = lookupGlobal(String(name));
    if (!p) {
      if (optional) return null;
      throw makeError('ValueError', `Cannot find global function ${name}`);
    }
    return makeCallable(p);
  }

  function registerGlobal(name, fn, { override = false } = {}) {
    if (poisoned) throw fatal();
    if (typeof fn !== 'function') throw new FFITypeError('registerGlobal expects a function');
    return inFrame(() => {
      const ba = byteArray(String(name));
      const f = fn[PTR] !== undefined ? runtimeHooks.ptrOf(fn) : queueDecref(jsFunctionToFFI(fn));
      check(x.TVMFFIFunctionSetGlobal(ba, f, override ? 1 : 0));
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

  function removeGlobal(name) {
    return withGlobal('ffi.FunctionRemoveGlobal', (f) => f(String(name)));
  }

  function withGlobal(name, body) {
    const f = getGlobal(name);
    try {
      return body(f);
    } finally {
      f.dispose();
    }
  }

  // ---------------------------------------------------- public surface
  function parseDevice(spec, id) {
    if (typeof spec === 'number') return deviceOf(spec, id ?? 0);
    const m = /^([a-z_]+)(?::(\d+))?$/.exec(String(spec));
    const type = m ? meta.device_type[m[1]] : undefined;
    if (type === undefined) throw makeError('ValueError', `Unknown device: ${spec}`);
    return deviceOf(type, m[2] !== undefined ? Number(m[2]) : id ?? 0);
  }

  function parseDataType(text) {
    if (text instanceof DataType) return text;
    return inFrame(() => {
      const ba = byteArray(String(text));
      const out = alloc(size.DLDataType);
      check(x.TVMFFIDataTypeFromString(ba, out));
      return dataTypeAt(out);
    });
  }

  const runtime = {
    [RUNTIME]: runtimeHooks,
    /** The ABI metadata of the loaded core. */
    metadata: meta,
    /** The wasm instance's exports (for tools and benchmarks). */
    exports: x,
    getGlobal,
    registerGlobal,
    listGlobals,
    removeGlobal,
    device: parseDevice,
    dtype: parseDataType,
    /**
     * Runs fn; every handle created meanwhile (except the value returned) is
     * disposed when it ends, however it ends.
     */
    scope(fn) {
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
    },
    /** Converts a JS value to an FFI handle (e.g. a JS function to a Function). */
    toFFI(value) {
      if (poisoned) throw fatal();
      if (isHandle(value)) return value;
      const frame = sp;
      const mark = cleanups.length;
      try {
        const view = alloc(ANY);
        writeArg(view, value);
        const made = cleanups.length === mark + 2 && cleanups[mark] === DECREF;
        if (made && cleanups[mark + 1] === U32[(view + PAYLOAD) >> 2]) {
          // An object made for this conversion alone (a container, a
          // Function): its reference passes to the wrapper, not released.
          cleanups.length = mark;
          return readAny(view, true);
        }
        const out = alloc(ANY);
        check(x.TVMFFIAnyViewToOwnedAny(view, out));
        return readAny(out, true);
      } finally {
        sp = frame;
        if (cleanups.length !== mark) runCleanups(mark);
      }
    },
    /**
     * The JS class of a registered type: reflected fields as properties,
     * methods on the prototype, static methods (e.g. `__ffi_init__`) on the class.
     */
    objectClass(key) {
      if (poisoned) throw fatal();
      return inFrame(() => {
        const out = alloc(ANY);
        if (x.TVMFFITypeKeyToIndex(byteArray(String(key)), out) !== 0) {
          fresh();
          x.TVMFFIErrorMoveFromRaised(out);
          if (U32[out >> 2]) decref(U32[out >> 2]);
          throw makeError('KeyError', `Unknown type key ${key}`);
        }
        fresh();
        return wrapperClass(I32[out >> 2]);
      });
    },
    /** Makes objects of `typeKey` JS instances of cls (a subclass of FFIObject). */
    registerObjectClass(typeKeyOrIndex, cls) {
      const index = typeof typeKeyOrIndex === 'number' ? typeKeyOrIndex : T[typeKeyOrIndex];
      if (index === undefined) throw makeError('KeyError', `Unknown type key ${typeKeyOrIndex}`);
      objectClasses.set(index, cls);
    },
    /**
     * Loads a C module built with `webffi build --module`: a URL (a path in
     * Node), wasm bytes or a WebAssembly.Module. A module already loaded
     * under the same name is returned instead of being instantiated again.
     */
    async loadModule(source) {
      if (poisoned) throw fatal();
      let ptr;
      try {
        ptr = await moduleLoader(x).load(source);
      } catch (e) {
        throw e instanceof ModuleLoadError ? makeError(e.kind, e.message) : e;
      } finally {
        fresh();
      }
      return readObject(ptr, T['ffi.Module'], true);
    },
    /** Removes a module from the loaded table (it lives on while referenced). */
    unloadModule(name) {
      return withGlobal('webffi.ModuleUnload', (f) => f(name));
    },
    /** How many JS values C holds references to (callbacks, thrown values). */
    get liveJSValues() {
      return liveHandles;
    },
    /** The trap that poisoned this instance, or null. */
    get poisoned() {
      return poisoned;
    },
    logger,
  };
  // For js/tensor.js and the backend registry: frames, errors, wrappers.
  Object.defineProperty(runtime, INTERNALS, {
    value: {
      hooks: runtimeHooks, inFrame, alloc, check,
      poisonCheck: () => { if (poisoned) throw fatal(); },
      /**
       * For a callback's result: moves the wrapper's reference into the
       * current frame (released when the callback returns, after C took its
       * own) and returns a value that writes the object.
       */
      handOff(wrapper) {
        const p = runtimeHooks.ptrOf(wrapper);
        finalizer.unregister(wrapper);
        wrapper[PTR] = 0;
        queueDecref(p);
        return { [AS_POD]: () => [p, wrapper.typeIndex] };
      },
      /** How a `DLTensor*` reaches JS (js/tensor.js: a TensorView). */
      setDLTensorReader(read) {
        dlTensorReader = read;
      },
    },
  });

  return { runtime, imports: { callJS: webffiCallJS, releaseJS: releaseHandle } };
}

export { FFIObject };
