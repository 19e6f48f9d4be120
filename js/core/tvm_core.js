// A library TVM compiled (an MLC/web-llm model library) behind the core
// seam. Such a library is a whole program that carries upstream tvm-ffi's
// core (0.1.x C ABI) and TVM's web glue (`TVMWasmAllocSpace`,
// `TVMFFIWasmFunctionCreate`, imports `env.TVMFFIWasmSafeCall` and
// `env.TVMFFIWasmFunctionDeleter`), but none of webffi's exports or ABI
// metadata. This file supplies what the runtime needs from it:
// - the ABI metadata, from upstream's layout facts and the library's own
//   type registry;
// - JS functions and opaque JS values as Functions the library makes
//   (TVMFFIWasmFunctionCreate: its deleter tells when C lets go);
// - errors. Upstream's C++ reports errors by throwing, and these libraries
//   are built without exception catching: a throw ends in abort() ->
//   proc_exit, which reaches JS as an exception. Every entry saves the C
//   stack pointer and restores it when that happens, and the error is
//   rebuilt from the traceback the library printed just before throwing
//   (it logs before every throw), or is the JS error a callback raised.
//   What the unwound C++ frames held is not released (a leak per error);
//   the instance stays usable. A real trap still poisons it.
import { createWasi } from '../wasi.js';
import { RuntimeError } from '../errors.js';
import { TVM_FFI_LIBRARY } from './detect.js';

/** Upstream tvm-ffi 0.1.x layouts on wasm32 (c_api.h, container headers). */
const LAYOUT = {
  sizeof: {
    TVMFFIAny: 16, TVMFFIObject: 24, TVMFFIByteArray: 8, TVMFFIErrorCell: 28, TVMFFIShapeCell: 8,
    TVMFFISeqCell: 32, DLTensor: 40, DLDataType: 4, DLDevice: 8, TVMFFITypeInfo: 56, TVMFFIFieldInfo: 88,
    TVMFFIMethodInfo: 48, TVMFFITypeMetadata: 20, wf_map_entry: 32, wf_map_item: 48, wf_map_block: 784,
  },
  offsetof: {
    'TVMFFIAny.type_index': 0, 'TVMFFIAny.small_str_len': 4, 'TVMFFIAny.v_int64': 8,
    'TVMFFIObject.combined_ref_count': 0, 'TVMFFIObject.type_index': 8, 'TVMFFIObject.deleter': 16,
    'TVMFFIByteArray.data': 0, 'TVMFFIByteArray.size': 4,
    'TVMFFIErrorCell.kind': 0, 'TVMFFIErrorCell.message': 8, 'TVMFFIErrorCell.backtrace': 16,
    'TVMFFIErrorCell.update_backtrace': 24,
    'TVMFFIFunctionCell.safe_call': 0, 'TVMFFIShapeCell.data': 0, 'TVMFFIShapeCell.size': 4,
    'TVMFFISeqCell.data': 0, 'TVMFFISeqCell.size': 8, 'TVMFFISeqCell.capacity': 16,
    'TVMFFIOpaqueObjectCell.handle': 0,
    'DLTensor.data': 0, 'DLTensor.device': 4, 'DLTensor.ndim': 12, 'DLTensor.dtype': 16, 'DLTensor.shape': 20,
    'DLTensor.strides': 24, 'DLTensor.byte_offset': 32,
    'DLDataType.code': 0, 'DLDataType.bits': 1, 'DLDataType.lanes': 2,
    'DLDevice.device_type': 0, 'DLDevice.device_id': 4,
    // MapObj / DenseMapObj (container/map.h): data, size, slots, then the
    // dense layout's insertion-order list head; blocks of 16 slot bytes and
    // 16 items (key, value, prev, next).
    'wf_map_obj.data': 24, 'wf_map_obj.size': 32, 'wf_map_obj.slots': 40, 'wf_map_obj.iter_head': 56,
    'wf_map_entry.key': 0, 'wf_map_entry.value': 16, 'wf_map_item.next': 40, 'wf_map_block.item': 16,
    'TVMFFITypeInfo.type_index': 0, 'TVMFFITypeInfo.type_depth': 4, 'TVMFFITypeInfo.type_key': 8,
    'TVMFFITypeInfo.type_ancestors': 16, 'TVMFFITypeInfo.type_key_hash': 24, 'TVMFFITypeInfo.num_fields': 32,
    'TVMFFITypeInfo.num_methods': 36, 'TVMFFITypeInfo.fields': 40, 'TVMFFITypeInfo.methods': 44,
    'TVMFFITypeInfo.metadata': 48,
    'TVMFFIFieldInfo.name': 0, 'TVMFFIFieldInfo.doc': 8, 'TVMFFIFieldInfo.metadata': 16, 'TVMFFIFieldInfo.flags': 24,
    'TVMFFIFieldInfo.size': 32, 'TVMFFIFieldInfo.alignment': 40, 'TVMFFIFieldInfo.offset': 48,
    'TVMFFIFieldInfo.getter': 56, 'TVMFFIFieldInfo.setter': 60, 'TVMFFIFieldInfo.default_value_or_factory': 64,
    'TVMFFIFieldInfo.field_static_type_index': 80,
    'TVMFFIMethodInfo.name': 0, 'TVMFFIMethodInfo.doc': 8, 'TVMFFIMethodInfo.metadata': 16,
    'TVMFFIMethodInfo.flags': 24, 'TVMFFIMethodInfo.method': 32,
    'TVMFFITypeMetadata.doc': 0, 'TVMFFITypeMetadata.creator': 8, 'TVMFFITypeMetadata.total_size': 12,
    'TVMFFITypeMetadata.structural_eq_hash_kind': 16,
  },
  deleter_flags: { strong: 1, weak: 2, both: 3 },
  field_flags: { writable: 1, has_default: 2, is_static_method: 4 },
  device_type: {
    cpu: 1, cuda: 2, cuda_host: 3, opencl: 4, vulkan: 7, metal: 8, vpi: 9, rocm: 10, rocm_host: 11,
    ext_dev: 12, cuda_managed: 13, oneapi: 14, webgpu: 15, hexagon: 16,
  },
};

