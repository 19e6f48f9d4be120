// By-value encoding of webffi values and errors: turns them into data that
// structured clone (postMessage) carries intact, and back. Structured clone
// alone drops Error subclasses and own fields (kind, backtrace), so the
// library owns the encoding. The rule: an error is (kind, message,
// backtrace) plus its cause chain; values travel as data; live resources
// (Functions, Modules, opaque host objects, device memory) refuse with a
// TypeError in the DataCloneError convention. Decoding errors and plain data
// needs no wasm; FFI containers and reflected objects rebuild as handles
// when a runtime is given.
//
// Encoded form: primitives, typed arrays and ArrayBuffers as themselves;
// everything else as an array whose first element is a tag: `['a', ...items]`
// for a JS array, `['E', kind, message, backtrace, cause?]` for an error,
// `['A', ...items]` for an ffi.Array, and so on. Arrays are used because
// structured clone copies array elements faster than named properties (an
// error as a tuple clones faster than as { kind, message, backtrace }).
import { FFIObject, RUNTIME, BY_VALUE_AS, isHandle } from './objects.js';
import { Device, DataType, IntValue, FloatValue } from './values.js';
import { FFIError, FFITypeError, ValueError, makeError, kindOf, messageOf } from './errors.js';
import { jsStackToBacktrace } from './backtrace.js';

/** Why each live-resource type has no value form. */
const LIVE = {
  'ffi.Function': 'it wraps a callable whose implementation lives in this runtime instance',
  'ffi.Module': 'it wraps a loaded library that lives in this runtime instance',
  'ffi.OpaquePyObject': 'it wraps a host object that lives in this runtime instance',
  'ffi.Tensor': 'it holds memory that lives in this runtime instance and no tensor codec is registered (import webffi, which registers one)',
};

/** Deeper nesting than this is refused (a JS container that contains itself ends here). */
const MAX_DEPTH = 1000;
let depth = 0;
/** Lists and Dicts being encoded (by address): one that contains itself is refused. */
const open = new Set();

/** FFI containers: tag, how to read elements, how to rebuild. */
const CONTAINERS = {
  'ffi.Array': { tag: 'A', seq: true },
  'ffi.List': { tag: 'L', seq: true },
  'ffi.Map': { tag: 'M', seq: false },
  'ffi.Dict': { tag: 'D', seq: false },
  'ffi.Shape': { tag: 'S' },
};
/** Tag -> the type key, whose global function rebuilds the container. */
const CONSTRUCTORS = Object.fromEntries(Object.entries(CONTAINERS).map(([key, c]) => [c.tag, key]));

/** Value codecs registered by type key (e.g. CPU tensors). */
const codecs = new Map();

/**
 * Plugs in the by-value form of an FFI object type. `encode(handle, ctx)`
 * returns structured-clone-safe data (or calls `ctx.refuse(reason)`), may
 * push ArrayBuffers onto `ctx.transfer` when it is an array (the caller asked
 * to transfer), and encodes nested values with `ctx.encode(value)`.
 * `decode(data, ctx)` rebuilds the value; `ctx.runtime` is the receiving
 * runtime or null, `ctx.decode(data)` decodes nested data.
 */
export function registerValueCodec(typeKey, codec) {
  if (typeof typeKey !== 'string' || typeof codec?.encode !== 'function' || typeof codec?.decode !== 'function') {
    throw new FFITypeError('registerValueCodec(typeKey, { encode, decode }) expects a type key and two functions');
  }
  codecs.set(typeKey, codec);
}

// ------------------------------------------------------------- refusals
const refusals = new WeakMap(); // refusal error -> { type, reason, container }

function refuse(type, reason, container) {
  const where = container ? ` contained in \`${container}\`` : '';
  const e = new FFITypeError(`cannot clone \`${type}\` object${where}: ${reason}`);
  refusals.set(e, { type, reason, container });
  return e;
}

