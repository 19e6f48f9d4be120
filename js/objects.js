// Handles on FFI objects: a JS wrapper owns one strong reference, released
// by dispose() / [Symbol.dispose] / a scope, or by the runtime's
// FinalizationRegistry when the wrapper is collected.

export const PTR = Symbol('webffi.ptr');
export const RUNTIME = Symbol('webffi.runtime');
/** The runtime's internals, for js/tensor.js and js/backends (not public API). */
export const INTERNALS = Symbol('webffi.internals');
/** A method giving [pointer, type index] for values written as that pointer (a DLTensor*, a handed-off object). */
export const AS_POD = Symbol('webffi.asPod');
/** A getter naming the value codec (by type key) that encodes a non-handle value, e.g. a DLTensor* view. */
export const BY_VALUE_AS = Symbol('webffi.byValueAs');
/** A method ending a borrow: the runtime calls it on callback arguments when the callback returns. */
export const RELEASE = Symbol('webffi.release');

/**
 * Structured clone copies own enumerable string-keyed properties and refuses
 * Symbol values, so this field makes postMessage(wrapper) throw a
 * DataCloneError whose message says what to do, instead of delivering a
 * plain object with a meaningless typeIndex on the other side.
 */
export const CLONE_GUARD = Symbol(
  'a webffi handle lives in its runtime instance and cannot be posted; send its value with encodeValue() or a worker session');

/**
 * The runtime a handle belongs to, kept in a private field: it cannot be
 * forged or changed from outside, and reading it runs no user code (a Proxy
 * has no such field, whatever its traps say).
 */
class Base {
  constructor(target) {
    return target;
  }
}
class Owner extends Base {
  #runtime;

  constructor(target, runtime) {
    super(target);
    this.#runtime = runtime;
  }

  static of(v) {
    return v !== null && (typeof v === 'object' || typeof v === 'function') && #runtime in v ? v.#runtime : undefined;
  }
}

/** Marks target (a handle, a DLTensor* view) as belonging to runtime (its hooks). */
export function stampRuntime(target, runtime) {
  if (Owner.of(target) === undefined) new Owner(target, runtime); // eslint-disable-line no-new
  return target;
}

/** The hooks of the runtime a stamped value belongs to, or undefined (never runs user code). */
export const runtimeOf = Owner.of;

const disposeSymbol = Symbol.dispose ?? Symbol.for('Symbol.dispose');

/** Methods every handle has, FFIObject wrappers and callable Functions alike. */
const handleMethods = {
  /** Releases the wrapper's reference now; later use throws. Idempotent. */
  dispose() {
    const ptr = this[PTR];
    if (ptr) {
      this[PTR] = 0;
      this[RUNTIME].release(this, ptr);
    }
  },
  [disposeSymbol]() {
    this.dispose();
  },
};

const handleGetters = {
  /** True once dispose() ran. */
  disposed: { get() { return this[PTR] === 0; } },
  /** The type key, e.g. `ffi.Function` (also after dispose). */
  typeKey: { get() { return this[RUNTIME].typeKeyOf(this); } },
};

/**
 * Base class of every object wrapper. Subclasses (containers, reflected
 * types, tensors later) register per type key with the runtime.
 */
export class FFIObject {
  constructor(runtime, ptr, typeIndex) {
    new Owner(this, runtime); // eslint-disable-line no-new
    this[RUNTIME] = runtime;
    this[PTR] = ptr;
    this.typeIndex = typeIndex;
    this.webffiHandle = CLONE_GUARD;
    runtime.track(this, ptr);
  }

  /** The object's address; throws once disposed. */
  get handle() {
    return this[RUNTIME].ptrOf(this);
  }

  /** The core's ReprPrint form, e.g. `testing.TestIntPair(a=1, b=2)`. */
  toString() {
    if (!this[PTR]) return `${this.typeKey}(disposed)`;
    return this[RUNTIME].global('ffi.ReprPrint')(this);
  }
}
Object.assign(FFIObject.prototype, handleMethods);
Object.defineProperty(FFIObject.prototype, disposeSymbol, { enumerable: false });
Object.defineProperties(FFIObject.prototype, handleGetters);

/** The prototype of callable Function handles: a Function with handle methods. */
export const functionPrototype = Object.create(Function.prototype, {
  ...handleGetters,
  handle: { get() { return this[RUNTIME].ptrOf(this); } },
});
Object.assign(functionPrototype, handleMethods);

/** True for webffi handles (object wrappers and callable Functions). */
export function isHandle(value) {
  return value != null && value[PTR] !== undefined;
}
