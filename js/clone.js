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
//
// Decoded data may come from a peer that is not trusted (a worker session):
// every node is checked against its tag's schema before anything is built,
// and the work is bounded (LIMITS). A node shared by several parents (a DAG)
// is encoded once and decoded once; structured clone keeps the sharing.
//
// Sessions add remote references (`['R', id, meta?]`, js/session.js): the
// server's `keep` hook turns what cannot travel by value into one, the
// client's `remote` hooks turn them into RemoteObjects and back. Without the
// hooks a reference is refused like any live resource.
import { FFIObject, RUNTIME, BY_VALUE_AS, isHandle } from './objects.js';
import { Device, DataType, IntValue, FloatValue } from './values.js';
import { FFIError, FFITypeError, ValueError, FatalError, makeError, kindOf, messageOf } from './errors.js';
import { jsStackToBacktrace } from './backtrace.js';
import { typedArrayParts, arrayBufferLength, isDetached } from './buffers.js';

/** Bounds on what one encodeValue / decodeValue handles (both sides agree). */
export const LIMITS = Object.freeze({
  /** Nesting of containers (and error causes), as in the C core. */
  depth: 256,
  /**
   * Elements in all containers of one value together (array items, map
   * entries, object fields). Typed arrays, and ints packed into one, are
   * memory that was really sent: not counted. (encodeValue makes packed
   * arrays; an array with holes is refused at its first hole.)
   */
  items: 1 << 24,
  /** Characters of an error's message and of its backtrace (longer ones are cut when encoded). */
  text: 1 << 22,
  /** Characters of a kind, type key, dtype or device name. */
  name: 256,
});

/** Why each live-resource type has no value form. */
const LIVE = {
  'ffi.Function': 'it wraps a callable whose implementation lives in this runtime instance',
  'ffi.Module': 'it wraps a loaded library that lives in this runtime instance',
  'ffi.OpaquePyObject': 'it wraps a host object that lives in this runtime instance',
  'ffi.Tensor': 'it holds memory that lives in this runtime instance and no tensor codec is registered (import webffi, which registers one)',
};

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

/** Marks objects that name an object in another thread (js/remote.js): encoded only through a session's `remote` hook. */
export const REMOTE_REF = Symbol('webffi.remoteRef');

/** Thrown by a codec's ctx.refuse when the encoder keeps refused values (caught where the codec was called). */
const KEEP = Symbol('keep');

/** Value codecs registered by type key (e.g. CPU tensors). */
const codecs = new Map();

/**
 * Plugs in the by-value form of an FFI object type. `encode(handle, ctx)`
 * returns structured-clone-safe data (or calls `ctx.refuse(reason)`), may
 * push ArrayBuffers onto `ctx.transfer` when it is an array (the caller asked
 * to transfer), pushes buffers it made itself (a fresh copy no one else sees)
 * onto `ctx.fresh` when it is an array (they can always move), and encodes
 * nested values with `ctx.encode(value)`.
 * `decode(data, ctx)` rebuilds the value; `ctx.runtime` is the receiving
 * runtime or null, `ctx.decode(data)` decodes nested data; `data` is
 * untrusted and the codec validates it (`ctx.invalid(what)` makes the error).
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
  try {
    return v?.constructor?.name ?? 'Object';
  } catch {
    return 'Object';
  }
}

function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Marks the node being encoded or decoded (a second visit while it is open is a cycle). */
const OPEN = Symbol('open');
/**
 * Nodes are looked up and recorded (memoised) only after this many visits
 * in one value: small values, the common case, cost no Map operations, and a
 * DAG or a cycle is caught once it is past this size (the nodes visited
 * before are handled at most once more).
 */
const MEMO_AFTER = 32;

// -------------------------------------------------------------- encode
/** State of one encodeValue: reused while idle (no allocation per call). */
class EncodeState {
  constructor() {
    this.busy = false;
    this.depth = 1; // the root is a level (the limit counts levels as the C core and toFFI do)
    this.items = 0;
    this.visits = 0;
    this.transfer = null;
    this.fresh = null; // options.fresh: buffers made while encoding, moved rather than copied
    this.remote = null; // options.remote: RemoteObject -> ['R', id]
    this.keep = null; // options.keep: a value with no value form -> ['R', id, meta]
    this.kept = new Set(); // owned handles given to keep (not released after encoding)
    this.seen = new Map(); // JS object -> encoded form (OPEN while encoding)
    this.ptrs = new Map(); // FFI object address -> encoded form (OPEN while encoding)
  }

