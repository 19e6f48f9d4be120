// The imports the C core expects from its host under module "webffi"
// (declared in src/wasm/host_imports.h), plus Emscripten's growth notice.
import { currentWasmBacktrace, makeRaiseCapture, takeCapture, capturedBacktrace } from './backtrace.js';

const encoder = new TextEncoder();

/** Writes as many whole lines of text as fit into memory[ptr, ptr + cap). */
function writeLines(memory, ptr, cap, text) {
  const target = new Uint8Array(memory.buffer, ptr, cap);
  // (a shared memory's views are refused by encodeInto in browsers)
  const bytes = target.buffer instanceof ArrayBuffer ? target : new Uint8Array(cap);
  const { read, written } = encoder.encodeInto(text, bytes);
  if (bytes !== target) target.set(bytes.subarray(0, written));
  if (read === text.length) return written;
  const lastNewline = bytes.subarray(0, written).lastIndexOf(10);
  return lastNewline + 1;
}

const noCallbacks = () => {
  throw new Error('this instance was loaded without JS callback support');
};

/**
 * @param {() => WebAssembly.Memory} getMemory the instance's memory, read
 *   at call time (it is not known before instantiation).
 * @param {{ callJS?: Function, releaseJS?: Function }} [callbacks] the
 *   runtime's handlers for `webffi.call_js` and `webffi.release_js`.
 * @param {{ on: boolean }} [backtraces] whether C frames are captured, read
 *   at call time (the runtime's setBacktraces switches it).
 */
export function createHostImports(getMemory, callbacks = {}, backtraces = { on: true }) {
  return {
    webffi: {
      backtrace(ptr, cap, skip) {
        return backtraces.on ? writeLines(getMemory(), ptr, cap, currentWasmBacktrace(skip)) : 0;
      },
      backtrace_capture: makeRaiseCapture(backtraces),
      backtrace_frames(token, ptr, cap) {
        const capture = takeCapture(token);
        return capture ? writeLines(getMemory(), ptr, cap, capturedBacktrace(capture)) : 0;
      },
      backtrace_drop: takeCapture,
      call_js: callbacks.callJS ?? noCallbacks,
      release_js: callbacks.releaseJS ?? (() => {}),
    },
    env: {
      // Emscripten reports growth; views are refreshed where they are used.
      emscripten_notify_memory_growth() {},
    },
  };
}
