// FFI errors as JS Error subclasses, chosen by kind through a registry.
// Built-in kinds extend the matching native class where one exists (a
// `TypeError` kind is `instanceof TypeError`), and every FFI error, whatever
// its base, answers `instanceof FFIError`.

import { capturedBacktrace, capturedStack, textBacktraceStack } from './backtrace.js';

const BRAND = Symbol('webffi.error');
// An error raised in C holds its stack captured but not formatted (see
// backtrace.js): `backtrace` and `stack` format it on first read.
// `backtrace` is an accessor on the class (one per instance would cost a
// microsecond more); `stack` must be the instance's own, as V8 gives every
// error an own `stack`. The classes made here keep the backtrace text and
// the capture in private fields; other classes (FFIError, classes given to
// registerError) in hidden symbol-keyed properties, which cost a
// defineProperty each (0.25 us: a third of decoding an error from a worker).
// `error[CAPTURE] = capture` works on both.
const CAPTURE = Symbol('webffi.capture');
const CAPTURE_SLOT = Symbol('webffi.captureSlot');
const BACKTRACE = Symbol('webffi.backtrace');

/** Sets an internal field, not enumerable: console.error(e) and util.inspect do not show it. */
function hide(error, key, value) {
  Object.defineProperty(error, key, { value, writable: true, configurable: true });
}

/**
 * Makes instances of cls FFI errors: branded, named by their kind (so
 * String(e) is `KIND: MESSAGE`) and with a `backtrace`. Done once per class,
 * on the prototype: constructing an error then costs what a plain one does.
 */
function brandClass(cls) {
  if (Object.prototype.hasOwnProperty.call(cls.prototype, BRAND)) return;
  Object.defineProperties(cls.prototype, {
    [BRAND]: { value: true },
    name: {
      get() { return this.kind; },
      set(value) { Object.defineProperty(this, 'name', { value, writable: true, configurable: true }); },
      configurable: true,
    },
  });
  if ('backtrace' in cls.prototype) return; // made by makeErrorClass, or derived from one
  Object.defineProperties(cls.prototype, {
    backtrace: {
      /** ABI backtrace text, most recent call first (as `stack`). */
      get() {
        let text = this[BACKTRACE];
        if (text === undefined) {
          const capture = this[CAPTURE_SLOT];
          if (capture === undefined) return '';
          text = capturedBacktrace(capture);
          Reflect.set(this, BACKTRACE, text); // a frozen error formats again next time
        }
        return text;
      },
      set(value) { hide(this, BACKTRACE, value); },
      configurable: true,
    },
    [CAPTURE]: {
      get() { return this[CAPTURE_SLOT]; },
      /** The stack captured in C: the backtrace is formatted from it when first read. */
      set(capture) {
        hide(this, CAPTURE_SLOT, capture);
        hide(this, BACKTRACE, undefined);
      },
      configurable: true,
    },
  });
}

// Kind -> class; every class makeErrorClass builds enters under its kind.
const registry = new Map();

function makeErrorClass(name, Base) {
  const cls = class extends Base {
    #backtrace = '';
    #capture = undefined;

    // A getter, not a computed class name (`{ [name]: class ... }`): V8 keeps
    // a class named that way in dictionary mode, which makes constructing its
    // errors about a quarter slower.
    static get name() {
      return name;
    }

    constructor(message = '', options) {
      super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
      this.kind = options?.kind ?? name;
      if (options?.backtrace !== undefined) this.#backtrace = options.backtrace;
    }

    /** ABI backtrace text, most recent call first (as `stack`). */
    get backtrace() {
      if (this.#backtrace === undefined) this.#backtrace = this.#capture === undefined ? '' : capturedBacktrace(this.#capture);
      return this.#backtrace;
    }

    set backtrace(value) {
      this.#backtrace = value;
    }

    get [CAPTURE]() {
      return this.#capture;
    }

    /** The stack captured in C: the backtrace is formatted from it when first read. */
    set [CAPTURE](capture) {
      this.#capture = capture;
      this.#backtrace = undefined;
    }
  };
  brandClass(cls);
  registry.set(name, cls);
  return cls;
}

/**
 * `e instanceof FFIError` is true for every error that came from (or can go
 * to) the FFI, whichever native base its class has.
 */
export class FFIError extends Error {
  constructor(message = '', options) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.kind = options?.kind ?? 'RuntimeError';
    if (options?.backtrace !== undefined) this.backtrace = options.backtrace; // else '' (the accessor's default)
  }

  static [Symbol.hasInstance](value) {
    return value != null && typeof value === 'object' && value[BRAND] === true;
  }
}
brandClass(FFIError);

