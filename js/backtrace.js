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

/** Script name -> whether its frames are wasm (decided once per script). */
const wasmScripts = new Map();

/** [name, location] of a V8 CallSite that is a wasm frame, or null. */
function wasmCallSite(site) {
  // Chromium and Node name wasm scripts differently (Chromium uses the URL it
  // was fetched from); the text form of a frame is the same, so it decides,
  // once per script: formatting every JS frame would cost more than the rest.
  const file = site.getFileName?.() ?? '';
  let wasm = wasmScripts.get(file);
  if (wasm === false) return null;
  const text = String(site);
  if (wasm === undefined) {
    wasm = text.includes('wasm-function[');
    if (file) wasmScripts.set(file, wasm);
    if (!wasm) return null;
  }
  const open = text.indexOf(' (');
  return open > 0 && text.endsWith(')') ? [text.slice(0, open), text.slice(open + 2, -1)] : [text, text];
}

const collectSites = (_, sites) => sites;

/**
 * The current stack's frames, most recent first, as [true, name, location]
 * for wasm frames and [false] for JS frames. V8 hands over structured call sites, which
 * skips formatting the whole stack as text; other engines parse the text.
 */
export function captureFrames(limit = 64) {
  const savedLimit = Error.stackTraceLimit;
  const savedPrepare = Error.prepareStackTrace;
  let raw;
  try {
    Error.stackTraceLimit = limit;
    if (typeof Error.captureStackTrace === 'function') {
      Error.prepareStackTrace = collectSites;
      const holder = {};
      Error.captureStackTrace(holder, captureFrames);
      raw = holder.stack;
    } else {
      raw = new Error().stack;
    }
  } finally {
    Error.prepareStackTrace = savedPrepare;
    Error.stackTraceLimit = savedLimit;
  }
  const frames = [];
  if (Array.isArray(raw)) {
    for (const site of raw) {
      const w = wasmCallSite(site);
      frames.push(w ? [true, w[0], w[1]] : [false]);
    }
  } else {
    for (const line of String(raw ?? '').split('\n').slice(1)) {
      const w = wasmFrame(line);
      frames.push(w ? [true, w[0], w[1]] : [false]);
    }
  }
  return frames;
}

/** The current wasm frames in the `webffi.backtrace` import's format. */
export function currentWasmFramesText() {
  let out = '';
  for (const f of captureFrames()) if (f[0]) out += `${f[1]}\t${f[2]}\n`;
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
 * frames directly below the JS frames at the top of the current stack
 * (inside the host import), up to the next JS frame.
 */
export function crossedWasmFrames() {
  let out = '';
  let inWasm = false;
  for (const [wasm, name, location] of captureFrames()) {
    if (!wasm) {
      if (inWasm) break;
      continue;
    }
    inWasm = true;
    if (!RUNTIME_FRAME.test(name)) out += frameLine(location, 0, name);
  }
  return out;
}
