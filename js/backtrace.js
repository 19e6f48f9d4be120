// Stack text from JS engines, turned into the ABI's backtrace lines
// (`  File "FILE", line N, in FUNC\n`, most recent call first).

// V8: "at NAME (URL:wasm-function[N]:0xOFF)" or "at URL:wasm-function[N]:0xOFF";
// Firefox and Safari: "NAME@URL:wasm-function[N]:0xOFF".
const V8_WASM = /^\s*at (?:(.+?) \()?(\S*wasm-function\[\d+\]:0x[0-9a-f]+)\)?$/;
const GECKO_WASM = /^(.*?)@(\S*wasm-function\[\d+\]:0x[0-9a-f]+)$/;
// V8: "at NAME (URL:LINE:COL)" or "at URL:LINE:COL"; Gecko: "NAME@URL:LINE:COL".
const V8_JS = /^\s*at (?:(.+?) \()?(.*?):(\d+):\d+\)?$/;
const GECKO_JS = /^(.*?)@(.*?):(\d+):\d+$/;

const RUNTIME_FRAME = /^(wf_|TVMFFI|WebFFI)/;

/** A wasm frame of one stack line as [name, location], or null. */
function wasmFrame(line) {
  const m = V8_WASM.exec(line) ?? GECKO_WASM.exec(line);
  return m ? [m[1] || m[2], m[2]] : null;
}

/**
 * The wasm frames of a JS stack, most recent first, as "FUNC\tLOCATION\n"
 * lines (the `webffi.backtrace` import's format); unnamed frames get their
 * location as the name.
 */
export function wasmFramesText(stack) {
  let out = '';
  for (const line of String(stack).split('\n')) {
    const f = wasmFrame(line);
    if (f) out += `${f[0]}\t${f[1]}\n`;
  }
  return out;
}

const frameLine = (file, line, func) => `  File "${file}", line ${line}, in ${func}\n`;

// The glue's own JS frames (named webffiCall, webffiCallJS, ...) are left out.
const GLUE_FRAME = /(^|\.)webffi[A-Z]\w*( \[as \w+\])?$/;

/**
 * A JS stack (Error.prototype.stack) as ABI backtrace lines. When the stack
 * was taken inside C (it has wasm frames), it ends at the outermost C frame:
 * what lies below is the caller's, outside the FFI. `complete` says so.
 */
export function jsStackToBacktrace(stack) {
  let out = '';
  let end = 0;
  for (const line of String(stack ?? '').split('\n')) {
    const w = wasmFrame(line);
    if (w) {
      if (!RUNTIME_FRAME.test(w[0])) out += frameLine(w[1], 0, w[0]);
      end = out.length;
      continue;
    }
    const m = V8_JS.exec(line) ?? GECKO_JS.exec(line);
    if (m && !GLUE_FRAME.test(m[1] ?? '')) out += frameLine(m[2], m[3], m[1] || '<anonymous>');
  }
  return end ? { text: out.slice(0, end), complete: true } : { text: out, complete: false };
}

/**
 * The C frames an error crosses on its way out of a callback: the wasm
 * frames directly below the JS frames at the top of `stack` (taken inside the
 * host import), up to the next JS frame.
 */
export function crossedWasmFrames(stack) {
  let out = '';
  let inWasm = false;
  for (const line of String(stack).split('\n').slice(1)) {
    const w = wasmFrame(line);
    if (!w) {
      if (inWasm) break;
      continue;
    }
    inWasm = true;
    if (!RUNTIME_FRAME.test(w[0])) out += frameLine(w[1], 0, w[0]);
  }
  return out;
}
