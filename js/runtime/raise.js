// Errors across the boundary: the core's raised error as a JS value (the
// original JS object when it came from JS, the same JS error when it went
// out before), and JS exceptions raised into C as ffi.Error objects that
// carry the JS value back out.
//
// An error's backtrace follows it (js/backtrace.js formats the frames):
// raised in C, it holds the C frames of its own call; each time it leaves a
// JS callback into the C that called it, it gains the JS frames it passed
// through and that C's frames, read from the stack it was made on. Thrown
// again on another path, it keeps its own frames and gains the new path's:
// the text never grows past its own frames and one path's.
import {
  currentFrames, wasmRun, backtraceText, matchCrossing, framesOf, captureFrames, captureSegment, takeCapture,
} from '../backtrace.js';
import { makeError, makeDeferredError, kindOf, messageOf, captureOf, stackHolderOf, withTextStack } from '../errors.js';

/** How deep a cause chain is followed either way (a chain is a list: no cycle can loop, a long one stops). */
const CAUSE_DEPTH = 16;

export function install(state) {
  const { w: x, L, heap, jsValues, jsOpaque, core } = state; // exports guarded: a trap poisons
  const { OBJ, ERR, T_OPAQUE, T_ERROR, OPAQUE_HANDLE, ANY, BA_DATA, BA_SIZE } = L;
  // The core's ways of raising and of keeping a JS value with an error (js/core/).
  const moveFromRaised = state.guard(core.moveFromRaised);
  const opaqueFromJS = state.guard(core.opaqueFromJS);
  const errorCreate = state.guard(core.errorCreate);
  const errorSetRaised = state.guard(core.errorSetRaised);
  const errorExtra = core.errorExtra ?? ((err) => heap.u32[(err + OBJ + ERR.extra) >> 2]);
  const errorCause = ERR.cause === undefined ? () => 0 : (err) => heap.u32[(err + OBJ + ERR.cause) >> 2];
  const opaqueHandle = core.opaqueHandle ?? ((obj) => heap.u32[(obj + OBJ + OPAQUE_HANDLE) >> 2]);

  /** The text of the TVMFFIByteArray at p. */
  function byteArrayText(p) {
    const U32 = heap.u32;
    return heap.readUtf8(U32[(p + BA_DATA) >> 2], U32[(p + BA_SIZE) >> 2]);
  }
  state.byteArrayText = byteArrayText;

  // ------------------------------------------------- trails
  /**
   * Per error object: the stack its backtrace reads from (`frames`: the one
   * it was made on, or the path it was last thrown on), how far the
   * backtrace covers it (`consumed`), the backtrace text, and how much of
   * the text is the error's own (`originEnd`: kept when thrown anew).
   */
  const trails = new WeakMap();

  const isObject = (v) => v !== null && (typeof v === 'object' || typeof v === 'function');

  /** A property read that cannot throw (a Proxy's traps, a getter). */
  function safeGet(v, key) {
    try {
      return v[key];
    } catch {
      return undefined;
    }
  }

  function trailOf(value) {
    let t = trails.get(value);
    if (t !== undefined) return t;
    const capture = captureOf(value);
    const holder = capture === undefined ? stackHolderOf(value) : undefined;
    let frames;
    let consumed;
    let text;
    if (capture !== undefined) {
      // raised in C: its own C frames, then what lay below at the raise
      frames = captureFrames(capture);
      consumed = captureSegment(capture)[1];
      text = String(value.backtrace);
    } else if (holder !== undefined) {
      // raised in C with its C frames as text: the JS frames below come after them
      frames = holder === null ? [] : framesOf(String(holder.stack));
      consumed = 0;
      text = String(value.backtrace);
    } else {
      const stack = safeGet(value, 'stack');
      frames = framesOf(typeof stack === 'string' ? stack : '');
      const own = safeGet(value, 'backtrace');
      const [firstWasm] = wasmRun(frames);
      if (typeof own === 'string' && own !== '') {
        // given a backtrace (a worker's error, the user's): its JS frames come after it
        text = own;
        consumed = 0;
      } else {
        // made in JS: the frames down to the C that called it (all when none did)
        consumed = firstWasm < 0 ? frames.length : firstWasm;
        text = backtraceText(frames, 0, consumed);
      }
    }
    t = { frames, consumed, text, originEnd: text.length };
    trails.set(value, t);
    return t;
  }

  /**
   * The backtrace of `value` as it leaves a JS callback into the C below:
   * the frames from its own stack down to and through that C when it is
   * propagating (made below it, or coming up through it), else its own
   * frames and the C it is thrown into now.
   */
  function crossingBacktrace(value) {
    const current = currentFrames(64, crossingBacktrace);
    const run = wasmRun(current);
    const crossed = run[0] < 0 ? '' : backtraceText(current, run[0], run[1]);
    if (!isObject(value)) return crossed;
    const t = trailOf(value);
    if (run[0] < 0) return t.text;
    const at = matchCrossing(t.frames, t.consumed, current, run);
    if (at >= 0) {
      t.text += backtraceText(t.frames, t.consumed, at);
      t.consumed = at;
    } else {
      t.text = t.text.slice(0, t.originEnd) + crossed;
      t.frames = current;
      t.consumed = run[1];
    }
    return t.text;
  }

  /**
   * The backtrace of an error passed to C as a value (an argument, toFFI):
   * every frame of its stack, as upstream appends a Python error's
   * traceback when it converts one.
   */
  function valueBacktrace(value) {
    const t = trailOf(value);
    if (t.consumed < t.frames.length) {
      t.text += backtraceText(t.frames, t.consumed, t.frames.length);
      t.consumed = t.frames.length;
    }
    return t.text;
  }

  /** The backtrace C gave an error coming back out: it continues from there. */
  function cameBack(value, text) {
    const t = trails.get(value);
    if (t !== undefined) t.text = text;
  }

  // ------------------------------------------------- C errors as JS errors
  /**
   * Errors made in C that carry a cause chain or extra context stay tied to
   * their ffi.Error (as upstream's Python errors keep theirs): raised into C
   * again, the same object goes, cause and context intact; coming back out,
   * the same JS error comes. Others (nearly all) hold nothing.
   */
  const HELD = Symbol('webffi.heldError');
  const heldErrors = new Map(); // error address -> WeakRef(JS error)
  let sweepAt = 64;

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

  function errorFromObject(err, callee, capture = null, captureHere = true, depth = 0) {
    const cell = err + OBJ;
    const extra = errorExtra(err);
    const cause = errorCause(err);
    if (extra && state.objectTypeIndex(extra) === T_OPAQUE) {
      const h = opaqueHandle(extra);
      if (jsOpaque[h] === extra) {
        const original = jsValues[h];
        if (isObject(original)) {
          const text = byteArrayText(cell + ERR.backtrace);
          cameBack(original, text);
          try {
            Object.defineProperty(original, 'backtrace', {
              value: text, writable: true, configurable: true, enumerable: false,
            });
          } catch {
            // a frozen object keeps its identity, without the backtrace
          }
        }
        return original;
      }
    }
    if (extra || cause) {
      const known = heldErrors.get(err)?.deref();
      if (known !== undefined) {
        const text = byteArrayText(cell + ERR.backtrace);
        cameBack(known, text);
        known.backtrace = text;
        return known;
      }
    }
    const kind = byteArrayText(cell + ERR.kind);
    const message = byteArrayText(cell + ERR.message);
    let e;
    if (callee === undefined && capture === null) {
      e = makeError(kind, message, byteArrayText(cell + ERR.backtrace));
    } else if (capture === null && heap.u32[(cell + ERR.backtrace + BA_SIZE) >> 2] !== 0) {
      // C frames as text (an error C made itself, TVMFFIBacktrace's): the
      // stack shows them, then the JS frames from the user's call
      const limit = Error.stackTraceLimit;
      const holder = {};
      try {
        Error.stackTraceLimit = undefined; // the error's own: not captured
        e = makeError(kind, message, byteArrayText(cell + ERR.backtrace));
      } finally {
        Error.stackTraceLimit = limit;
      }
      Error.captureStackTrace?.(holder, callee);
      withTextStack(e, holder.stack === undefined ? null : holder);
    } else {
      // Capturing from the callee leaves the glue's frames out of the stack and
      // costs less: V8 spends most of an error's time on its stack, per frame.
      // A deferred capture already holds the stack: no second one at all.
      const limit = Error.stackTraceLimit;
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
    }
    if (extra || cause) hold(e, err, extra, cause, depth);
    return e;
  }
  state.errorFromObject = errorFromObject;

  /** Ties a JS error to its ffi.Error: `cause` and `extraContext` from it, the object kept. */
  function hold(e, err, extra, cause, depth) {
    x.TVMFFIObjectIncRef(err);
    state.finalizer.register(e, err);
    heldErrors.set(err, new WeakRef(e));
    if (heldErrors.size > sweepAt) {
      // entries of collected errors go now and then: amortised, never per error
      for (const [p, ref] of heldErrors) if (ref.deref() === undefined) heldErrors.delete(p);
      sweepAt = Math.max(64, 2 * heldErrors.size);
    }
    Object.defineProperty(e, HELD, { value: err });
    if (cause && depth < CAUSE_DEPTH && state.objectTypeIndex(cause) === T_ERROR) {
      // a cause has no JS stack of its own: its stack is its C frames
      const c = withTextStack(errorFromObject(cause, undefined, null, true, depth + 1), null);
      Object.defineProperty(e, 'cause', { value: c, writable: true, configurable: true, enumerable: false });
    }
    if (extra) {
      const p = state.alloc(ANY);
      const w = p >> 2;
      heap.i32[w] = state.objectTypeIndex(extra);
      heap.i32[w + 1] = 0;
      heap.u32[w + 2] = extra;
      heap.u32[w + 3] = 0;
      Object.defineProperty(e, 'extraContext', {
        value: state.readAny(p, false), writable: true, configurable: true, enumerable: false,
      });
    }
  }

  // ------------------------------------------------- JS errors into C
  /** Replaces the backtrace of the ffi.Error at err (through its own update hook). */
  function setBacktrace(err, text) {
    const cell = err + OBJ;
    const update = heap.u32[(cell + ERR.update) >> 2];
    const fn = update ? state.x.__indirect_function_table?.get(update) : null;
    if (!fn) return;
    const bt = state.byteArray(text);
    fn(err, bt, 0); // kTVMFFIBacktraceUpdateModeReplace
    state.fresh();
  }

  /**
   * An ffi.Error (new reference) for a JS value, holding the value itself in
   * extra_context so it comes back out as the same object; a JS error made
   * from an ffi.Error is that ffi.Error again. A JS error's `cause` (an
   * error) becomes its cause chain.
   */
  function makeRaisableError(value, backtrace, kindText = textOf(() => kindOf(value), 'RuntimeError'),
    messageText = textOf(() => messageOf(value), '(a thrown value whose message cannot be read)'), depth = 0) {
    const held = isObject(value) ? safeGet(value, HELD) : undefined;
    if (held !== undefined) {
      setBacktrace(held, backtrace);
      x.TVMFFIObjectIncRef(held);
      return held;
    }
    const { byteArray, alloc, fresh } = state;
    let cause = 0;
    const causeValue = isObject(value) ? safeGet(value, 'cause') : undefined;
    if (causeValue instanceof Error && depth < CAUSE_DEPTH) {
      try {
        cause = makeRaisableError(causeValue, textOf(() => valueBacktrace(causeValue), ''), undefined, undefined, depth + 1);
      } catch (e) {
        if (state.trap.poisoned) throw e;
        cause = 0; // the error goes without its cause rather than not at all
      }
    }
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
    const rc = errorCreate(kind, message, bt, cause, opaque, out);
    fresh();
    if (opaque) x.TVMFFIObjectDecRef(opaque);
    if (cause) x.TVMFFIObjectDecRef(cause);
    if (rc !== 0) return 0;
    return heap.u32[out >> 2];
  }
  state.makeRaisableError = makeRaisableError;

  /** An ffi.Error (new reference) for an error passed to C as a value; its backtrace has every frame of its stack. */
  state.errorValue = function errorValue(e) {
    const backtrace = state.backtraces.on ? textOf(() => valueBacktrace(e), '') : ownBacktrace(e);
    return makeRaisableError(e, backtrace);
  };

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
    const own = isObject(value) ? safeGet(value, 'backtrace') : undefined;
    return typeof own === 'string' ? own : '';
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
        backtrace = state.backtraces.on ? crossingBacktrace(value) : ownBacktrace(value);
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
