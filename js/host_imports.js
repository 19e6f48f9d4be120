// The imports the C core expects from its host under module "webffi"
// (declared in src/wasm/host_imports.h), plus Emscripten's growth notice.

const encoder = new TextEncoder();

// V8: "at NAME (URL:wasm-function[N]:0xOFF)" or "at URL:wasm-function[N]:0xOFF";
// Firefox and Safari: "NAME@URL:wasm-function[N]:0xOFF".
const V8_FRAME = /^\s*at (?:(.+?) \()?(\S*wasm-function\[\d+\]:0x[0-9a-f]+)\)?$/;
const GECKO_FRAME = /^(.*?)@(\S*wasm-function\[\d+\]:0x[0-9a-f]+)$/;

/**
 * The wasm frames of a JS stack, most recent first, as "FUNC\tLOCATION\n"
 * lines; frames without a name get their location as the name.
 */
export function wasmFramesText(stack) {
  let out = '';
  for (const line of String(stack).split('\n')) {
    const m = V8_FRAME.exec(line) ?? GECKO_FRAME.exec(line);
    if (m) out += `${m[1] || m[2]}\t${m[2]}\n`;
  }
  return out;
}

/** Writes as many whole lines of text as fit into memory[ptr, ptr + cap). */
function writeLines(memory, ptr, cap, text) {
  const bytes = new Uint8Array(memory.buffer, ptr, cap);
  const { read, written } = encoder.encodeInto(text, bytes);
  if (read === text.length) return written;
  const lastNewline = bytes.subarray(0, written).lastIndexOf(10);
  return lastNewline + 1;
}

/**
 * @param {() => WebAssembly.Memory} getMemory the instance's memory, read
 *   at call time (it is not known before instantiation).
 */
export function createHostImports(getMemory) {
  return {
    webffi: {
      backtrace(ptr, cap) {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 64;
        const stack = new Error().stack;
        Error.stackTraceLimit = limit;
        return writeLines(getMemory(), ptr, cap, wasmFramesText(stack));
      },
    },
    env: {
      // Emscripten reports growth; views are refreshed where they are used.
      emscripten_notify_memory_growth() {},
    },
  };
}