  reset() {
    this.busy = false;
    this.depth = 1; // the root is a level (the limit counts levels as the C core and toFFI do)
    this.items = 0;
    this.visits = 0;
    this.transfer = null;
    this.fresh = null;
    this.remote = null;
    this.keep = null;
    if (this.kept.size) this.kept.clear();
    if (this.seen.size) this.seen.clear();
    if (this.ptrs.size) this.ptrs.clear();
  }
}
const idleEncode = new EncodeState();

/**
 * Encodes a webffi value or error as structured-clone-safe data.
 * @param {unknown} value
 * @param {{ transfer?: Transferable[] }} [options] pass an array to have the
 *   ArrayBuffers behind typed arrays and Bytes pushed onto it (for
 *   `postMessage(data, transfer)`); without one, data is copied.
 *   `fresh`: an array for the buffers encoding itself made (a CPU tensor's
 *   copy out of wasm memory), which can move even when the caller's own
 *   buffers must not; pass the same list to postMessage.
 *   Sessions only: `remote(ref)` encodes a RemoteObject (or throws);
 *   `keep(value)` encodes a value that has no value form (a live resource)
 *   as a remote reference instead of refusing it.
 */
export function encodeValue(value, options) {
  const s = idleEncode.busy ? new EncodeState() : idleEncode; // a codec may call encodeValue itself
  s.busy = true;
  s.transfer = Array.isArray(options?.transfer) ? options.transfer : null;
  s.fresh = Array.isArray(options?.fresh) ? options.fresh : s.transfer;
  if (options?.remote) s.remote = options.remote;
  if (options?.keep) s.keep = options.keep;
  try {
    return encode(value, s, false);
  } finally {
    s.reset();
  }
}

function cycle(type) {
  return new ValueError(`Cycle detected during serialization: ${/^[aeiou]/i.test(type) ? 'an' : 'a'} ${type} contains itself`);
}

function countItems(s, n) {
  s.items += n;
  if (s.items > LIMITS.items) {
    throw new ValueError(`encodeValue: more than ${LIMITS.items} elements in one value`);
  }
}

/** `memo`: look v up among the nodes already encoded (the root cannot have been). */
function encode(v, s, memo) {
  switch (typeof v) {
    case 'number':
    case 'string':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return v;
    case 'function':
      if (s.keep !== null) return s.keep(v);
      if (isHandle(v)) throw refuse('ffi.Function', LIVE['ffi.Function']);
      throw refuse('function', 'a JS function runs only in the thread that made it');
    case 'symbol':
      throw refuse('symbol', 'a symbol is unique to the thread that made it');
    default:
  }
  if (v === null) return null;
  if (v instanceof FFIObject) return encodeHandle(v, s, memo);
  if (ArrayBuffer.isView(v)) {
    refuseDetached(v, 'encodeValue');
    addTransfer(s, v.buffer);
    return v;
  }
  if (v instanceof ArrayBuffer) {
    refuseDetached(v, 'encodeValue');
    addTransfer(s, v);
    return v;
  }
  if (!memo) return encodeObject(v, s);
  const known = s.seen.get(v);
  if (known !== undefined) {
    if (known === OPEN) throw cycle(describe(v));
    return known;
  }
  s.seen.set(v, OPEN);
  const out = encodeObject(v, s);
  s.seen.set(v, out);
  return out;
}

