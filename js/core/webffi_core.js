// webffi's own core (webffi.wasm) behind the core seam: the operations the
// runtime needs from a core are its exports as they are, and its ABI
// metadata is read from the core itself.
import { createHostImports } from '../host_imports.js';
import { threadEnv } from '../threads/env_imports.js';
import { RuntimeError } from '../errors.js';
import { WEBFFI_CORE } from './detect.js';

/** The ABI metadata versions and layout facts this JS understands. */
const SUPPORTED = { metadata_version: 1, tvm_ffi_major: 0, tvm_ffi_minor: 1, pointer_size: 4, any_size: 16 };
/** The Any layout the hot paths index as 32-bit words (type, small length, payload). */
const ANY_FIELDS = { 'TVMFFIAny.type_index': 0, 'TVMFFIAny.small_str_len': 4, 'TVMFFIAny.v_int64': 8 };

function readMetadata(x) {
  const ptr = x.WebFFIGetABIMetadata();
  let meta;
  try {
    const bytes = new Uint8Array(x.memory.buffer);
    meta = JSON.parse(new TextDecoder().decode(bytes.slice(ptr, bytes.indexOf(0, ptr))));
  } catch (e) {
    throw new RuntimeError(`webffi: incompatible wasm: unreadable ABI metadata (${e.message})`);
  }
  const problems = [];
  if (meta.metadata_version !== SUPPORTED.metadata_version) {
    problems.push(`ABI metadata version ${meta.metadata_version}, expected ${SUPPORTED.metadata_version}`);
  }
  const [major, minor] = meta.tvm_ffi_version ?? [];
  if (major !== SUPPORTED.tvm_ffi_major || minor !== SUPPORTED.tvm_ffi_minor) {
    problems.push(`tvm-ffi ABI ${meta.tvm_ffi_version?.join('.')}, expected ${SUPPORTED.tvm_ffi_major}.${SUPPORTED.tvm_ffi_minor}.x`);
  }
  if (meta.pointer_size !== SUPPORTED.pointer_size) problems.push(`pointer size ${meta.pointer_size}`);
  if (meta.sizeof?.TVMFFIAny !== SUPPORTED.any_size) problems.push(`TVMFFIAny size ${meta.sizeof?.TVMFFIAny}`);
  for (const [field, at] of Object.entries(ANY_FIELDS)) {
    if (meta.offsetof?.[field] !== at) problems.push(`${field} at offset ${meta.offsetof?.[field]}, expected ${at}`);
  }
  if (problems.length) throw new RuntimeError(`webffi: incompatible wasm: ${problems.join('; ')}`);
  return meta;
}

/**
 * @param {object} host { wasi, hooks: { callJS, releaseJS } filled once the
 *   runtime exists, backtraces: { on } }
 * @returns {{ imports: object, attach(instance): object }}
 */
export function webffiCore({ wasi, hooks, backtraces, threads = null }) {
  let memory = threads?.memory;
  let x = null;
  const imports = {
    wasi_snapshot_preview1: wasi.imports,
    ...createHostImports(() => memory, {
      callJS: function webffiCallJSHook(h, args, n, result) {
        return hooks.callJS(h, args, n, result);
      },
      releaseJS: (h) => hooks.releaseJS(h),
    }, backtraces),
  };
  if (threads) {
    // The threaded core (js/threads/): its shared memory and Emscripten's thread imports.
    // (workers instantiate modules loaded at run time; this thread loaded them: js/dylink.js)
    imports.webffi.replay_loads = () => 0;
    imports.env = threadEnv({
      memory,
      exports: () => x,
      createThread: threads.pool.createThread,
      threadDone: threads.pool.threadDone,
      exit: (code) => wasi.imports.proc_exit(code),
    });
  }
  return {
    imports,
    attach(instance) {
      x = threads ? { ...instance.exports, memory } : instance.exports;
      memory = x.memory;
      wasi.setMemory(memory);
      if (threads) {
        x.__wasm_call_ctors();
        if (x.WebFFIParallelStart(threads.count) !== 0) {
          throw new RuntimeError(`webffi: the thread pool did not start (${threads.count} threads)`);
        }
      } else {
        x._initialize?.();
      }
      const meta = readMetadata(x);
      return {
        kind: WEBFFI_CORE,
        exports: x,
        meta,
        heapAlloc: x.WebFFIHeapAlloc,
        heapFree: x.WebFFIHeapFree,
        functionCall: x.TVMFFIFunctionCall,
        /** The one-word-argument fast path (webffi.h). */
        callWords: x.WebFFIFunctionCallWords,
        functionFromJS: x.WebFFIFunctionFromJS,
        /** A JS value held by C: an ffi.OpaquePyObject whose cell holds its handle. */
        opaqueFromJS: x.WebFFIOpaqueFromJS,
        opaqueTypeIndex: meta.type_index['ffi.OpaquePyObject'],
        opaqueHandle: null, // read from the opaque object's cell
        /** Moves the raised error to *out; returns the token of its deferred capture (0: none). */
        moveFromRaised: x.WebFFIErrorMoveFromRaisedPending,
        /** An ffi.Error with its cause (an ffi.Error, or 0) and extra (an opaque JS value, or 0) as extra_context. */
        errorCreate: x.TVMFFIErrorCreateWithCauseAndExtraContext,
        errorExtra: null, // read from the error's extra_context
        errorSetRaised: x.TVMFFIErrorSetRaised,
        /** Tensors are allocated through the env allocator the core supplies. */
        tensorAlloc: null,
        modules: true,
        /** Threads a parallel launch uses (1: the single-threaded core). */
        threads: threads ? x.WebFFIParallelThreads() : 1,
        /** The shared memory's growth count (null: views notice growth by detaching). */
        growthCounter: threads ? x.WebFFIHeapGrowthCounter() : null,
        stopThreads: threads ? () => threads.pool.terminate() : null,
      };
    },
  };
}
