// Errors across the boundary: the core's raised error as a JS value (the
// original JS object when it came from JS), and JS exceptions raised into C
// as ffi.Error objects that carry the JS value back out.
import { jsStackToBacktrace, crossedWasmFrames, takeCapture } from '../backtrace.js';
import { makeError, makeDeferredError, kindOf, messageOf } from '../errors.js';

export function install(state) {
  const { w: x, L, heap, jsValues, jsOpaque, core } = state; // exports guarded: a trap poisons
  const { OBJ, ERR, T_OPAQUE, OPAQUE_HANDLE, ANY, BA_DATA, BA_SIZE } = L;
  // The core's ways of raising and of keeping a JS value with an error (js/core/).
  const moveFromRaised = state.guard(core.moveFromRaised);
  const opaqueFromJS = state.guard(core.opaqueFromJS);
  const errorCreate = state.guard(core.errorCreate);
  const errorSetRaised = state.guard(core.errorSetRaised);
  const errorExtra = core.errorExtra ?? ((err) => heap.u32[(err + OBJ + ERR.extra) >> 2]);
  const opaqueHandle = core.opaqueHandle ?? ((obj) => heap.u32[(obj + OBJ + OPAQUE_HANDLE) >> 2]);

  /** The text of the TVMFFIByteArray at p. */
  function byteArrayText(p) {
    const U32 = heap.u32;
    return heap.readUtf8(U32[(p + BA_DATA) >> 2], U32[(p + BA_SIZE) >> 2]);
  }
  state.byteArrayText = byteArrayText;

  /**
   * The raised error as a JS value (the original JS object when it came from
   * JS). An error made in C thrown by a call of `callee` gets a stack that
   * starts where the user called it.
   */
  state.raisedNeedsStack = false;
  state.takeRaised = function takeRaised(callee, captureHere = true) {
    const out = state.alloc(ANY);
    // Errors raised from C strings come with their stack captured but not
    // formatted: formatting waits until someone reads it (makeDeferredError).
    const capture = takeCapture(moveFromRaised(out));
    state.fresh();
    const err = heap.u32[out >> 2];
    if (!err) return makeError('RuntimeError', 'a call failed without raising an error');
    const e = errorFromObject(err, callee, capture, captureHere);
    state.decref(err);
    return e;
  };

  function errorFromObject(err, callee, capture = null, captureHere = true) {
    const cell = err + OBJ;
    const extra = errorExtra(err);
    if (extra && state.objectTypeIndex(extra) === T_OPAQUE) {
      const h = opaqueHandle(extra);
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
    if (capture === null) {
      // The stack starts at the user's call of callee: captured here, or by
      // the caller when it asked to (fewer frames to walk from there).
      if (captureHere) Error.captureStackTrace?.(e, callee);
      else state.raisedNeedsStack = true;
    }
    return e;
  }
  state.errorFromObject = errorFromObject;

  /**
   * An ffi.Error (new reference) for a JS value, holding the value itself in
   * extra_context so it comes back out as the same object.
   */
  function makeRaisableError(value, backtrace, kindText = textOf(() => kindOf(value), 'RuntimeError'),
    messageText = textOf(() => messageOf(value), '(a thrown value whose message cannot be read)')) {
    const { byteArray, alloc, fresh } = state;
    const kind = byteArray(kindText);
    const message = byteArray(messageText);
    const bt = byteArray(backtrace);
    const out = alloc(ANY);
    const h = state.addHandle(value);
    let opaque = 0;
    if (opaqueFromJS(h, out) === 0) {
      opaque = heap.u32[out >> 2];
      jsOpaque[h] = opaque;
    } else {
      state.releaseHandle(h);
      moveFromRaised(out); // drop the MemoryError: raise the original kind
      if (heap.u32[out >> 2]) x.TVMFFIObjectDecRef(heap.u32[out >> 2]);
    }
    fresh();
    const rc = errorCreate(kind, message, bt, opaque, out);
    fresh();
    if (opaque) x.TVMFFIObjectDecRef(opaque);
    if (rc !== 0) return 0;
    return heap.u32[out >> 2];
  }
  state.makeRaisableError = makeRaisableError;

  /**
   * Errors whose backtrace already runs down to the outermost C frame (made
   * in JS while C was on the stack): later crossings add nothing. Errors made
   * in C hold the C frames of their own call only; each crossing of an outer
   * C call adds that call's frames.
   */
  const completeBacktraces = new WeakSet();

  /** The string f() gives, or fallback when it throws or gives no string. */
  function textOf(f, fallback) {
    try {
      const s = f();
      return typeof s === 'string' ? s : fallback;
    } catch {
      return fallback;
    }
  }

  /** With backtraces off: the value's own backtrace, else none (no stack is read, no frames are walked). */
  function ownBacktrace(value) {
    const own = value !== null && (typeof value === 'object' || typeof value === 'function') ? value.backtrace : undefined;
    return typeof own === 'string' ? own : '';
  }

  /** The backtrace a thrown value crosses C with (its own, or its JS stack's, plus the C frames crossed). */
  function backtraceOf(value) {
    const isObject = value !== null && (typeof value === 'object' || typeof value === 'function');
    const own = isObject ? value.backtrace : undefined;
    if (typeof own === 'string' && own !== '') {
      return completeBacktraces.has(value) ? own : own + crossedWasmFrames();
    }
    const stack = isObject ? value.stack : undefined;
    const { text, complete } = jsStackToBacktrace(typeof stack === 'string' ? stack : undefined);
    if (isObject && complete) completeBacktraces.add(value);
    return complete ? text : text + crossedWasmFrames();
  }

  /**
   * Raises a JS exception into C, for a callback that threw. It never
   * throws (but for a trap, which poisons): reading the value may run user
   * code that throws (a Proxy's traps, getters, toString), and an exception
   * here would unwind the wasm frames below. The value itself still comes
   * back out of the outer call.
   */
  state.raiseFromJS = function raiseFromJS(value) {
    let err = 0;
    try {
      let backtrace;
      try {
        backtrace = state.backtraces.on ? backtraceOf(value) : ownBacktrace(value);
      } catch {
        backtrace = '';
      }
      err = makeRaisableError(value, backtrace);
    } catch (e) {
      if (state.trap.poisoned) throw e;
      try {
        // The kind, message or backtrace could not be made (too large to
        // allocate): the value crosses with a plain one.
        err = makeRaisableError(value, '', 'RuntimeError', '(a thrown value too large to describe)');
      } catch (e2) {
        if (state.trap.poisoned) throw e2;
        err = 0;
      }
    }
    if (err) {
      errorSetRaised(err);
      x.TVMFFIObjectDecRef(err);
    } else {
      // Even the error could not be allocated: the core raises its MemoryError.
      x.TVMFFIErrorSetRaisedFromCStr(0, 0);
    }
  };
}
