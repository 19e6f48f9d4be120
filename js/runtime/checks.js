// The checks every entry of the JS boundary applies to what a caller passes:
// limits, options objects, typed arrays read through the engine's own
// accessors (a subclass's getters cannot lie about where bytes are), and
// detached buffers. One place, so each kind of input is checked once.
import { FFITypeError, ValueError, MemoryError, describe as describeValue } from '../errors.js';

/** describe() that never throws (a Proxy's traps, a getter on `constructor`). */
export function describe(v) {
  try {
    return String(describeValue(v));
  } catch {
    return typeof v;
  }
}

/** How deep converted JS structures may nest: the C core's limit (src/nesting.h). */
export const MAX_NESTING = 256;
/** The largest single allocation the glue asks for (wasm32 sizes are 32-bit). */
export const MAX_ALLOC = 2 ** 31 - 64;
/** The most dimensions a tensor shape may have (as the DLTensor reader accepts). */
export const MAX_NDIM = 64;

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
const taLength = getter(TypedArrayPrototype, 'length');
const taByteLength = getter(TypedArrayPrototype, 'byteLength');
const taByteOffset = getter(TypedArrayPrototype, 'byteOffset');
const taBuffer = getter(TypedArrayPrototype, 'buffer');
const abByteLength = getter(ArrayBuffer.prototype, 'byteLength');
const abDetached = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'detached')?.get;

/** Whether an ArrayBuffer is detached (transferred away). */
export function isDetached(buffer) {
  if (!(buffer instanceof ArrayBuffer)) return false; // a SharedArrayBuffer never is
  if (abDetached) return abDetached.call(buffer);
  if (abByteLength.call(buffer) !== 0) return false;
  try {
    new Uint8Array(buffer); // eslint-disable-line no-new
    return false;
  } catch {
    return true;
  }
}

/**
 * The bytes of a typed array as the engine sees them: { buffer, byteOffset,
 * byteLength, length }. A detached one is a TypeError.
 */
export function typedArrayParts(v, what) {
  const buffer = taBuffer.call(v);
  const byteLength = taByteLength.call(v);
  if (byteLength === 0 && isDetached(buffer)) {
    throw new FFITypeError(`${what}: the ${describe(v)} is detached (its ArrayBuffer was transferred)`);
  }
  return { buffer, byteOffset: taByteOffset.call(v), byteLength, length: taLength.call(v) };
}

/** An ArrayBuffer's length; a detached one is a TypeError. */
export function arrayBufferLength(v, what) {
  if (isDetached(v)) throw new FFITypeError(`${what}: the ArrayBuffer is detached (it was transferred)`);
  return abByteLength.call(v);
}

/** An options argument: undefined is {}, anything but an object is a TypeError. */
export function optionsOf(options, what) {
  if (options === undefined) return {};
  if (options === null || (typeof options !== 'object' && typeof options !== 'function')) {
    throw new FFITypeError(`${what}: options must be an object, got ${describe(options)}`);
  }
  return options;
}

/** A size in bytes the glue may allocate; anything else is a MemoryError. */
export function oversized(nbytes) {
  return new MemoryError(`Failed to allocate ${nbytes} bytes`);
}

/** Tracks the structures a conversion is inside: depth bounded, cycles refused. */
export class Nesting {
  constructor() {
    this.active = [];
  }

  enter(v) {
    const active = this.active;
    if (active.length >= MAX_NESTING) {
      throw new ValueError(`Cannot convert a JS value nested deeper than ${MAX_NESTING} levels`);
    }
    if (active.includes(v)) {
      throw new ValueError(`Cannot convert a cyclic ${describe(v)}: it contains itself`);
    }
    active.push(v);
  }

  leave() {
    this.active.pop();
  }
}

/**
 * A name or spec argument (a global's name, a type key, a dtype or device
 * string) as a string: a string, or a primitive as String() gives it. An
 * object is a TypeError: converting one runs its toString (an array's joins
 * every element, which for a sparse 2^32-element array never ends).
 */
export function textOf(v, what) {
  if (typeof v === 'string') return v;
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return String(v);
  throw new FFITypeError(`${what}: expected a string, got ${describe(v)}`);
}
