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
/**
 * A wrapper's finalizer cell { p } once registered (js/runtime/lifetimes.js),
 * null before; UNTRACKED for a wrapper the runtime keeps (never registered).
 */
export const CELL = Symbol('webffi.cell');
export const UNTRACKED = { p: 0 };
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

/**
 * Node's util.inspect hook, by its registered name: nothing is imported from
 * Node, and browsers' consoles ignore it.
 */
export const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** How many elements / entries inspect shows when util.inspect gives no maxArrayLength. */
const DEFAULT_ITEMS = 100;
// Pointers of the containers being inspected now (inspect is synchronous),
// so a List holding itself prints as circular instead of recursing.
const inspecting = new Set();

/**
 * The formatter used when the hook is called without util.inspect's (a
 * direct call, a host other than Node): strings quoted, handles through
 * their hook, depth counted down as util.inspect does (default 2).
 */
function plainInspect(value, options = {}) {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'bigint') return `${value}n`;
  if (value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value[INSPECT] === 'function') {
    return value[INSPECT](options.depth === undefined ? 2 : options.depth, options, plainInspect);
  }
  return String(value);
}

/**
 * What a hook needs to print a handle's children: `child` formats one a
 * level deeper, `more(n)` is the elision note, `spent` says depth ran out
 * (the caller prints `[typeKey]`).
 */
function inspectContext(depth, options, inspect) {
  const fmt = typeof inspect === 'function' ? inspect : plainInspect;
  const opts = options ?? {};
  const max = opts.maxArrayLength === undefined ? DEFAULT_ITEMS : (opts.maxArrayLength ?? Infinity);
  const level = depth === undefined ? 2 : depth; // null: no limit
  return {
    max: Math.max(0, max),
    spent: typeof level === 'number' && level < 0,
    stylize: typeof opts.stylize === 'function' ? opts.stylize : (t) => t,
    child: (v) => fmt(v, { ...opts, depth: level === null ? null : level - 1 }),
    more: (n) => `... ${n} more item${n === 1 ? '' : 's'}`,
  };
}

/**
 * Prints a container's items, bounded and guarded against cycles:
 * `render(ctx)` returns the text; a disposed handle prints `<disposed>`.
 */
export function inspectWith(self, depth, options, inspect, render) {
  const key = self.typeKey;
  const ptr = self[PTR];
  if (!ptr) return `${key} <disposed>`;
  const ctx = inspectContext(depth, options, inspect);
  if (ctx.spent) return ctx.stylize(`[${key}]`, 'special');
  if (inspecting.has(ptr)) return ctx.stylize(`[Circular ${key}]`, 'special');
  inspecting.add(ptr);
  try {
    return render(ctx, key);
  } finally {
    inspecting.delete(ptr);
  }
}

/** The reflected fields of a wrapper: enumerable getters its classes define. */
function fieldNames(self) {
  const names = [];
  for (let p = Object.getPrototypeOf(self); p && p !== FFIObject.prototype; p = Object.getPrototypeOf(p)) {
    for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(p))) {
      if (d.enumerable && d.get && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

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
    this[CELL] = null;
    runtime.track(this);
  }

  /** The object's address; throws once disposed. */
  get handle() {
    return this[RUNTIME].ptrOf(this);
  }

  /** The core's ReprPrint form, e.g. `testing.TestIntPair(a=1, b=2)`. */
  toString() {
    if (!this[PTR]) return `${this.typeKey} <disposed>`;
    // a core without ffi.ReprPrint (model libraries do not register it): the type key, as upstream's repr of an unknown object
    const repr = this[RUNTIME].global('ffi.ReprPrint', true);
    return repr ? repr(this) : this.typeKey;
  }

  /** util.inspect / console.log: the type key and the reflected fields, e.g. `testing.TestIntPair { a: 1, b: 2 }`. */
  [INSPECT](depth, options, inspect) {
    return inspectWith(this, depth, options, inspect, (ctx, key) => {
      const names = fieldNames(this);
      if (names.length === 0) return key;
      const parts = names.map((n) => {
        let v;
        try {
          v = ctx.child(this[n]);
        } catch (e) {
          v = `<${e?.message ?? e}>`;
        }
        return `${n}: ${v}`;
      });
      return `${key} { ${parts.join(', ')} }`;
    });
  }
}
Object.assign(FFIObject.prototype, handleMethods);
Object.defineProperty(FFIObject.prototype, disposeSymbol, { enumerable: false });
Object.defineProperty(FFIObject.prototype, INSPECT, { enumerable: false });
Object.defineProperties(FFIObject.prototype, handleGetters);

/** The prototype of callable Function handles: a Function with handle methods. */
export const functionPrototype = Object.create(Function.prototype, {
  ...handleGetters,
  handle: { get() { return this[RUNTIME].ptrOf(this); } },
});
Object.assign(functionPrototype, handleMethods);
Object.defineProperties(functionPrototype, {
  /** `ffi.Function` (the JS closure's source says nothing useful). */
  toString: {
    value() { return this[PTR] ? 'ffi.Function' : 'ffi.Function <disposed>'; },
    writable: true, configurable: true,
  },
  [INSPECT]: {
    value(depth, options) {
      const text = this[PTR] ? 'ffi.Function' : 'ffi.Function <disposed>';
      return typeof options?.stylize === 'function' ? options.stylize(text, 'special') : text;
    },
    writable: true, configurable: true,
  },
});

/** True for webffi handles (object wrappers and callable Functions). */
export function isHandle(value) {
  return value != null && value[PTR] !== undefined;
}