/** A JS object (not a handle, typed array or buffer), encoded once per encodeValue. */
function encodeObject(v, s) {
  if (v instanceof Error) return encodeError(v, kindOf(v), s); // first: a failed call's reply is one
  if (v[REMOTE_REF] === true) {
    if (s.remote !== null) return s.remote(v);
    throw refuse(describe(v), 'it names an object in a worker: pass it to calls on its own session, or send its value (`await ref.fetch()`)');
  }
  if (v instanceof FFIError) return encodeError(v, v.kind, s); // a class given to registerError that does not extend Error
  if (Array.isArray(v)) {
    const n = v.length;
    countItems(s, n);
    const out = ['a']; // packed (push), which structured clone copies fastest
    for (let i = 0; i < n; i++) out.push(encodeChild(v[i], 'Array', s, false));
    return out;
  }
  if (v instanceof Map) {
    const out = ['m'];
    countItems(s, v.size);
    for (const [k, x] of v) {
      countItems(s, 1); // a Map that grows while read stops at the limit
      out.push(encodeChild(k, 'Map', s, false), encodeChild(x, 'Map', s, false));
    }
    return out;
  }
  const asKey = v[BY_VALUE_AS];
  if (asKey !== undefined) return encodeWithCodec(asKey, v, s);
  if (v instanceof FloatValue) return ['f', v.value];
  if (v instanceof IntValue) return ['i', v.value];
  if (v instanceof Device) return ['dev', v.deviceType, v.deviceId, v.name];
  if (v instanceof DataType) return ['dt', v.code, v.bits, v.lanes, v.text];
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    countItems(s, keys.length);
    const out = {};
    for (const k of keys) {
      if (k === '__proto__') throw new ValueError('encodeValue: an object with an own `__proto__` field has no value form');
      out[k] = encodeChild(v[k], 'Object', s, false);
    }
    return ['o', out];
  }
  if (s.keep !== null) return s.keep(v);
  throw refuse(describe(v), 'it is not a value webffi converts (plain data, typed arrays, webffi values and errors are)');
}

/** v itself, unless its bytes were transferred away (a TypeError: there is nothing to send or make). */
function refuseDetached(v, what) {
  if (v instanceof DataView) {
    if (isDetached(dataViewBuffer.call(v))) throw new FFITypeError(`${what}: the DataView is detached (its ArrayBuffer was transferred)`);
  } else if (ArrayBuffer.isView(v)) {
    typedArrayParts(v, what);
  } else {
    arrayBufferLength(v, what);
  }
  return v;
}
const dataViewBuffer = Object.getOwnPropertyDescriptor(DataView.prototype, 'buffer').get;

function addTransfer(s, buffer) {
  const transfer = s.transfer;
  if (transfer && buffer instanceof ArrayBuffer && !transfer.includes(buffer)) transfer.push(buffer);
}

/** Encodes an element of a container; elements read from FFI (owned) are released after. */
function encodeChild(v, container, s, owned) {
  try {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return v;
    if (++s.depth > LIMITS.depth) {
      throw new ValueError(`encodeValue: nesting deeper than ${LIMITS.depth} levels`);
    }
    try {
      return encode(v, s, ++s.visits > MEMO_AFTER);
    } finally {
      s.depth--;
    }
  } catch (e) {
    throw inContainer(e, container);
  } finally {
    if (owned && isHandle(v) && !s.kept.has(v)) v.dispose();
  }
}

function encodeHandle(h, s, memo) {
  const key = h.typeKey;
  if (codecs.has(key)) return encodeWithCodec(key, h, s);
  if (LIVE[key]) {
    if (s.keep !== null) return keepHandle(h, s);
    throw refuse(key, LIVE[key]);
  }
  const hooks = h[RUNTIME];
  const ptr = hooks.ptrOf(h); // a disposed handle says so
  if (memo) {
    const known = s.ptrs.get(ptr);
    if (known !== undefined) {
      if (known === OPEN) throw cycle(key.slice(key.indexOf('.') + 1));
      return known;
    }
    s.ptrs.set(ptr, OPEN);
  }
  // FFI floats are read as FloatValue so that 1.0 stays a float.
  const before = hooks.setFloatsAsValues(true);
  let out;
  try {
    out = encodeContents(h, key, hooks, s);
  } finally {
    hooks.setFloatsAsValues(before);
  }
  if (memo) s.ptrs.set(ptr, out);
  return out;
}

/** A handle given to the keep hook: it is kept, so not released as an element read from FFI. */
function keepHandle(h, s) {
  const out = s.keep(h);
  s.kept.add(h);
  return out;
}

