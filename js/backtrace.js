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

/** Script name -> whether its frames are wasm (decided once per script). */
const wasmScripts = new Map();
/** Wasm script name -> code offset -> [name, location]: formatting a frame costs more than a lookup. */
const wasmSiteTexts = new Map();

/** [name, location] of a V8 CallSite that is a wasm frame, or null. */
function wasmCallSite(site) {
  // Chromium and Node name wasm scripts differently (Chromium uses the URL it
  // was fetched from); the text form of a frame is the same, so it decides,
  // once per script: formatting every JS frame would cost more than the rest.
  const file = site.getFileName?.() ?? '';
  if (!file) return null; // eval'd or native JS: V8 names every wasm script
  let wasm = wasmScripts.get(file);
  if (wasm === false) return null;
  const position = site.getPosition?.();
  let texts = wasmSiteTexts.get(file);
  let known = texts?.get(position);
  if (known !== undefined) return known;
  const text = String(site);
  if (wasm === undefined) {
    wasm = text.includes('wasm-function[');
    wasmScripts.set(file, wasm);
    if (!wasm) return null;
  }
  const open = text.indexOf(' (');
  known = open > 0 && text.endsWith(')') ? [text.slice(0, open), text.slice(open + 2, -1)] : [text, text];
  if (position !== undefined) {
    if (!texts) wasmSiteTexts.set(file, (texts = new Map()));
    texts.set(position, known);
  }
  return known;
}

const collectSites = (_, sites) => sites;

/**
 * The current stack's frames below the caller of `above`, most recent first,
 * at most `limit`: V8 CallSites when the engine has them (structured: no
 * text is formatted), otherwise the engine's stack text.
 */
function captureStack(limit, above) {
  const savedLimit = Error.stackTraceLimit;
  const savedPrepare = Error.prepareStackTrace;
  try {
    Error.stackTraceLimit = limit;
    if (typeof Error.captureStackTrace === 'function') {
      Error.prepareStackTrace = collectSites;
      const holder = {};
      Error.captureStackTrace(holder, above);
      return holder.stack;
    }
    return new Error().stack;
  } finally {
    Error.prepareStackTrace = savedPrepare;
    Error.stackTraceLimit = savedLimit;
  }
}

/**
 * The current stack's frames, most recent first, as [true, name, location]
 * for wasm frames and [false] for JS frames. V8 hands over structured call sites, which
 * skips formatting the whole stack as text; other engines parse the text.
 */
function captureFrames(limit = 64) {
  return framesOf(captureStack(limit, captureFrames));
}

function framesOf(raw) {
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

/**
 * Frames first captured for the `webffi.backtrace` import: the import's own
 * and up to six of C. Each wasm frame costs V8 about half a microsecond to
 * capture, several times a JS frame, so the capture stops early.
 */
const SEGMENT_LIMIT = 8;

/**
 * The `webffi.backtrace` import's text: the wasm frames from the top of the
 * stack down to the first JS frame below them, i.e. the C that is running
 * now. Frames further down belong to outer calls, which add their own when
 * an error crosses them (crossedWasmFrames).
 */
export function currentWasmFramesText() {
  let segment = segmentText(framesOf(captureStack(SEGMENT_LIMIT, currentWasmFramesText)), SEGMENT_LIMIT);
  // Deep C: the segment goes on below what was captured.
  if (segment === null) segment = segmentText(framesOf(captureStack(64, currentWasmFramesText)), Infinity);
  return segment;
}

/** The first run of wasm frames as import text; null when it may go on past `limit` frames. */
function segmentText(frames, limit) {
  let text = '';
  for (const [wasm, name, location] of frames) {
    if (!wasm) {
      if (text) return text;
      continue;
    }
    text += `${name}\t${location}\n`;
  }
  return frames.length < limit ? text : null;
}

// ------------------------------------------------- deferred captures
// An error raised in C is mostly caught and dropped unread. Its stack is
// captured once, at the raise, and formatted (most of a capture's cost) only
// when read: as its ABI backtrace (the C frames at the top) and as the JS
// error's `stack` (the JS frames below them, from the user's call on).

/**
 * Frames a capture keeps: up to 16 of C and the glue above the user's call,
 * then as many of the user's as an error shows (Error.stackTraceLimit, 10 by
 * default), at most 64 in all. V8 spends most of an error's time on its
 * stack, per frame walked, so frames no error shows are not walked.
 */
function captureLimit() {
  const shown = Error.stackTraceLimit;
  return typeof shown === 'number' && shown >= 0 ? Math.min(64, 16 + shown) : 16;
}

/** A stack captured now, formatting deferred: a V8 holder, else the text. */
function deferredCapture(above) {
  const savedLimit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = captureLimit();
    if (typeof Error.captureStackTrace === 'function') {
      const holder = {};
      Error.captureStackTrace(holder, above);
      return holder;
    }
    return { text: new Error().stack };
  } finally {
    Error.stackTraceLimit = savedLimit;
  }
}