/** A refusal from inside a container names the innermost container too. */
function inContainer(e, container) {
  const r = refusals.get(e);
  return r && !r.container ? refuse(r.type, r.reason, container) : e;
}

function describe(v) {
  return v?.constructor?.name ?? 'Object';
}

function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// -------------------------------------------------------------- encode
/**
 * Encodes a webffi value or error as structured-clone-safe data.
 * @param {unknown} value
 * @param {{ transfer?: Transferable[] }} [options] pass an array to have the
 *   ArrayBuffers behind typed arrays and Bytes pushed onto it (for
 *   `postMessage(data, transfer)`); without one, data is copied.
 */
export function encodeValue(value, options) {
  const transfer = Array.isArray(options?.transfer) ? options.transfer : null;
  return encode(value, transfer);
}

function encode(v, transfer) {
  switch (typeof v) {
    case 'number':
    case 'string':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return v;
    case 'function':
      if (isHandle(v)) throw refuse('ffi.Function', LIVE['ffi.Function']);
      throw refuse('function', 'a JS function runs only in the thread that made it');
    case 'symbol':
      throw refuse('symbol', 'a symbol is unique to the thread that made it');
    default:
  }
  if (v === null) return null;
  if (v instanceof FFIObject) return encodeHandle(v, transfer);
  if (v instanceof FFIError) return encodeError(v, v.kind, transfer);
  if (v instanceof Error) return encodeError(v, kindOf(v), transfer);
  if (ArrayBuffer.isView(v)) {
    addTransfer(transfer, v.buffer);
    return v;
  }
  if (v instanceof ArrayBuffer) {
    addTransfer(transfer, v);
    return v;
  }
  if (Array.isArray(v)) {
    const out = ['a']; // packed (push), which structured clone copies fastest
    for (let i = 0; i < v.length; i++) out.push(encodeChild(v[i], 'Array', transfer, false));
    return out;
  }
  if (v instanceof Map) {
    const out = ['m'];
    for (const [k, x] of v) out.push(encodeChild(k, 'Map', transfer, false), encodeChild(x, 'Map', transfer, false));
    return out;
  }
  const asKey = v[BY_VALUE_AS];
  if (asKey !== undefined) return encodeWithCodec(asKey, v, transfer);
  if (v instanceof FloatValue) return ['f', v.value];
  if (v instanceof IntValue) return ['i', v.value];
  if (v instanceof Device) return ['dev', v.deviceType, v.deviceId, v.name];
  if (v instanceof DataType) return ['dt', v.code, v.bits, v.lanes, v.text];
  if (isPlainObject(v)) {
    const out = {};
    for (const k of Object.keys(v)) out[k] = encodeChild(v[k], 'Object', transfer, false);
    return ['o', out];
  }
  throw refuse(describe(v), 'it is not a value webffi converts (plain data, typed arrays, webffi values and errors are)');
}

function addTransfer(transfer, buffer) {
  if (transfer && buffer instanceof ArrayBuffer && !transfer.includes(buffer)) transfer.push(buffer);
}

/** Encodes an element of a container; elements read from FFI (owned) are released after. */
function encodeChild(v, container, transfer, owned) {
  try {
    if (++depth > MAX_DEPTH) {
      throw makeError('ValueError', `encodeValue: nesting deeper than ${MAX_DEPTH} levels (does a container contain itself?)`);
    }
    return encode(v, transfer);
  } catch (e) {
    throw inContainer(e, container);
  } finally {
    depth--;
    if (owned && isHandle(v)) v.dispose();
  }
}

function encodeHandle(h, transfer) {
  const key = h.typeKey;
  if (codecs.has(key)) return encodeWithCodec(key, h, transfer);
  if (LIVE[key]) throw refuse(key, LIVE[key]);
  const hooks = h[RUNTIME];
  // FFI floats are read as FloatValue so that 1.0 stays a float.
  const before = hooks.setFloatsAsValues(true);
  try {
    return encodeContents(h, key, hooks, transfer);
  } finally {
    hooks.setFloatsAsValues(before);
  }
}

