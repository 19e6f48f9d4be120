// Typed arrays and ArrayBuffers read through the engine's own accessors (a
// subclass's getters cannot lie about where bytes are), and detached
// buffers refused with a TypeError of ours. Shared by the runtime's checks
// (js/runtime/checks.js) and the by-value codec (js/clone.js), which a
// client without a runtime loads too.
import { FFITypeError, describe as describeValue } from './errors.js';

/** describe() that never throws (a Proxy's traps, a getter on `constructor`). */
function describe(v) {
  try {
    return String(describeValue(v));
  } catch {
    return typeof v;
  }
}

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

const dvBuffer = getter(DataView.prototype, 'buffer');
const dvByteLength = getter(DataView.prototype, 'byteLength');
const dvByteOffset = getter(DataView.prototype, 'byteOffset');

/**
 * A Uint8Array over the bytes of any ArrayBuffer view (a typed array or a
 * DataView), read through the engine's accessors. A detached one is a
 * TypeError of ours.
 */
export function viewBytes(v, what) {
  let buffer;
  try {
    buffer = taBuffer.call(v);
  } catch {
    buffer = null; // not a typed array: a DataView
  }
  if (buffer !== null) {
    const { byteOffset, byteLength } = typedArrayParts(v, what);
    return new Uint8Array(buffer, byteOffset, byteLength);
  }
  buffer = dvBuffer.call(v);
  if (isDetached(buffer)) throw new FFITypeError(`${what}: the DataView is detached (its ArrayBuffer was transferred)`);
  return new Uint8Array(buffer, dvByteOffset.call(v), dvByteLength.call(v));
}

/** An ArrayBuffer's length; a detached one is a TypeError. */
export function arrayBufferLength(v, what) {
  if (isDetached(v)) throw new FFITypeError(`${what}: the ArrayBuffer is detached (it was transferred)`);
  return abByteLength.call(v);
}