/** A capture's CallSites (V8, formatted once) or stack text. */
function captureRaw(capture) {
  if (capture.text !== undefined) return capture.text;
  const savedPrepare = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = collectSites; // V8 formats on first read, here
    return capture.stack;
  } finally {
    Error.prepareStackTrace = savedPrepare;
  }
}

/** Captures not yet formatted or dropped, by token (shared by every instance). */
const captures = new Map();
let lastToken = 0;

/**
 * The `webffi.backtrace_capture` import of one instance (see host_imports.h):
 * a token for a capture of the current stack, or -1 (no capture, no C
 * frames) while `settings.on` is false.
 */
export function makeRaiseCapture(settings) {
  return function captureForRaise() {
    if (!settings.on) return -1;
    lastToken = lastToken === 0x7fffffff ? 1 : lastToken + 1;
    captures.set(lastToken, deferredCapture(captureForRaise));
    return lastToken;
  };
}

/** Hands over the capture of `token` and forgets it (null for an unknown token). */
export function takeCapture(token) {
  const capture = captures.get(token);
  if (capture === undefined) return null;
  captures.delete(token);
  return capture;
}

/** The `webffi.backtrace_frames` import's text: what `webffi.backtrace` gave at the capture. */
export function capturedWasmFramesText(capture) {
  return segmentText(framesOf(captureRaw(capture)), Infinity);
}

/** A capture's C frames as ABI backtrace text (as the C core formats them). */
export function capturedBacktrace(capture) {
  let out = '';
  for (const line of capturedWasmFramesText(capture).split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0 && !RUNTIME_FRAME.test(line)) out += frameLine(line.slice(tab + 1), 0, line.slice(0, tab));
  }
  return out;
}

/**
 * A JS stack for an error raised in the captured C call: `header`, then the
 * JS frames below the C frames and the glue's, at most `limit`.
 */
export function capturedStack(capture, header, limit) {
  const raw = captureRaw(capture);
  // [is a wasm frame, the frame's line as V8 formats it]
  const frames = Array.isArray(raw)
    ? raw.map((site) => [wasmCallSite(site) !== null, `    at ${site}`])
    : String(raw).split('\n').slice(1).map((line) => [wasmFrame(line) !== null, line]);
  let i = frames.findIndex(([wasm]) => wasm); // the first C frame
  if (i < 0) i = 0;
  // The C frames of this call and the glue's below them; from the user's
  // frame on, every frame as an eager capture shows it (outer C calls too).
  while (i < frames.length && (frames[i][0] || GLUE_LINE.test(frames[i][1]))) i++;
  return [header, ...frames.slice(i, i + limit).map(([, line]) => line)].join('\n');
}

const frameLine = (file, line, func) => `  File "${file}", line ${line}, in ${func}\n`;

// The glue's own JS frames (named webffiCall, webffiCallJS, ...) are left out.
const GLUE_FRAME = /(^|\.)webffi[A-Z]\w*( \[as \w+\])?$/;
/** A stack line of one of the glue's frames (V8 or Gecko form). */
const GLUE_LINE = /^(\s*at )?([\w$.]*\.)?webffi[A-Z]\w*( \[as \w+\])?( \(|@)/;

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