/** A value in the form of the codec registered for `key`. */
function encodeWithCodec(key, v, s) {
  const codec = codecs.get(key);
  if (!codec) {
    if (s.keep !== null) return isHandle(v) ? keepHandle(v, s) : s.keep(v);
    throw refuse(key, LIVE[key] ?? 'no value codec is registered for it in this thread');
  }
  try {
    return ['X', key, codec.encode(v, codecContext(key, s))];
  } catch (e) {
    if (e === KEEP) return isHandle(v) ? keepHandle(v, s) : s.keep(v);
    throw e;
  }
}

/** The data of a container or reflected object (FFI floats read as FloatValue). */
function encodeContents(h, key, hooks, s) {
  const c = CONTAINERS[key];
  if (c?.tag === 'S') {
    const dims = h.toJS();
    countItems(s, dims.length);
    return ['S', ...dims];
  }
  if (c?.seq) {
    // All small ints (indices, sizes): one Int32Array, far cheaper to clone than a JS array.
    const ints = hooks.seqInt32(h);
    if (ints) {
      addTransfer(s, ints.buffer);
      return [`${c.tag}i`, ints];
    }
  }
  if (c) {
    const items = c.seq ? hooks.seqItems(h, [c.tag]) : hooks.mapItems(h, [c.tag]);
    try {
      countItems(s, items.length - 1);
      for (let i = 1; i < items.length; i++) {
        const x = items[i];
        if (x !== null && (typeof x === 'object' || typeof x === 'function')) items[i] = encodeChild(x, key, s, true);
      }
    } catch (e) {
      for (const x of items) if (isHandle(x)) x.dispose(); // those not read yet (dispose is idempotent)
      throw e;
    }
    return items;
  }
  const info = hooks.reflection(h.typeIndex);
  if (!info?.hasCreator) throw refuse(key, 'its type has no creator, so it cannot be rebuilt from its fields');
  countItems(s, info.fields.length);
  const fields = {};
  for (const name of info.fields) fields[name] = encodeChild(h[name], key, s, true);
  return ['O', key, fields];
}

function codecContext(key, s) {
  return {
    transfer: s.transfer,
    fresh: s.fresh,
    encode: (v) => encodeChild(v, key, s, false),
    refuse: (reason) => {
      throw s.keep !== null ? KEEP : refuse(key, reason);
    },
  };
}

/** The ABI backtrace of any thrown value (a JS error's stack converted). */
function backtraceOf(e) {
  const text = e.backtrace; // read once: on an error raised in C it is a getter
  return typeof text === 'string' ? text : jsStackToBacktrace(e.stack).text;
}

/** Text cut to LIMITS.text characters, so that what is encoded always decodes. */
function bounded(text) {
  return text.length <= LIMITS.text ? text : `${text.slice(0, LIMITS.text - 14)} [... cut off]`;
}

/** An error as ['E', kind, message, backtrace, cause?] (kind is kindOf(e), which the caller knows). */
function encodeError(e, kind, s) {
  const k = typeof kind === 'string' && kind !== '' && kind.length <= LIMITS.name ? kind : 'RuntimeError';
  const out = ['E', k, bounded(messageOf(e)), bounded(backtraceOf(e))];
  const cause = e.cause;
  if (cause !== undefined) out.push(encodeChild(cause, k, s, false));
  return out;
}

// -------------------------------------------------------------- decode
/** State of one decodeValue: reused while idle. */
class DecodeState {
  constructor() {
    this.busy = false;
    this.rt = null;
    this.remote = null; // options.remote: (id, meta) -> the object a remote reference names
    this.depth = 1;
    this.items = 0;
    this.visits = 0;
    this.seen = new Map(); // encoded node -> decoded value (OPEN while decoding)
    this.created = []; // handles made while decoding
    this.given = new Set(); // ... of which these reach the caller (in JS containers or as the result)
  }

  reset() {
    this.busy = false;
    this.rt = null;
    this.remote = null;
    this.depth = 1;
    this.items = 0;
    this.visits = 0;
    if (this.seen.size) this.seen.clear();
    if (this.created.length) this.created.length = 0;
    if (this.given.size) this.given.clear();
  }
}
const idleDecode = new DecodeState();