/** A value in the form of the codec registered for `key`. */
function encodeWithCodec(key, v, transfer) {
  const codec = codecs.get(key);
  if (!codec) throw refuse(key, LIVE[key] ?? 'no value codec is registered for it in this thread');
  return ['X', key, codec.encode(v, codecContext(key, transfer))];
}

/** The data of a container or reflected object (FFI floats read as FloatValue). */
function encodeContents(h, key, hooks, transfer) {
  const c = CONTAINERS[key];
  if (c?.tag === 'S') return ['S', ...h.toJS()];
  if (c?.seq) {
    // All small ints (indices, sizes): one Int32Array, far cheaper to clone than a JS array.
    const ints = hooks.seqInt32(h);
    if (ints) {
      addTransfer(transfer, ints.buffer);
      return [`${c.tag}i`, ints];
    }
  }
  if (c) {
    const items = c.seq ? hooks.seqItems(h, [c.tag]) : hooks.mapItems(h, [c.tag]);
    const mutable = c.tag === 'L' || c.tag === 'D';
    const ptr = mutable ? h.handle : 0;
    if (mutable && open.has(ptr)) {
      for (const x of items) if (isHandle(x)) x.dispose();
      throw makeError('ValueError', `Cycle detected during serialization: a ${key.slice(4)} contains itself`);
    }
    if (mutable) open.add(ptr);
    try {
      for (let i = 1; i < items.length; i++) {
        const x = items[i];
        if (x !== null && (typeof x === 'object' || typeof x === 'function')) items[i] = encodeChild(x, key, transfer, true);
      }
    } finally {
      if (mutable) open.delete(ptr);
    }
    return items;
  }
  const info = hooks.reflection(h.typeIndex);
  if (!info?.hasCreator) throw refuse(key, 'its type has no creator, so it cannot be rebuilt from its fields');
  hooks.ptrOf(h); // a disposed handle says so
  const fields = {};
  for (const name of info.fields) fields[name] = encodeChild(h[name], key, transfer, true);
  return ['O', key, fields];
}

function codecContext(key, transfer) {
  return {
    transfer,
    encode: (v) => encodeChild(v, key, transfer, false),
    refuse: (reason) => {
      throw refuse(key, reason);
    },
  };
}

/** The ABI backtrace of any thrown value (a JS error's stack converted). */
function backtraceOf(e) {
  const text = e.backtrace; // read once: on an error raised in C it is a getter
  return typeof text === 'string' ? text : jsStackToBacktrace(e.stack).text;
}

/** An error as ['E', kind, message, backtrace, cause?] (kind is kindOf(e), which the caller knows). */
function encodeError(e, kind, transfer) {
  const out = ['E', kind, messageOf(e), backtraceOf(e)];
  if (e.cause !== undefined) out.push(encodeChild(e.cause, kind, transfer, false));
  return out;
}

// -------------------------------------------------------------- decode
/**
 * Rebuilds what encodeValue made. Errors come back as the registered class
 * for their kind (no runtime needed). With `runtime`, FFI containers and
 * reflected objects come back as handles of that runtime (the caller owns
 * them); without one, containers come back as plain JS (as `toJS()` gives).
 * @param {unknown} data
 * @param {{ runtime?: object }} [options]
 */
export function decodeValue(data, options) {
  const runtime = options?.runtime ?? null;
  return decode(data, runtime);
}

