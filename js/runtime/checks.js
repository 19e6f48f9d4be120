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

// Typed arrays and buffers as the engine sees them (js/buffers.js: the
// by-value codec, which runs without a runtime, uses them too).
export { isDetached, typedArrayParts, arrayBufferLength } from '../buffers.js';

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