/** Paths of malformed-data errors, innermost segment first. */
const paths = new WeakMap();

/** A ValueError (or TypeError) about malformed data; decodeValue adds where it was. */
function invalid(what, Kind = ValueError) {
  const e = new Kind(what);
  paths.set(e, []);
  return e;
}

/** Records that error e happened at `segment` of the current node. */
function at(e, segment) {
  paths.get(e)?.push(segment);
  return e;
}

/**
 * Rebuilds what encodeValue made. Errors come back as the registered class
 * for their kind (no runtime needed). With `runtime`, FFI containers and
 * reflected objects come back as handles of that runtime (the caller owns
 * the ones it receives; those only used to build others are released);
 * without one, containers come back as plain JS (as `toJS()` gives).
 * Data that encodeValue cannot have made is refused with a ValueError or
 * TypeError naming what is wrong and where.
 * @param {unknown} data
 * Sessions only: `remote(id, meta)` gives the object a remote reference
 * names (it validates both; without the hook a reference is refused).
 * @param {{ runtime?: object, remote?: (id: number, meta: unknown) => unknown }} [options]
 */
export function decodeValue(data, options) {
  const s = idleDecode.busy ? new DecodeState() : idleDecode;
  const rt = options?.runtime ?? null;
  if (rt !== null && (typeof rt !== 'object' || rt[RUNTIME] === undefined)) {
    throw new FFITypeError(`decodeValue: options.runtime is a webffi runtime (from load()), not ${kindName(rt)}`);
  }
  s.busy = true;
  s.rt = rt;
  if (typeof options?.remote === 'function') s.remote = options.remote;
  let ok = false;
  try {
    const out = decode(data, s, false);
    if (s.created.length) {
      if (isHandle(out)) s.given.add(out);
      for (const h of s.created) if (!s.given.has(h)) release(h);
    }
    ok = true;
    return out;
  } catch (e) {
    throw failure(e);
  } finally {
    if (!ok) for (const h of s.created) release(h);
    s.reset();
  }
}

function release(h) {
  try {
    h.dispose();
  } catch {
    // a poisoned runtime: its next call says so
  }
}

/** What a decoding failure is thrown as: ours with its path, a webffi error, or a ValueError. */
function failure(e) {
  const path = paths.get(e);
  if (path) {
    paths.delete(e);
    path.reverse();
    const shown = path.length > 16 ? `${path.slice(0, 8).join('')}...${path.slice(-8).join('')}` : path.join('');
    e.message = `decodeValue: ${e.message}${path.length ? ` (at value${shown})` : ''}`;
    return e;
  }
  let text;
  try {
    if (e instanceof FFIError || e instanceof FatalError) return e;
    text = messageOf(e);
  } catch {
    text = 'a value that cannot be read was thrown'; // a Proxy thrown by a Proxy's trap
  }
  // A read of the data that threw (a getter, a Proxy), or a codec's own error.
  const out = new ValueError(`decodeValue: malformed data: ${text}`);
  Object.defineProperty(out, 'cause', { value: e, writable: true, configurable: true });
  return out;
}

const abByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;

/** A real ArrayBuffer (not a Proxy of one, nor an object with its prototype). */
function isArrayBuffer(d) {
  try {
    abByteLength.call(d);
    return true;
  } catch {
    return false;
  }
}

function kindName(d) {
  if (d === null) return 'null';
  if (typeof d !== 'object') return typeof d;
  return Array.isArray(d) ? 'array' : describe(d);
}

