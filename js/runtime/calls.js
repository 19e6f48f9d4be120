// The hot paths, kept in one file so V8 inlines across them. Everything
// here closes over plain locals; the heap views are refreshed by fresh().
// The sections of install(), in order:
//   memory and frames    alloc() in the scratch area, cleanups, check()
//   JS -> Any            writeArg and each kind of value (strings, containers, PODs)
//   Any -> JS            readAny, objects, dtypes, devices
//   calls (JS -> C)      webffiCallFixed: up to four one-word arguments (ints,
//                        bools, None, handles, ASCII strings) as wasm parameters;
//                        webffiCall: the general path; makeCallable
//   callbacks (C -> JS)  webffiCallJS, the `webffi.call_js` import
//   toFFI                a JS value as a handle
// What the by-value codec reads in bulk is in bulk_read.js.
import { Device, DataType, IntValue, FloatValue } from '../values.js';
import { FFIObject, PTR, RUNTIME, CELL, UNTRACKED, AS_POD, RELEASE, functionPrototype, runtimeOf, stampRuntime, isHandle } from '../objects.js';
import { FFIError, MemoryError, OverflowError, FFITypeError, ValueError } from '../errors.js';
import { Nesting, MAX_ALLOC, describe, oversized, typedArrayParts, arrayBufferLength } from './checks.js';

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

// Argument kinds of WebFFIFunctionCallWords (webffi.h), four bits each.
const WORD_INT = 0;
const WORD_NONE = 1;
const WORD_BOOL = 2;
const WORD_OBJECT = 3;
const WORD_RAW_STR = 4; // the only kind with this bit: an OR of kinds tells whether a string is among them
/** Strings up to this long are tried as plain ASCII by a loop; longer ones go to TextEncoder (faster from about 48-64 characters on). */
const ASCII_LOOP_MAX = 48;