export const RuntimeError = makeErrorClass('RuntimeError', Error);
export const ValueError = makeErrorClass('ValueError', Error);
export const FFITypeError = makeErrorClass('TypeError', TypeError);
export const AttributeError = makeErrorClass('AttributeError', Error);
export const KeyError = makeErrorClass('KeyError', Error);
export const IndexError = makeErrorClass('IndexError', RangeError);
export const OverflowError = makeErrorClass('OverflowError', RangeError);
export const MemoryError = makeErrorClass('MemoryError', Error);
export const AssertionError = makeErrorClass('AssertionError', Error);
// apache/tvm's error classes (InternalError, RPCError, OpError,
// DiagnosticError, ScheduleError; its Python package registers them under
// TVMError, a RuntimeError; tvm-ffi registers only the built-in kinds): one
// `instanceof RuntimeError` catches them all, and each has its own class.
export const InternalError = makeErrorClass('InternalError', RuntimeError);
/** A remote call failed for a reason other than the remote function's own error. */
export const RPCError = makeErrorClass('RPCError', RuntimeError);
export const OpError = makeErrorClass('OpError', RuntimeError);
export const DiagnosticError = makeErrorClass('DiagnosticError', RuntimeError);
export const ScheduleError = makeErrorClass('ScheduleError', RuntimeError);
/** A remote call or session ran out of time: its own kind, so callers can single it out. */
export const RPCSessionTimeoutError = makeErrorClass('RPCSessionTimeoutError', RPCError);

/**
 * Thrown by every call once a wasm trap has poisoned the instance: its
 * memory may be inconsistent, so nothing runs on it again.
 */
export class FatalError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'FatalError';
  }
}

/**
 * Makes errors of `kind` instances of `cls` (constructed as
 * `new cls(message)`); `kind`, `backtrace` and `name` are set afterwards.
 */
export function registerError(kind, cls) {
  if (typeof kind !== 'string' || kind === '') throw new FFITypeError('registerError: kind must be a non-empty string');
  if (typeof cls !== 'function') throw new FFITypeError('registerError: cls must be a class');
  brandClass(cls);
  registry.set(kind, cls);
}

/** The class for a kind; unknown kinds get RuntimeError (keeping their kind). */
function errorClass(kind) {
  return registry.get(kind) ?? RuntimeError;
}

/** Builds the JS error for (kind, message, backtrace). */
export function makeError(kind, message, backtrace = '') {
  const error = new (errorClass(kind))(message);
  error.kind = kind;
  error.backtrace = backtrace;
  return error;
}

const deferredStack = {
  get() {
    const capture = this[CAPTURE];
    const text = capturedStack(capture, Error.prototype.toString.call(this), capture.limit);
    Reflect.defineProperty(this, 'stack', { value: text, writable: true, configurable: true });
    return text;
  },
  set(value) { Reflect.defineProperty(this, 'stack', { value, writable: true, configurable: true }); },
  configurable: true,
};

/**
 * Builds the JS error for an error raised in C whose stack `capture` holds
 * unformatted: its backtrace and stack (at most `limit` JS frames) are
 * formatted from it when first read.
 */
export function makeDeferredError(kind, message, capture, limit) {
  const error = new (errorClass(kind))(message);
  error.kind = kind;
  capture.limit = limit;
  error[CAPTURE] = capture;
  if (Object.hasOwn(error, 'backtrace')) error.backtrace = capturedBacktrace(capture); // a class field shadows the accessor
  Object.defineProperty(error, 'stack', deferredStack);
  return error;
}

const HOLDER = Symbol('webffi.stackHolder');
const textStack = {
  get() {
    const text = textBacktraceStack(Error.prototype.toString.call(this), this.backtrace, this[HOLDER]);
    Reflect.defineProperty(this, 'stack', { value: text, writable: true, configurable: true });
    return text;
  },
  set(value) { Reflect.defineProperty(this, 'stack', { value, writable: true, configurable: true }); },
  configurable: true,
};

/**
 * Gives an error made from C text a stack that shows its C frames too: the
 * backtrace's frames, then those of `holder` (a V8 capture of the JS
 * frames below, formatting deferred, or null for none), formatted when read.
 */
export function withTextStack(error, holder) {
  Object.defineProperty(error, HOLDER, { value: holder });
  Object.defineProperty(error, 'stack', textStack);
  return error;
}

/** The capture of the JS frames below an error made from C text (undefined for others). */
export function stackHolderOf(error) {
  try {
    return error[HOLDER] ?? undefined;
  } catch {
    return undefined; // a Proxy's trap
  }
}

/** The deferred capture of an error raised in C (undefined for others). */
export function captureOf(error) {
  try {
    return error[CAPTURE];
  } catch {
    return undefined; // a Proxy's trap
  }
}

/** The kind a thrown JS value crosses C with. */
export function kindOf(value) {
  if (value instanceof FFIError) return value.kind;
  if (value instanceof Error) return value.name && value.name !== 'Error' ? value.name : 'RuntimeError';
  return 'RuntimeError';
}

/** What a JS value is, for messages about a value of the wrong kind: `null`, `string`, `Float32Array`. */
export function describe(v) {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  return v.constructor?.name ?? 'object';
}

/** The message a thrown JS value crosses C with. */
export function messageOf(value) {
  if (value instanceof Error) return String(value.message);
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