/** `memo`: look d up among the nodes already decoded (the root cannot have been). */
function decode(d, s, memo = true) {
  switch (typeof d) {
    case 'number':
    case 'string':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return d;
    case 'object':
      if (d === null) return null;
      break;
    default:
      throw invalid(`a ${typeof d} is not data made by encodeValue`, FFITypeError);
  }
  if (!Array.isArray(d)) {
    if (ArrayBuffer.isView(d) || isArrayBuffer(d)) return refuseDetached(d, 'decodeValue'); // typed arrays, DataViews, ArrayBuffers as themselves
    throw invalid(`a ${kindName(d)} is not data made by encodeValue (expected a primitive, typed array, ArrayBuffer or tagged array)`, FFITypeError);
  }
  if (!memo) return decodeNode(d, s);
  if (++s.depth > LIMITS.depth) {
    s.depth--;
    throw invalid(`nesting deeper than ${LIMITS.depth} levels`);
  }
  try {
    if (++s.visits <= MEMO_AFTER) return decodeNode(d, s);
    const known = s.seen.get(d);
    if (known !== undefined) {
      if (known === OPEN) throw invalid('the data contains itself (a cycle)');
      return known;
    }
    s.seen.set(d, OPEN);
    const out = decodeNode(d, s);
    s.seen.set(d, out);
    return out;
  } finally {
    s.depth--;
  }
}

/** Decodes the child x at `segment` of a node (the path names it on failure). */
function child(x, s, segment) {
  if (x === null || typeof x !== 'object') return decode(x, s);
  try {
    return decode(x, s);
  } catch (e) {
    throw at(e, segment);
  }
}

function countDecoded(s, n) {
  s.items += n;
  if (s.items > LIMITS.items) throw invalid(`more than ${LIMITS.items} elements in one value`);
}

/** Checks a node's length: exactly n, or (n, n + 1) when `optional`. */
function arity(d, n, tag, optional = false) {
  const len = d.length;
  if (len !== n && !(optional && len === n + 1)) {
    throw invalid(`a \`${tag}\` node has ${optional ? `${n} or ${n + 1}` : n} elements, not ${len}`);
  }
}

function decodeNode(d, s) {
  const len = d.length;
  if (typeof len !== 'number' || !(len >= 1) || len > LIMITS.items) {
    throw invalid(len === 0 ? 'an empty array is not data made by encodeValue (no tag)' : `an array of length ${len} is not data made by encodeValue`);
  }
  const tag = d[0];
  const rt = s.rt;
  switch (tag) {
    case 'a':
      return decodeItems(d, len, s, true);
    case 'E':
      return decodeError(d, s);
    case 'o':
      arity(d, 2, tag);
      return decodeFields(d[1], s);
    case 'm':
      return decodeMap(d, len, s);
    case 'f':
      arity(d, 2, tag);
      if (typeof d[1] !== 'number') throw invalid(`a float is a number, not ${kindName(d[1])}`, FFITypeError);
      return rt ? new FloatValue(d[1]) : d[1];
    case 'i': {
      arity(d, 2, tag);
      const v = d[1];
      if (typeof v !== 'bigint' && !Number.isInteger(v)) throw invalid(`an int is an integer number or BigInt, not ${kindName(v)} ${typeof v === 'number' ? v : ''}`.trim(), FFITypeError);
      return rt ? new IntValue(v) : v;
    }
    case 'dev':
      arity(d, 4, tag);
      intIn(d[1], 0, 0x7fffffff, 'a device type');
      intIn(d[2], 0, 0x7fffffff, 'a device id');
      return new Device(d[1], d[2], name(d[3], 'a device name'));
    case 'dt':
      arity(d, 5, tag);
      intIn(d[1], 0, 255, 'a dtype code');
      intIn(d[2], 0, 255, 'a dtype bits');
      intIn(d[3], 0, 65535, 'a dtype lanes');
      return new DataType(d[1], d[2], d[3], name(d[4], 'a dtype text'));
    case 'A': {
      const items = decodeItems(d, len, s, !rt);
      return rt ? made(s, rt.toFFI(items)) : items;
    }
    case 'S': {
      const items = decodeItems(d, len, s, !rt);
      for (let i = 0; i < items.length; i++) {
        const x = items[i];
        if (typeof x !== 'bigint' && !Number.isInteger(x)) throw at(invalid(`a Shape dimension is an integer, not ${kindName(x)}`, FFITypeError), `[${i + 1}]`);
      }
      return rt ? made(s, rt[RUNTIME].global('ffi.Shape')(...items)) : items;
    }
    case 'L':
      if (rt) return made(s, rt[RUNTIME].global('ffi.List')(...decodeItems(d, len, s, false)));
      return decodeItems(d, len, s, true);
    case 'M':
    case 'D':
      if (len % 2 !== 1) throw invalid(`a \`${tag}\` node has a key without a value (${len} elements)`);
      if (rt) return made(s, rt[RUNTIME].global(CONSTRUCTORS[tag])(...decodeItems(d, len, s, false)));
      return decodeMap(d, len, s);
    case 'Ai':
    case 'Li': {
      arity(d, 2, tag);
      const ints = d[1];
      if (!ArrayBuffer.isView(ints) || Object.getPrototypeOf(ints) !== Int32Array.prototype) {
        throw at(invalid(`packed ints are an Int32Array, not ${kindName(ints)}`, FFITypeError), '[1]');
      }
      const items = numbers(ints);
      if (!rt) return items;
      return made(s, tag === 'Ai' ? rt.toFFI(items) : rt[RUNTIME].global('ffi.List')(...items));
    }
    case 'O':
      arity(d, 3, tag);
      return decodeObject(name(d[1], 'a type key'), d[2], s);
    case 'R': {
      arity(d, 2, tag, true);
      if (s.remote === null) throw invalid('a remote object reference is only valid in a worker session');
      const id = d[1];
      if (!Number.isSafeInteger(id) || id < 1) throw at(invalid(`a remote object id is a positive integer, not ${typeof id === 'number' ? id : kindName(id)}`, FFITypeError), '[1]');
      return s.remote(id, d[2]);
    }
    case 'X': {
      arity(d, 3, tag);
      const key = name(d[1], 'a codec type key');
      const codec = codecs.get(key);
      if (!codec) throw invalid(`no value codec is registered for \`${key}\` in this thread`);
      const ctx = {
        runtime: rt,
        decode: (x) => child(x, s, `{${key}}`),
        invalid: (what) => invalid(`${key}: ${what}`),
      };
      const out = codec.decode(d[2], ctx);
      return isHandle(out) ? made(s, out) : out;
    }
    default:
      throw invalid(`not data made by encodeValue (tag ${typeof tag === 'string' ? JSON.stringify(tag.slice(0, 40)) : kindName(tag)})`);
  }
}