const POD_TYPES = {
  None: 0, int: 1, bool: 2, float: 3, 'void*': 4, DataType: 5, Device: 6, 'DLTensor*': 7, 'const char*': 8,
  'TVMFFIByteArray*': 9, ObjectRValueRef: 10, 'ffi.SmallStr': 11, 'ffi.SmallBytes': 12,
};
/** Object types every 0.1.x core registers, at their static indices. */
const STATIC_TYPES = {
  'ffi.Object': 64, 'ffi.String': 65, 'ffi.Bytes': 66, 'ffi.Error': 67, 'ffi.Function': 68, 'ffi.Shape': 69,
  'ffi.Tensor': 70, 'ffi.Array': 71, 'ffi.Map': 72, 'ffi.Module': 73, 'ffi.OpaquePyObject': 74,
};
/** Types later 0.1.x releases added: looked up, present or not. */
const LATER_TYPES = ['ffi.List', 'ffi.Dict'];

/**
 * The C stack was unwound by abort() -> proc_exit: a C++ throw nothing could
 * catch. A RuntimeError of webffi's: where no entry catches it (the
 * library's start function runs at instantiation) it is the error load()
 * rejects with.
 */
class LibraryAbort extends RuntimeError {
  constructor(code, printed, starting) {
    super(`webffi: the tvm-ffi library ${starting ? 'failed to initialise: it ' : ''}called exit(${code})` +
      (printed ? `; it printed: ${printed.slice(0, 4096).trim()}` : ''));
    this.code = code;
  }
}

// Errors C keeps made from JS values: the map holds a reference to each, so
// an address cannot be reused while it is listed; entries nobody else holds
// are dropped when errors are made, and the list is bounded.
const MAX_JS_ERRORS = 64;

const HEADER = 'Traceback (most recent call last):\n';
const FATAL = '[FATAL] ';
/** The most of one printed error block kept (its kind and frames come first). */
const BLOCK_LIMIT = 16 << 20;
/** The most frames kept from one printed traceback. */
const MAX_FRAMES = 256;

/** Where the first error block in `text` starts (a header at a line start), or -1. */
function firstBlock(text) {
  let best = -1;
  for (const mark of [HEADER, FATAL]) {
    let i = text.indexOf(mark);
    while (i > 0 && text.charCodeAt(i - 1) !== 10) i = text.indexOf(mark, i + 1);
    if (i >= 0 && (best < 0 || i < best)) best = i;
  }
  return best;
}