function decode(d, rt) {
  if (d === null || typeof d !== 'object' || !Array.isArray(d)) return d; // primitives, typed arrays, ArrayBuffers
  switch (d[0]) {
    case 'a':
      return decodeItems(d, rt);
    case 'E':
      return decodeError(d, rt);
    case 'o': {
      const out = {};
      for (const k of Object.keys(d[1])) out[k] = decode(d[1][k], rt);
      return out;
    }
    case 'm':
      return decodeMap(d, rt);
    case 'f':
      return rt ? new FloatValue(d[1]) : d[1];
    case 'i':
      return rt ? new IntValue(d[1]) : d[1];
    case 'dev':
      return new Device(d[1], d[2], d[3]);
    case 'dt':
      return new DataType(d[1], d[2], d[3], d[4]);
    case 'A':
      return rt ? build(decodeItems(d, rt), (items) => rt.toFFI(items)) : decodeItems(d, rt);
    case 'L':
    case 'S':
    case 'M':
    case 'D':
      if (rt) return build(decodeItems(d, rt), (items) => rt[RUNTIME].global(CONSTRUCTORS[d[0]])(...items));
      return d[0] === 'M' || d[0] === 'D' ? decodeMap(d, rt) : decodeItems(d, rt);
    case 'Ai':
      return rt ? rt.toFFI(numbers(d[1])) : numbers(d[1]);
    case 'Li':
      return rt ? rt[RUNTIME].global('ffi.List')(...numbers(d[1])) : numbers(d[1]);
    case 'O':
      return decodeObject(d[1], d[2], rt);
    case 'X': {
      const codec = codecs.get(d[1]);
      if (!codec) throw new ValueError(`decodeValue: no value codec is registered for \`${d[1]}\` in this thread`);
      return codec.decode(d[2], { runtime: rt, decode: (x) => decode(x, rt) });
    }
    default:
      throw new ValueError(`decodeValue: not data made by encodeValue (tag ${JSON.stringify(d[0])})`);
  }
}

/** The decoded items after a tag (d[1], d[2], ...) as a new array. */
function decodeItems(d, rt) {
  const out = d.slice(1);
  for (let i = 0; i < out.length; i++) {
    const x = out[i];
    if (x !== null && typeof x === 'object') out[i] = decode(x, rt);
  }
  return out;
}

/** A typed array's elements as a JS array. */
function numbers(typed) {
  const out = new Array(typed.length);
  for (let i = 0; i < typed.length; i++) out[i] = typed[i];
  return out;
}

/** Makes an FFI container from decoded items, then releases the items' own handles. */
function build(items, make) {
  try {
    return make(items);
  } finally {
    for (const x of items) if (isHandle(x)) x.dispose();
  }
}

/** A JS Map from the flat keys and values after a tag. */
function decodeMap(d, rt) {
  const m = new Map();
  for (let i = 1; i < d.length; i += 2) {
    const k = d[i];
    const v = d[i + 1];
    m.set(k !== null && typeof k === 'object' ? decode(k, rt) : k, v !== null && typeof v === 'object' ? decode(v, rt) : v);
  }
  return m;
}

function decodeObject(key, fields, rt) {
  if (!rt) throw new ValueError(`decodeValue: rebuilding a \`${key}\` object needs a webffi runtime ({ runtime })`);
  const obj = rt[RUNTIME].create(key);
  for (const name of Object.keys(fields)) {
    const value = decode(fields[name], rt);
    try {
      obj[name] = value;
    } catch (e) {
      if (e instanceof FFIError) throw e;
      throw makeError('AttributeError', `decodeValue: field \`${name}\` of \`${key}\` cannot be set (${e.message})`);
    } finally {
      if (isHandle(value)) value.dispose();
    }
  }
  return obj;
}

function decodeError(d, rt) {
  // The decoder's stack would be misleading (the error's frames are its
  // backtrace), and capturing none at all (a limit that is not a number) is
  // cheaper than capturing zero frames: the stack is set to its header instead.
  const limit = Error.stackTraceLimit;
  let e;
  try {
    Error.stackTraceLimit = undefined;
    e = makeError(d[1], d[2], d[3]);
  } finally {
    Error.stackTraceLimit = limit;
  }
  e.stack = d[2] === '' ? d[1] : `${d[1]}: ${d[2]}`;
  if (d.length > 4) {
    Object.defineProperty(e, 'cause', { value: decode(d[4], rt), writable: true, configurable: true });
  }
  return e;
}