/** A handle made while decoding: released at the end unless it reaches the caller. */
function made(s, h) {
  s.created.push(h);
  return h;
}

function intIn(v, lo, hi, what) {
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw invalid(`${what} is an integer in [${lo}, ${hi}], not ${typeof v === 'number' ? v : kindName(v)}`, FFITypeError);
  }
}

function name(v, what) {
  if (typeof v !== 'string' || v === '' || v.length > LIMITS.name) {
    throw invalid(`${what} is a non-empty string of at most ${LIMITS.name} characters, not ${typeof v === 'string' ? `one of ${v.length}` : kindName(v)}`, FFITypeError);
  }
  return v;
}

/**
 * The decoded items after a tag (d[1], d[2], ...) as a new array. `give`:
 * the array goes to the caller (a JS array), so do the handles in it.
 */
function decodeItems(d, len, s, give) {
  countDecoded(s, len - 1);
  const out = []; // grown, not preallocated: a length is only a claim until the elements are read
  let i = 1;
  try {
    for (; i < len; i++) {
      const x = d[i];
      if (typeof x === 'object' && x !== null) out.push(decode(x, s));
      else if (typeof x === 'function' || typeof x === 'symbol' || (x === undefined && !(i in d))) out.push(decode(leaf(x, d, i), s));
      else out.push(x);
    }
  } catch (e) {
    throw at(e, `[${i}]`);
  }
  if (give && s.created.length) for (const x of out) if (isHandle(x)) s.given.add(x);
  return out;
}

/** An element that is not a primitive (refused by decode) or a hole. */
function leaf(x, d, i) {
  if (x === undefined && !(i in d)) throw hole();
  return x;
}

/** A missing element: sparse arrays are not data encodeValue makes (and their length is no measure of their size). */
function hole() {
  return invalid('an array with holes is not data made by encodeValue');
}

/** A typed array's elements as a JS array. */
function numbers(typed) {
  const out = new Array(typed.length);
  for (let i = 0; i < typed.length; i++) out[i] = typed[i];
  return out;
}