/**
 * text from `from` without the `n` newlines the library printed after the
 * message (the message's own are kept; no regexp: one is quadratic on runs
 * of newlines).
 */
function trimmedTail(text, from, n) {
  let end = text.length;
  while (n-- > 0 && end > from && text.charCodeAt(end - 1) === 10) end--;
  return text.slice(from, end);
}

/** A kind written at text[at] (`ValueError: `, at most 128 characters): its name and length with ': ', or null. */
function kindAt(text, at, end) {
  const re = /([A-Z][A-Za-z0-9_]{0,121}Error): /y;
  re.lastIndex = at;
  const m = re.exec(text);
  return m && at + m[0].length <= end ? { name: m[1], length: m[0].length } : null;
}

/**
 * The kind of a `[FATAL] FILE:LINE: MESSAGE` block, read as TVM's own
 * error normaliser reads it: `{Kind: }{Check failed: CONDITION: }{Kind: }
 * MESSAGE`, the kind a failed check's message names winning over ICHECK's
 * `InternalError`; with none named, InternalError. `skip` is where the
 * message goes on after the kinds, `check` the check's text kept before it.
 */
function fatalKind(text, at, lineEnd) {
  const lead = kindAt(text, at, lineEnd);
  const pos = at + (lead ? lead.length : 0);
  if (text.startsWith('Check failed:', pos)) {
    const colon = text.indexOf(':', pos + 13);
    if (colon >= 0 && colon < lineEnd) {
      let after = colon + 1;
      while (text.charCodeAt(after) === 32) after++;
      const named = kindAt(text, after, lineEnd);
      if (named) return { kind: named.name, skip: after + named.length - at, check: `${text.slice(pos, colon + 1)} ` };
    }
  }
  return lead ? { kind: lead.name, skip: lead.length, check: '' } : { kind: 'InternalError', skip: 0, check: '' };
}

/**
 * The kind, message and backtrace of the error block the library printed
 * (as upstream prints an error before throwing it: `Traceback (most recent
 * call last):`, frames oldest first, `KIND: MESSAGE` to the end; or TVM's
 * `[FATAL] FILE:LINE: MESSAGE`, its kind as fatalKind reads it), read from
 * `from` (by default the first block in `text`). The kind and the frames come from before the message:
 * text a caller passed, which the message may quote, can neither choose the
 * kind nor add frames. Linear in the text's length.
 */
export function parseLibraryError(text, from = firstBlock(text)) {
  if (from < 0) return null;
  if (text.startsWith(HEADER, from)) {
    const frames = [];
    let i = from + HEADER.length;
    while (i < text.length) {
      let end = text.indexOf('\n', i);
      if (end < 0) end = text.length;
      if (text.startsWith('  File "', i)) {
        if (frames.length < MAX_FRAMES) frames.push(text.slice(i, end));
      } else if (!text.startsWith('    ', i)) {
        break; // a frame's source line is indented further
      }
      i = end + 1;
    }
    const rest = trimmedTail(text, Math.min(i, text.length), 1); // upstream ends the block with one
    const lineEnd = rest.indexOf('\n');
    const colon = rest.indexOf(': ');
    const named = colon > 0 && colon <= 128 && (lineEnd < 0 || colon < lineEnd) && /^[A-Za-z_][\w.]*$/.test(rest.slice(0, colon));
    const kind = named ? rest.slice(0, colon) : 'RuntimeError';
    const message = named ? rest.slice(colon + 2) : rest;
    return { kind, message, backtrace: frames.reverse().map((f) => `${f}\n`).join('') };
  }
  if (text.startsWith(FATAL, from)) {
    let lineEnd = text.indexOf('\n', from);
    if (lineEnd < 0) lineEnd = text.length;
    const head = /^(.*?):(\d+): /.exec(text.slice(from + FATAL.length, lineEnd));
    if (head) {
      const at = from + FATAL.length + head[0].length;
      const { kind, skip, check } = fatalKind(text, at, lineEnd);
      const rest = trimmedTail(text, at + skip, 2); // TVM's LOG(FATAL) ends with two
      return {
        kind,
        message: check ? check + rest : rest,
        backtrace: `  File "${head[1]}", line ${head[2]}, in <unknown>\n`,
      };
    }
  }
  return null;
}