export function install(state) {
  const { x, w: guarded, L, heap, trap, hooks, objectClasses, jsValues, jsOpaque, addHandle, releaseHandle, decref, poison, core } = state;
  const {
    ANY, OBJ, PAYLOAD, BA, BA_DATA, BA_SIZE, OBJ_TI, OPAQUE_HANDLE, DT, DEV, SMALL_MAX, size,
    T_NONE, T_INT, T_BOOL, T_FLOAT, T_PTR, T_DLTENSOR_PTR, T_DTYPE, T_DEVICE, T_RAW_STR, T_BYTE_ARRAY,
    T_SMALL_STR, T_SMALL_BYTES, T_OBJECT, T_STR, T_BYTES, T_ERROR, T_FUNCTION, T_OPAQUE,
  } = L;

  // ------------------------------------------------- memory and frames
  let U8 = heap.u8;
  let I32 = heap.i32;
  let U32 = heap.u32;
  let F64 = heap.f64;
  const renew = () => {
    heap.refresh();
    U8 = heap.u8;
    I32 = heap.i32;
    U32 = heap.u32;
    F64 = heap.f64;
  };
  // Growth detaches a plain memory's buffer (its views read as empty); a
  // shared memory's buffer never detaches, so the threaded core counts its
  // growths in a word of memory (on any thread) that is compared instead.
  const growth = core.growthCounter == null ? -1 : core.growthCounter >> 2;
  let grown = growth < 0 ? 0 : I32[growth];
  const fresh = () => {
    if (U8.length === 0) renew();
    else if (growth >= 0 && I32[growth] !== grown) {
      grown = I32[growth];
      renew();
    }
  };

  const heapAlloc = state.guard(core.heapAlloc);
  const heapFree = state.guard(core.heapFree);
  const functionFromJS = state.guard(core.functionFromJS);
  const opaqueHandle = core.opaqueHandle ?? ((obj) => U32[(obj + OBJ + OPAQUE_HANDLE) >> 2]);
  const scratch = core.heapAlloc(SCRATCH_BYTES);
  if (!scratch) throw new MemoryError('webffi: cannot allocate the call scratch area');
  fresh();
  const scratchEnd = scratch + SCRATCH_BYTES;
  let sp = scratch;
  const cleanups = []; // (action, pointer or view) pairs

  /**
   * 16-aligned bytes in the current frame; the heap when scratch runs out.
   * The size is checked before any arithmetic on it: only a small one is
   * added to the frame pointer, and a heap request must fit wasm32's sizes.
   */
  function alloc(nbytes) {
    const p = sp;
    if (nbytes <= SCRATCH_BYTES) {
      const next = (p + nbytes + 15) & -16;
      if (next <= scratchEnd) {
        sp = next;
        return p;
      }
    }
    return allocHeap(nbytes);
  }

  function allocHeap(nbytes) {
    if (!(nbytes >= 0 && nbytes <= MAX_ALLOC)) throw oversized(nbytes);
    const q = heapAlloc(nbytes);
    fresh();
    if (!q) throw oversized(nbytes);
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
      else if (action === FREE) heapFree(p);
      else p[RELEASE]();
    }
  }

  function queueDecref(p) {
    cleanups.push(DECREF, p);
    return p;
  }

  function check(rc) {
    fresh();
    if (rc !== 0) throw state.takeRaised();
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

  function objectTypeIndex(p) {
    return I32[(p + OBJ_TI) >> 2];
  }

  // ---------------------------------------------------- JS -> Any
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
        if (v[PTR] !== undefined) writeObject(w, hooks.ptrOf(v), T_FUNCTION);
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
    if (n <= ASCII_LOOP_MAX && asciiInto(s, tmp)) {
      writeObject(w, tmp, T_RAW_STR); // what writeLongString makes of it, without a second pass
      return;
    }
    writeLongString(w, s, tmp, heap.writeUtf8(s, tmp));
  }

  /**
   * Writes s at p as a NUL-terminated C string when it is plain ASCII
   * without NUL (the common case: names, keys, messages); false, and
   * nothing promised about [p, p + n], otherwise. One pass, no encoder.
   */
  function asciiInto(s, p) {
    const n = s.length;
    const u8 = U8;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if ((c - 1) >>> 0 >= 0x7f) return false; // NUL, or not ASCII
      u8[p + i] = c;
    }
    u8[p + n] = 0;
    return true;
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
    check(guarded.TVMFFIStringFromByteArray(byteArrayOf(data, len), out));
    const ti = I32[out >> 2];
    if (ti >= T_OBJECT) queueDecref(U32[(out + PAYLOAD) >> 2]);
    U8.copyWithin(w << 2, out, out + ANY);
  }

  /** Bytes of [buffer, buffer + n) from offset, as a TVMFFIByteArray* (lengths read by the engine, not the object). */
  function writeBytes(w, buffer, offset, n) {
    const data = alloc(n + 1);
    U8.set(new Uint8Array(buffer, offset, n), data);
    const ba = byteArrayOf(data, n);
    I32[w] = T_BYTE_ARRAY;
    I32[w + 1] = 0;
    U32[w + 2] = ba;
    I32[w + 3] = 0;
  }

  function writeObjectValue(p, w, v) {
    if (v === null) return writeNone(w);
    // Arrays first: the most common container, and no class check can claim
    // one (an array whose prototype was swapped is still converted as one).
    if (Array.isArray(v)) return writeArray(w, v);
    if (v instanceof FFIObject) return writeObject(w, hooks.ptrOf(v), v.typeIndex);
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
    if (v instanceof Uint8Array) {
      const { buffer, byteOffset, byteLength } = typedArrayParts(v, 'Bytes argument');
      return writeBytes(w, buffer, byteOffset, byteLength);
    }
    if (v instanceof ArrayBuffer) return writeBytes(w, v, 0, arrayBufferLength(v, 'Bytes argument'));
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return writeTypedArray(w, v);
    if (v instanceof Map) return writeMap(w, v);
    if (v[AS_POD]) return writePod(w, v); // a tensor as DLTensor*, a handed-off object
    if (isPlainObject(v)) return writeRecord(w, v);
    if (v instanceof Error || v instanceof FFIError) return writeError(w, v); // any error, as upstream converts any exception
    throw new FFITypeError(`Cannot convert a JS ${describe(v)} to an FFI value`);
  }

  /**
   * Any other typed array is a 1-D CPU tensor holding a copy of it (Uint8Array
   * is Bytes), owned by the call (js/tensor.js installs the converter).
   */
  function writeTypedArray(w, v) {
    if (!typedArrayConverter) {
      throw new FFITypeError(`Cannot convert a JS ${describe(v)} to an FFI value: this runtime has no tensor support`);
    }
    return writePod(w, typedArrayConverter(v));
  }

  /** A value that writes itself as [pointer, type index]; only this runtime's own. */
  function writePod(w, v) {
    const owner = runtimeOf(v);
    if (owner !== hooks) {
      throw new FFITypeError(owner === undefined
        ? `Cannot pass a ${describe(v)} as a pointer: this runtime did not make it`
        : `Cannot pass a ${describe(v)} here: it belongs to another webffi runtime instance`);
    }
    const [ptr, typeIndex] = v[AS_POD]();
    writeObject(w, ptr, typeIndex);
  }

  function isPlainObject(v) {
    const proto = Object.getPrototypeOf(v);
    return proto === Object.prototype || proto === null;
  }

  /** An error passed as a value becomes an ffi.Error holding the JS object. */
  function writeError(w, e) {
    const errPtr = state.errorValue(e);
    writeObject(w, queueDecref(errPtr), T_ERROR);
  }

  // Containers. Each input is read once, before anything is written: the
  // length of an array, the entries of a Map or object, so a getter that
  // adds entries while its value is converted cannot make the writes run
  // past the argument block. Nesting is bounded and cycles are refused.
  const nesting = new Nesting();
  const mapForEach = Map.prototype.forEach;

  /** A JS array as an ffi.Array: its length read once (a Proxy's `length` trap runs once). */
  function writeArray(w, items) {
    const n = items.length;
    if (!Number.isSafeInteger(n) || n < 0) throw new ValueError('Cannot convert an array whose length is not a valid length');
    if (n > MAX_ALLOC / ANY) throw oversized(ANY * n);
    nesting.enter(items);
    try {
      const argv = alloc(ANY * Math.max(n, 1));
      for (let i = 0; i < n; i++) writeArgFast(argv + ANY * i, items[i]);
      construct(w, arrayCtor || containerConstructor('ffi.Array'), argv, n);
    } finally {
      nesting.leave();
    }
  }

  /** A JS Map as an ffi.Map, from a snapshot of its entries (Map.prototype.forEach: no user iterator). */
  function writeMap(w, map) {
    const flat = [];
    mapForEach.call(map, (value, key) => flat.push(key, value));
    writePairs(w, map, flat);
  }

  /** A plain object as an ffi.Map of its own enumerable string keys (each getter runs once). */
  function writeRecord(w, record) {
    const entries = Object.entries(record);
    const flat = new Array(2 * entries.length);
    for (let i = 0; i < entries.length; i++) {
      flat[2 * i] = entries[i][0];
      flat[2 * i + 1] = entries[i][1];
    }
    writePairs(w, record, flat);
  }

  function writePairs(w, source, flat) {
    const n = flat.length;
    if (n > MAX_ALLOC / ANY) throw oversized(ANY * n);
    nesting.enter(source);
    try {
      const argv = alloc(ANY * Math.max(n, 1));
      for (let i = 0; i < n; i++) writeArg(argv + ANY * i, flat[i]);
      construct(w, mapCtor || containerConstructor('ffi.Map'), argv, n);
    } finally {
      nesting.leave();
    }
  }

  /** Calls the container constructor ctor on the n Anys at argv; writes the new object at w. */
  function construct(w, ctor, argv, n) {
    const result = alloc(ANY);
    writeNone(result >> 2);
    check(webffiInvoke(ctor, argv, n, result));
    writeObject(w, queueDecref(U32[(result + PAYLOAD) >> 2]), I32[result >> 2]);
  }

  // The constructors, looked up on first use and kept (a lookup per
  // conversion would cost a registry search).
  let arrayCtor = 0;
  let mapCtor = 0;
  function containerConstructor(name) {
    const f = state.lookupGlobal(name);
    if (!f) throw new FFITypeError(`Converting to \`${name}\` needs the global function \`${name}\`, which this runtime does not register`);
    if (name === 'ffi.Array') arrayCtor = f;
    else mapCtor = f;
    return f;
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
    check(guarded.TVMFFIAnyViewToOwnedAny(view, p));
  }

  // ---------------------------------------------------- Any -> JS
  let floatsAsValues = false;

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
        if (ti < T_OBJECT) throw new FFITypeError(`Cannot convert an FFI \`${state.typeKey(ti)}\` to JS`);
        return readObject(U32[w + 2], ti, owned);
    }
  }

  /** A `DLTensor*` as a TensorView (js/tensor.js installs the reader). */
  let dlTensorReader = null;
  let typedArrayConverter = null;
  function readDLTensor(dl, borrowed = false) {
    if (!dl) return null;
    if (!dlTensorReader) throw new FFITypeError('Cannot convert an FFI `DLTensor*` to JS: this runtime has no tensor support');
    return dlTensorReader(dl, borrowed);
  }

  /** A callback argument: as readAny, but a `DLTensor*` view ends its borrow when the callback returns. */
  function readArg(p) {
    if (I32[p >> 2] !== T_DLTENSOR_PTR) return readAny(p, false);
    const view = readDLTensor(U32[(p >> 2) + 2], true);
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
      const h = opaqueHandle(obj);
      if (jsOpaque[h] === obj) {
        const v = jsValues[h];
        if (owned) decref(obj);
        return v;
      }
    }
    if (ti === T_ERROR) {
      const e = state.errorFromObject(obj);
      if (owned) decref(obj);
      return e;
    }
    if (!owned) incRef(obj);
    if (ti === T_FUNCTION) return makeCallable(obj);
    const cls = objectClasses.get(ti) ?? state.wrapperClass(ti);
    return new cls(hooks, obj, ti);
  }

  const incRefExport = x.TVMFFIObjectIncRef;
  function incRef(obj) {
    try {
      incRefExport(obj);
    } catch (e) {
      trap.unwound = true;
      poison(e);
    }
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
        check(state.w.TVMFFIDataTypeToString(dt, out));
        // the opaque {handle, 0, 0} prints as "" in C (as upstream); named, so it shows
        return new DataType(code, bits, lanes, readAny(out, true) || 'void');
      });
      dataTypes.set(key, d);
    }
    return d;
  }

  function deviceOf(type, id) {
    return new Device(type, id, L.deviceNames.get(type) ?? `device(${type})`);
  }

  // ------------------------------------------------- calls (JS -> C)
  // Exports on the hot paths, held in constants: a property load from the
  // exports object (hundreds of entries, a dictionary) costs more than the
  // call itself and keeps V8 from inlining the call.
  const functionCall = core.functionCall;
  const callWords = core.callWords; // null: the core has no one-word fast path

  /** Calls Function fn with argv already written; returns the status code. */
  function webffiInvoke(fn, argv, n, result) {
    try {
      return functionCall(fn, argv, n, result);
    } catch (e) {
      trap.unwound = true; // before any call: the stack may be spent (poison.js)
      return poison(e);
    }
  }

  /**
   * The general call: arguments of any kind written as borrowed Anys, the
   * temporaries they need released when it ends. Up to four come one by
   * one (no array made); more come as `args`.
   */
  function webffiCall(f, n, args, a0, a1, a2, a3) {
    if (trap.poisoned) throw state.fatal();
    if (trap.unwound) state.unwindPending();
    const fn = f[PTR];
    if (!fn) hooks.ptrOf(f);
    const frame = sp;
    const mark = cleanups.length;
    let raised;
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
      if (rc === 0) return readAny(result, true);
      raised = raisedBy(f);
    } finally {
      sp = frame;
      if (cleanups.length !== mark) runCleanups(mark);
    }
    // Thrown after the frame is released, not through the finally: a
    // rethrow costs V8 about as much again as the throw.
    throw raised;
  }

  /**
   * The kind of v when it travels as one 32-bit word (int32, null/undefined,
   * bool, a live handle, a string long enough to go as `const char*`, as
   * the general path passes it); -1 when it needs the general path.
   */
  function wordKind(v) {
    switch (typeof v) {
      case 'number':
        return isInt32(v) ? WORD_INT : -1;
      case 'string':
        return v.length >= SMALL_MAX && v.length <= ASCII_LOOP_MAX ? WORD_RAW_STR : -1;
      case 'undefined':
        return WORD_NONE;
      case 'boolean':
        return WORD_BOOL;
      case 'function':
        // a plain JS function needs wrapping; another runtime's handle is refused on the general path
        return v[PTR] && runtimeOf(v) === hooks ? WORD_OBJECT : -1;
      case 'object':
        if (v === null) return WORD_NONE;
        return v instanceof FFIObject && v[PTR] && runtimeOf(v) === hooks ? WORD_OBJECT : -1;
      default:
        return -1;
    }
  }

  /** The word of a value wordKind accepted other than a string. */
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
   * bookkeeping is needed either. Calls with a string among them take
   * webffiCallStrings, out of this function's way.
   */
  function webffiCallFixed(f, n, a0, a1, a2, a3) {
    const fn = f[PTR];
    const result = sp;
    const k0 = n < 1 || isInt32(a0) ? WORD_INT : wordKind(a0);
    const k1 = n < 2 || isInt32(a1) ? WORD_INT : wordKind(a1);
    const k2 = n < 3 || isInt32(a2) ? WORD_INT : wordKind(a2);
    const k3 = n < 4 || isInt32(a3) ? WORD_INT : wordKind(a3);
    const kinds = k0 | k1 | k2 | k3;
    if (!fn || trap.poisoned || trap.unwound || result + ANY > scratchEnd || kinds < 0) {
      return webffiCall(f, n, null, a0, a1, a2, a3);
    }
    if ((kinds & WORD_RAW_STR) !== 0) return webffiCallStrings(f, n, k0, k1, k2, k3, a0, a1, a2, a3);
    // Missing arguments go as 0: cheaper to pass than undefined.
    const w0 = n < 1 ? 0 : k0 === WORD_INT ? a0 : wordOf(a0, k0);
    const w1 = n < 2 ? 0 : k1 === WORD_INT ? a1 : wordOf(a1, k1);
    const w2 = n < 3 ? 0 : k2 === WORD_INT ? a2 : wordOf(a2, k2);
    const w3 = n < 4 ? 0 : k3 === WORD_INT ? a3 : wordOf(a3, k3);
    return webffiCallWithWords(f, fn, n, k0 | (k1 << 4) | (k2 << 8) | (k3 << 12), w0, w1, w2, w3, result);
  }

  /**
   * webffiCallFixed with plain ASCII strings among the arguments: each one is
   * written above the result slot as a `const char*` (what the general path
   * makes of it); a string that is not plain ASCII sends the call down the
   * general path after all.
   */
  function webffiCallStrings(f, n, k0, k1, k2, k3, a0, a1, a2, a3) {
    const result = sp;
    sp = result + ANY;
    const w0 = n < 1 ? 0 : k0 === WORD_RAW_STR ? stringWord(a0) : wordOf(a0, k0);
    const w1 = n < 2 ? 0 : k1 === WORD_RAW_STR ? stringWord(a1) : wordOf(a1, k1);
    const w2 = n < 3 ? 0 : k2 === WORD_RAW_STR ? stringWord(a2) : wordOf(a2, k2);
    const w3 = n < 4 ? 0 : k3 === WORD_RAW_STR ? stringWord(a3) : wordOf(a3, k3);
    if (notWritten(k0, w0) || notWritten(k1, w1) || notWritten(k2, w2) || notWritten(k3, w3)) {
      sp = result;
      return webffiCall(f, n, null, a0, a1, a2, a3);
    }
    return webffiCallWithWords(f, f[PTR], n, k0 | (k1 << 4) | (k2 << 8) | (k3 << 12), w0, w1, w2, w3, result);
  }

  /**
   * A string as a `const char*` at sp (sp moves past it), or 0 when it is
   * not plain ASCII without NUL or has no room (never an address: the
   * scratch area is not at 0).
   */
  function stringWord(s) {
    const p = sp;
    const next = (p + s.length + 16) & -16;
    fresh();
    if (next > scratchEnd || !asciiInto(s, p)) return 0;
    sp = next;
    return p;
  }

  /** Whether a string argument's word is stringWord's 0 (the string takes the general path). */
  function notWritten(kind, word) {
    return kind === WORD_RAW_STR && word === 0;
  }

  /**
   * (Named webffi*: a glue frame, left out of backtraces, js/backtrace.js.)
   * Calls fn through WebFFIFunctionCallWords with the result slot at
   * `result`; callbacks run during the call allocate above it, and above
   * any strings written for the call (sp already past them); its result as JS.
   */
  function webffiCallWithWords(f, fn, n, kinds, w0, w1, w2, w3, result) {
    let rc;
    const top = sp;
    sp = top > result + ANY ? top : result + ANY;
    try {
      rc = callWords(fn, n, kinds, w0, w1, w2, w3, result);
    } catch (e) {
      trap.unwound = true;
      sp = result;
      poison(e);
    }
    sp = result;
    fresh(); // a call returning None may have grown memory too
    if (rc === 0) return null;
    if (rc < 0) throw raisedBy(f);
    const r = result >> 2;
    if (I32[r] === T_INT && I32[r + 3] === I32[r + 2] >> 31) return I32[r + 2];
    return readAny(result, true);
  }

  /**
   * The error a call of f raised, its JS stack (when it needs one) captured
   * here rather than inside takeRaised: V8 summarises every frame a capture
   * walks, skipped or not, so two fewer frames to walk.
   */
  function raisedBy(f) {
    const e = state.takeRaised(f, false);
    if (state.raisedNeedsStack) {
      state.raisedNeedsStack = false;
      Error.captureStackTrace?.(e, f);
    }
    return e;
  }

  function makeCallable(obj, track = true) {
    // Up to four arguments go as named parameters: no arguments object per
    // call. A core without the one-word fast path (js/core/) takes them all
    // through the general path; the choice is made here, not per call.
    const f = callWords
      ? function webffiFunction(a0, a1, a2, a3) {
        const n = arguments.length;
        return n <= 4 ? webffiCallFixed(f, n, a0, a1, a2, a3) : webffiCall(f, n, arguments);
      }
      : function webffiFunction(a0, a1, a2, a3) {
        const n = arguments.length;
        return n <= 4 ? webffiCall(f, n, null, a0, a1, a2, a3) : webffiCall(f, n, arguments);
      };
    Object.setPrototypeOf(f, functionPrototype);
    stampRuntime(f, hooks);
    f[RUNTIME] = hooks;
    f[PTR] = obj;
    f[CELL] = track ? null : UNTRACKED;
    if (track) hooks.track(f);
    return f;
  }

  /** A Function (new reference) that calls a JS function. */
  function jsFunctionToFFI(fn) {
    const out = alloc(ANY);
    const h = addHandle(fn);
    const rc = functionFromJS(h, out);
    fresh();
    if (rc !== 0) {
      releaseHandle(h);
      throw state.takeRaised();
    }
    return U32[out >> 2];
  }

  // -------------------------------------------- callbacks (C -> JS)
  /** A callback argument, int32s read inline (the common case: no call). */
  function readArgFast(p) {
    const w = p >> 2;
    const i32 = I32;
    if (i32[w] === T_INT && i32[w + 3] === i32[w + 2] >> 31) return i32[w + 2];
    return readArg(p);
  }

  // How many callbacks run now, nested (poison.js unwinds to the mark C made
  // for the innermost, src/wasm/js_function.c).
  let callbackDepth = 0;
  state.callbackDepth = () => callbackDepth;

  /**
   * The `webffi.call_js` import: C calls the JS function behind handle h.
   * The depth it runs at is restored on every way out, the rare exception
   * that escapes included.
   */
  function webffiCallJS(h, argsPtr, n, resultPtr) {
    fresh();
    const depth = callbackDepth;
    callbackDepth = depth + 1;
    const fn = jsValues[h];
    const frame = sp;
    const mark = cleanups.length;
    // Errors made in the callback keep enough frames to reach the C below
    // (the limit is written only when it is lower: two stores per callback
    // otherwise).
    const limit = Error.stackTraceLimit;
    const raiseLimit = limit < 64;
    if (raiseLimit) Error.stackTraceLimit = 64;
    try {
      let r;
      switch (n) {
        case 0:
          r = fn();
          break;
        case 1:
          r = fn(readArgFast(argsPtr));
          break;
        case 2:
          r = fn(readArgFast(argsPtr), readArgFast(argsPtr + ANY));
          break;
        default: {
          const args = new Array(n);
          for (let i = 0; i < n; i++) args[i] = readArg(argsPtr + ANY * i);
          r = fn(...args);
        }
      }
      if (raiseLimit) Error.stackTraceLimit = limit;
      if (isInt32(r)) {
        fresh(); // the callback may have grown memory
        const w = resultPtr >> 2;
        const i32 = I32;
        i32[w] = T_INT;
        i32[w + 1] = 0;
        i32[w + 2] = r;
        i32[w + 3] = r >> 31;
      } else {
        writeOwned(resultPtr, r);
      }
    } catch (e) {
      if (raiseLimit) Error.stackTraceLimit = limit;
      if (trap.poisoned) {
        callbackDepth = depth;
        throw e; // a nested call trapped: unwind the wasm frames too
      }
      try {
        callJSFailed(e, frame, mark);
      } finally {
        callbackDepth = depth; // also when not even that call had stack left
      }
      return -1;
    }
    // Each path releases the frame itself: no try/finally around the call.
    sp = frame;
    if (cleanups.length !== mark) {
      try {
        runCleanups(mark);
      } finally {
        callbackDepth = depth;
      }
    }
    callbackDepth = depth;
    return 0;
  }

  /** The error a callback threw raised into C, its frame released. */
  function callJSFailed(e, frame, mark) {
    sp = frame;
    runCleanups(mark);
    // Raising reads the thrown value (its kind, message, stack), which may
    // throw again (a Proxy's traps): raiseFromJS falls back to a plain
    // message and never lets an exception unwind the wasm frames below
    // (short of having no stack left even for that).
    state.raiseFromJS(e);
    sp = frame;
    runCleanups(mark);
  }

  // ---------------------------------------------------------- toFFI
  /** Converts a JS value to an FFI handle (e.g. a JS function to a Function). */
  function toFFI(value) {
    if (trap.poisoned) throw state.fatal();
    if (isHandle(value)) {
      const owner = runtimeOf(value);
      if (owner !== hooks) throw state.foreign(value, owner);
      return value;
    }
    const frame = sp;
    const mark = cleanups.length;
    try {
      const view = alloc(ANY);
      writeArg(view, value);
      const made = cleanups.length === mark + 2 && cleanups[mark] === DECREF;
      if (made && cleanups[mark + 1] === U32[(view + PAYLOAD) >> 2]) {
        // An object made for this conversion alone (a container, a
        // Function): its reference passes to the wrapper, not released.
        cleanups.pop(); // two pops: cheaper than setting the length
        cleanups.pop();
        return readAny(view, true);
      }
      const out = alloc(ANY);
      check(guarded.TVMFFIAnyViewToOwnedAny(view, out));
      return readAny(out, true);
    } finally {
      sp = frame;
      if (cleanups.length !== mark) runCleanups(mark);
    }
  }

  Object.assign(state, {
    toFFI, fresh, alloc, inFrame, runCleanups, queueDecref, check, byteArray, byteArrayOf, readInt64,
    objectTypeIndex, writeArg, readAny, makeCallable, jsFunctionToFFI, dataTypeAt, deviceOf,
    callJS: webffiCallJS,
    setFloatsAsValues(on) {
      const before = floatsAsValues;
      floatsAsValues = on;
      return before;
    },
    setDLTensorReader(read) {
      dlTensorReader = read;
    },
    setTypedArrayConverter(convert) {
      typedArrayConverter = convert;
    },
  });
}