/** A JS Map from the flat keys and values after a tag. */
function decodeMap(d, len, s) {
  if (len % 2 !== 1) throw invalid(`a \`${d[0]}\` node has a key without a value (${len} elements)`);
  countDecoded(s, len - 1);
  const m = new Map();
  let i = 1;
  try {
    let k;
    for (; i < len; i++) {
      const x = d[i];
      if (x === undefined && !(i in d)) throw hole();
      const v = decode(x, s);
      if (s.created.length && isHandle(v)) s.given.add(v);
      if (i & 1) k = v; // keys at odd indices, each followed by its value
      else m.set(k, v);
    }
  } catch (e) {
    throw at(e, `[${i}]`);
  }
  return m;
}

/** The own data fields of an encoded plain object: [name, value] pairs, each read once. */
export function plainFields(o, what) {
  if (o === null || typeof o !== 'object' || Array.isArray(o) || !isPlainObject(o)) {
    throw invalid(`${what} is a plain object, not ${kindName(o)}`, FFITypeError);
  }
  const keys = Object.keys(o);
  const out = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (k === '__proto__') throw invalid(`${what} has a \`__proto__\` field`);
    const desc = Object.getOwnPropertyDescriptor(o, k);
    if (!desc || !('value' in desc)) throw invalid(`field \`${k}\` of ${what} is an accessor, not data`);
    out[i] = [k, desc.value];
  }
  return out;
}

function decodeFields(o, s) {
  const fields = plainFields(o, 'an encoded object');
  countDecoded(s, fields.length);
  const out = {};
  for (const [k, x] of fields) {
    const v = child(x, s, `.${k}`);
    if (s.created.length && isHandle(v)) s.given.add(v);
    out[k] = v;
  }
  return out;
}

function decodeObject(key, data, s) {
  const rt = s.rt;
  if (!rt) throw invalid(`rebuilding a \`${key}\` object needs a webffi runtime ({ runtime })`);
  const fields = plainFields(data, `the fields of \`${key}\``);
  countDecoded(s, fields.length);
  const hooks = rt[RUNTIME];
  const obj = made(s, hooks.create(key));
  const known = hooks.reflection(obj.typeIndex)?.fields ?? [];
  for (const [name] of fields) {
    if (!known.includes(name)) {
      throw at(invalid(`\`${name}\` is not a field of \`${key}\` (its fields: ${known.join(', ') || 'none'})`, FFITypeError), `.${name}`);
    }
  }
  for (const [name, x] of fields) {
    const value = child(x, s, `.${name}`);
    try {
      obj[name] = value;
    } catch (e) {
      if (e instanceof FFIError || e instanceof FatalError) throw e;
      throw makeError('AttributeError', `decodeValue: field \`${name}\` of \`${key}\` cannot be set (${e.message})`);
    }
  }
  return obj;
}

function text(v, what) {
  if (typeof v !== 'string' || v.length > LIMITS.text) {
    throw invalid(`${what} is a string of at most ${LIMITS.text} characters, not ${typeof v === 'string' ? `one of ${v.length}` : kindName(v)}`, FFITypeError);
  }
  return v;
}

function decodeError(d, s) {
  arity(d, 4, 'E', true);
  const kind = name(d[1], 'an error kind');
  const message = text(d[2], 'an error message');
  const backtrace = text(d[3], 'an error backtrace');
  const cause = d.length > 4 ? child(d[4], s, '.cause') : undefined;
  if (s.created.length && isHandle(cause)) s.given.add(cause);
  // The decoder's stack would be misleading (the error's frames are its
  // backtrace), and capturing none at all (a limit that is not a number) is
  // cheaper than capturing zero frames: the stack is set to its header instead.
  const limit = Error.stackTraceLimit;
  let e;
  try {
    Error.stackTraceLimit = undefined;
    e = makeError(kind, message, backtrace);
  } finally {
    Error.stackTraceLimit = limit;
  }
  e.stack = message === '' ? kind : `${kind}: ${message}`;
  if (d.length > 4) {
    Object.defineProperty(e, 'cause', { value: cause, writable: true, configurable: true });
  }
  return e;
}