/**
 * @param {object} host { logger, hooks: { callJS, releaseJS } filled once the runtime exists }
 * @returns {{ imports: object, attach(instance): object }}
 */
export function tvmLibraryCore({ logger, hooks }) {
  let stderr = ''; // what the library printed to stderr during the current entry
  let block = -1; // where in stderr the library's latest error block starts (-1: none)
  let dropped = 0; // bytes of that block past BLOCK_LIMIT, not kept
  let depth = 0; // entries in progress
  let started = false; // _initialize has returned
  const flushStderr = () => {
    block = -1;
    dropped = 0;
    if (!stderr) return;
    const text = stderr.replace(/\n$/, '');
    stderr = '';
    try {
      (logger.warn ?? logger.log)?.call(logger, text);
    } catch {
      // the output is lost, the instance is not
    }
  };
  const wasi = createWasi({
    write(fd, text) {
      if (fd === 2) {
        // The library prints an error block in one write just before it
        // throws (TVM's [FATAL] in several, the first "[FATAL] "): what was
        // printed before it is output, logged now; the block is kept whole
        // up to BLOCK_LIMIT, whatever its size, for the error it becomes.
        if (depth > 0 && (text.startsWith(HEADER) || text.startsWith(FATAL))) {
          flushStderr();
          block = 0;
        }
        if (block >= 0) {
          const room = BLOCK_LIMIT - stderr.length;
          if (text.length > room) dropped += text.length - Math.max(room, 0);
          if (room > 0) stderr += text.length > room ? text.slice(0, room) : text;
          return;
        }
        stderr += text;
        if (depth === 0 || stderr.length > 1 << 20) flushStderr();
        return;
      }
      try {
        logger.log?.call(logger, text.replace(/\n$/, ''));
      } catch {
        // as above
      }
    },
  });
  const base = wasi.imports;
  const wasiImports = new Proxy({
    proc_exit(code) {
      throw new LibraryAbort(code, stderr, !started);
    },
  }, { get: (target, name) => target[name] ?? base[name] });
  // The Functions made for JS handles, both ways: the deleter names the
  // handle, a Function read back from C names its address.
  const handleOfObject = new Map();
  const objectOfHandle = new Map();
  const imports = {
    wasi_snapshot_preview1: wasiImports,
    env: {
      TVMFFIWasmSafeCall: (self, args, n, result) => hooks.callJS(self, args, n, result),
      TVMFFIWasmFunctionDeleter(self) {
        handleOfObject.delete(objectOfHandle.get(self));
        objectOfHandle.delete(self);
        hooks.releaseJS(self);
      },
      // a peer's request may not grow memory past the peer budget (js/core/peer_guard.js)
      emscripten_notify_memory_growth: () => hooks.memoryGrew?.(),
      // TVM's thread pool: wasm runs one thread.
      _ZN3tvm7runtime9threading15ResetThreadPoolEv() {},
      _ZN3tvm7runtime9threading10NumThreadsEv: () => 1,
    },
  };

  return {
    imports,
    attach(instance) {
      const x = instance.exports;
      const memory = x.memory;
      wasi.setMemory(memory);
      const { stackSave, stackRestore } = x;
      let pending = null; // the abort that ended the innermost entry, until moveFromRaised takes it
      let raisedSeq = 0; // counts errors JS raised into C
      let lastRaised = 0; // the last of them (held by jsErrors)

      /** What an abort leaves for moveFromRaised: the entry's printed text and where its error block is. */
      const abortOf = (seq) => {
        const abort = { text: stderr, block, dropped, jsRaised: raisedSeq !== seq ? lastRaised : 0 };
        stderr = '';
        block = -1;
        dropped = 0;
        return abort;
      };
      /**
       * Runs a core call as an entry: the C stack pointer restored however
       * it ends. `raises`: its failure (onAbort) is a -1 the runtime answers
       * with moveFromRaised, which takes the abort; an entry whose failure
       * is a null pointer (allocation, type info) leaves nothing pending,
       * or the next error raised would come out as this stale one.
       */
      const enter = (f, onAbort, raises = true) => function coreEntry(...args) {
        const sp = stackSave();
        const seq = raisedSeq;
        depth++;
        try {
          return f(...args);
        } catch (e) {
          stackRestore(sp);
          if (!(e instanceof LibraryAbort)) throw e;
          const abort = abortOf(seq);
          if (raises) {
            pending = abort;
          } else if (abort.text) {
            stderr = abort.text; // logged as the library's output
          }
          return onAbort;
        } finally {
          if (--depth === 0) flushStderr();
        }
      };
      try {
        enter(() => x._initialize?.())();
      } catch (e) {
        // a trap in _initialize: the library cannot run, and says why
        throw new RuntimeError(`webffi: the tvm-ffi library failed to initialise: it trapped (${e?.message ?? e})`, { cause: e });
      } finally {
        flushStderr();
      }
      if (pending) throw new RuntimeError(`webffi: the tvm-ffi library failed to initialise: ${pending.text.slice(0, 4096) || 'it aborted'}`);
      started = true;
      if (typeof x.TVMFFIGetVersion !== 'function') {
        const old = ['TVMFFIObjectFree', 'TVMFFINDArrayCreateView'].filter((n) => typeof x[n] === 'function');
        throw new RuntimeError('webffi: the library carries a tvm-ffi from before 0.1 (it has no TVMFFIGetVersion' +
          (old.length ? `, and exports ${old.join(', ')}` : '') + '); webffi drives tvm-ffi 0.1.x libraries: ' +
          'web-llm model libraries from web-llm-models/v0_2_80 on');
      }

      const u8 = () => new Uint8Array(memory.buffer);
      const dv = () => new DataView(memory.buffer);
      const functionCall = x.TVMFFIFunctionCall;
      const entryCall = function tvmFunctionCall(fn, argv, n, result) {
        const sp = stackSave();
        const seq = raisedSeq;
        depth++;
        try {
          return functionCall(fn, argv, n, result);
        } catch (e) {
          stackRestore(sp);
          if (!(e instanceof LibraryAbort)) throw e;
          pending = abortOf(seq);
          return -1;
        } finally {
          if (--depth === 0) flushStderr();
        }
      };
      const alloc = enter(x.TVMWasmAllocSpace, 0, false);
      const functionCreate = enter(x.TVMFFIWasmFunctionCreate, -1);
      /** A Function the library makes for JS handle h, its address written at outPtr. */
      function functionFromJS(h, outPtr) {
        const rc = functionCreate(h, outPtr);
        if (rc === 0) {
          const obj = dv().getUint32(outPtr, true);
          handleOfObject.set(obj, h);
          objectOfHandle.set(h, obj);
        }
        return rc;
      }
      const free = x.TVMWasmFreeSpace;

      /** A TVMFFIByteArray of text in memory it allocates (freed by the returned function). */
      function byteArray(text) {
        const bytes = new TextEncoder().encode(text);
        const p = alloc(8 + bytes.length + 1);
        if (!p) return [0, () => {}];
        u8().set(bytes, p + 8);
        u8()[p + 8 + bytes.length] = 0;
        dv().setUint32(p, p + 8, true);
        dv().setUint32(p + 4, bytes.length, true);
        return [p, () => free(p)];
      }

      // ---- the ABI metadata
      const version = alloc(16);
      x.TVMFFIGetVersion(version);
      const tvmFfiVersion = [0, 4, 8].map((o) => dv().getUint32(version + o, true));
      free(version);
      if (tvmFfiVersion[0] !== 0 || tvmFfiVersion[1] !== 1) {
        throw new RuntimeError(`webffi: the library carries tvm-ffi ${tvmFfiVersion.join('.')}; webffi drives tvm-ffi 0.1.x libraries`);
      }
      const typeIndex = { ...POD_TYPES, ...STATIC_TYPES, 'ffi.StaticObjectBegin': 64, 'ffi.DynObjectBegin': 128 };
      const keyToIndex = enter(x.TVMFFITypeKeyToIndex, -1);
      const out = alloc(8);
      for (const key of LATER_TYPES) {
        const [ba, release] = byteArray(key);
        if (keyToIndex(ba, out) === 0) typeIndex[key] = dv().getInt32(out, true);
        release();
      }
      pending = null; // a missing key is an error the library printed: not the caller's
      stderr = '';
      free(out);
      const meta = {
        metadata_version: 1, tvm_ffi_version: tvmFfiVersion, pointer_size: 4,
        type_index: typeIndex, ...LAYOUT,
      };

      // ---- errors made from JS values
      const jsErrors = new Map(); // ffi.Error address -> opaque JS value (both referenced)
      const refCount = (obj) => dv().getUint32(obj, true);
      function dropUnheldErrors() {
        for (const [err, extra] of jsErrors) {
          if (refCount(err) === 1 || jsErrors.size > MAX_JS_ERRORS) {
            jsErrors.delete(err);
            x.TVMFFIObjectDecRef(extra);
            x.TVMFFIObjectDecRef(err);
          }
        }
      }
      const errorCreate = enter(x.TVMFFIErrorCreate, -1);

      /** Makes the error of an abort: the one JS raised, or one from what the library printed. */
      function abortError(abort, outPtr) {
        const printed = parseLibraryError(abort.text, abort.block >= 0 ? abort.block : undefined);
        if (abort.jsRaised && !printed) {
          x.TVMFFIObjectIncRef(abort.jsRaised);
          dv().setUint32(outPtr, abort.jsRaised, true);
          return;
        }
        const parsed = printed ?? {
          kind: 'RuntimeError',
          message: 'the library threw a C++ exception without printing it (it is built without exception ' +
            'catching: the exception ended the call)' + (abort.text ? `; it printed: ${abort.text.slice(0, 65536).trim()}` : ''),
          backtrace: '',
        };
        if (printed && abort.dropped) parsed.message += ` [... ${abort.dropped} more characters printed, not kept]`;
        const parts = [parsed.kind, parsed.message, parsed.backtrace].map(byteArray);
        const rc = errorCreate(parts[0][0], parts[1][0], parts[2][0], outPtr);
        for (const [, release] of parts) release();
        if (rc !== 0) dv().setUint32(outPtr, 0, true);
      }

      return {
        kind: TVM_FFI_LIBRARY,
        exports: x,
        /** The exports each run as an entry (for the runtime's cold paths). */
        entries: Object.fromEntries(Object.entries(x).map(([name, f]) =>
          [name, typeof f === 'function' ? (name === 'TVMFFIGetTypeInfo' ? enter(f, 0, false) : enter(f, -1)) : f])),
        meta,
        heapAlloc: alloc,
        heapFree: free,
        functionCall: entryCall,
        callWords: null,
        functionFromJS,
        /** A JS value held by C: a Function the library made, whose deleter releases the handle. */
        opaqueFromJS: functionFromJS,
        opaqueTypeIndex: STATIC_TYPES['ffi.Function'],
        /** The handle of a Function made for a JS value (0: another Function). */
        opaqueHandle: (obj) => handleOfObject.get(obj) ?? 0,
        moveFromRaised(outPtr) {
          if (pending) {
            const abort = pending;
            pending = null;
            abortError(abort, outPtr);
            return 0;
          }
          x.TVMFFIErrorMoveFromRaised(outPtr);
          return 0;
        },
        /** 0.1.x errors have no cause chain: the cause is not kept. */
        errorCreate(kind, message, backtrace, cause, extra, outPtr) {
          const rc = errorCreate(kind, message, backtrace, outPtr);
          if (rc !== 0 || !extra) return rc;
          const err = dv().getUint32(outPtr, true);
          dropUnheldErrors();
          x.TVMFFIObjectIncRef(err);
          x.TVMFFIObjectIncRef(extra);
          jsErrors.set(err, extra);
          return 0;
        },
        errorExtra: (err) => jsErrors.get(err) ?? 0,
        errorSetRaised(err) {
          if (jsErrors.has(err)) {
            raisedSeq++;
            lastRaised = err;
          }
          x.TVMFFIErrorSetRaised(err);
        },
        modules: false,
      };
    },
  };
}

/**
 * The globals TVM's web glue looks up when the system library loads
 * (its WebGPU module asks for `wasm.WebGPUCreateShader` at creation), so a
 * library loads, and its CPU functions and metadata work, without a WebGPU
 * backend; using the device then says what is missing. A WebGPU backend
 * registers the real ones over these.
 */
export function registerDeviceFallbacks(runtime) {
  const missing = (what) => () => {
    throw new RuntimeError(what);
  };
  const text = 'this library runs kernels on WebGPU, and no WebGPU backend is registered: ' +
    'load({ backends: [...] }) or let load() discover one (in Node: npm webgpu)';
  runtime.registerGlobal('wasm.WebGPUCreateShader', missing(text));
  runtime.registerGlobal('wasm.WebGPUDeviceAPI', missing(text));
}
