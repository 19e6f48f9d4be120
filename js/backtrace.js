// Stacks from JS engines as frames, and frames as text: the ABI's backtrace
// lines (`  File "FILE", line N, in FUNC\n`, most recent call first) and
// the lines of a JS error's `stack`. Wasm frames get file, line and
// function (inlined calls as frames of their own) from the line tables of
// js/symbols.js when the module has one; without one a frame keeps its
// wasm location and says it has no line.

import { sourceFrames } from './symbols.js';

// V8: "at NAME (URL:wasm-function[N]:0xOFF)" or "at URL:wasm-function[N]:0xOFF";
// Firefox and Safari: "NAME@URL:wasm-function[N]:0xOFF". NAME may hold " (" (C++).
const V8_WASM = /^\s*at (?:(.+?) \()?(\S*wasm-function\[\d+\]:0x[0-9a-f]+)\)?$/;
const GECKO_WASM = /^(.*?)@(\S*wasm-function\[\d+\]:0x[0-9a-f]+)$/;
const WASM_OFFSET = /:0x([0-9a-f]+)$/;
const DUPLICATE_SUFFIX = /\.\d+$/;
// V8: "at NAME (URL:LINE:COL)" or "at URL:LINE:COL"; Gecko: "NAME@URL:LINE:COL".
const V8_JS = /^\s*at (?:(.+?) \()?(.*?):(\d+):\d+\)?$/;
const GECKO_JS = /^(.*?)@(.*?):(\d+):\d+$/;

/** Frames of the runtime's own code, left out unless its line table is loaded. */
const RUNTIME_FRAME = /^(wf_|TVMFFI|WebFFI)/;
/**
 * Frames left out always: the machinery that raises and records errors
 * (not where the error is), the runtime's call plumbing between a caller
 * and the function it calls (upstream stops its backtraces there), and
 * upstream's C++ plumbing between a packed call and the typed function.
 */
const ERROR_MACHINERY = new RegExp('^(wf_err_|wf_bt_|TVMFFIError|TVMFFIBacktrace|WebFFIError|' +
  'wf_func_trampoline$|wf_func_call$|TVMFFIFunctionCall$|WebFFIFunctionCall|wf_js_safe_call$|' +
  'tvm::ffi::details::|tvm::ffi::Function|__libc_)');
/** Upstream's headers of that plumbing, and the C++ library's: calls inlined from them are left out. */
const PLUMBING_FILE = /include\/(tvm\/ffi\/(error|function_details|function|any)\.h|c\+\+\/)/;

// The glue's own JS frames (named webffiCall, webffiCallJS, ...) are left out.
const GLUE_FRAME = /(^|\.)webffi[A-Z]\w*( \[as \w+\])?$/;
/** A stack line of one of the glue's frames (V8 or Gecko form). */
const GLUE_LINE = /^(\s*at )?([\w$.]*\.)?webffi[A-Z]\w*( \[as \w+\])?( \(|@)/;
/** A module's script URL in V8 (`wasm://wasm/NAME-HASH`): NAME. */
const WASM_SCRIPT = /^wasm:\/\/wasm\/(.+)-[0-9a-f]+$/;
const AT_PREFIX = /^\s*at /;

// ------------------------------------------------------------ frames
// A frame of a captured stack, made only when a stack is read:
//   { wasm: true, name, display, location, instance, position, key }
//   { wasm: false, glue, func, file, line, text, key }
// `key` identifies the frame's code position across captures (the engine's
// text for it), so two captures of one stack can be matched frame by frame.

/** Script name -> whether its frames are wasm (decided once per script). */
const wasmScripts = new Map();
/** Wasm script name -> instance, learned from V8's call sites: stack text names no instance. */
const scriptInstances = new Map();

/** A JS frame of a V8 CallSite: its text (most of a frame's cost) made when asked for. */
class SiteJsFrame {
  constructor(site, func) {
    this.site = site;
    this.func = func;
    this.glue = func !== null && GLUE_NAME.test(func);
    this.bridge = func === BRIDGE_NAME;
    this.wasm = false;
    this.cachedText = null;
  }

  get text() {
    return (this.cachedText ??= String(this.site));
  }

  get key() {
    return this.text;
  }

  get file() {
    return this.site.getFileName?.() ?? '';
  }

  get line() {
    return this.site.getLineNumber?.() ?? 0;
  }
}
const GLUE_NAME = /^webffi[A-Z]\w*$/;

// V8 compiles a regular expression at its first uses (and again when it
// tiers up). An error raised while the caller is deep in its own recursion
// reads its stack with these, and V8's regexp compiler can abort the whole
// process when it runs out of stack there: compile them all now.
for (const re of [V8_WASM, GECKO_WASM, WASM_OFFSET, DUPLICATE_SUFFIX, V8_JS, GECKO_JS, RUNTIME_FRAME, ERROR_MACHINERY,
  PLUMBING_FILE, GLUE_FRAME, GLUE_LINE, WASM_SCRIPT, AT_PREFIX, GLUE_NAME]) {
  for (let i = 0; i < 3; i++) {
    re.test('    at webffiCall (wasm://wasm/m-1a:wasm-function[1]:0x1f)');
    re.test('wf_err_raise');
  }
}
/** The JS function a module's call of its own weak symbol goes through (js/dylink.js): C calling C. */
const BRIDGE_NAME = 'webffiSelfImport';

/** Wasm script name -> code offset -> what a frame there shows (the same for every instance of the module). */
const wasmSites = new Map();

/** A V8 CallSite's frame. */
function siteFrame(site) {
  const file = site.getFileName?.() ?? '';
  let wasm = file ? wasmScripts.get(file) : false;
  if (wasm === undefined) {
    wasm = String(site).includes('wasm-function[');
    wasmScripts.set(file, wasm);
  }
  if (!wasm) return new SiteJsFrame(site, site.getFunctionName?.() ?? null);
  const position = site.getPosition?.() ?? 0;
  let byPosition = wasmSites.get(file);
  if (!byPosition) wasmSites.set(file, (byPosition = new Map()));
  let info = byPosition.get(position);
  if (info === undefined) {
    info = wasmSiteInfo(site, file, position);
    byPosition.set(position, info);
  }
  const instance = site.getThis?.();
  if (!(instance instanceof WebAssembly.Instance)) return { wasm: true, ...info, instance: null, position };
  if (!scriptInstances.has(file)) scriptInstances.set(file, new WeakRef(instance));
  return { wasm: true, name: info.name, display: info.display, location: info.location, key: info.key, instance, position };
}

/** The names and location of a wasm frame: { name, display (with the module's name), location, key }. */
function wasmSiteInfo(site, file, position) {
  const index = site.getFunction?.();
  // (the linker numbers a name that recurs, `f.1`: not part of the name)
  const name = (site.getFunctionName?.() ?? '').replace(DUPLICATE_SUFFIX, '');
  let location;
  let display;
  if (typeof index === 'number') {
    location = `${file}:wasm-function[${index}]:0x${position.toString(16)}`;
    const moduleName = WASM_SCRIPT.exec(file)?.[1];
    display = moduleName ? `${moduleName}.${name}` : name || location;
  } else {
    const text = String(site);
    const m = V8_WASM.exec(`at ${text}`);
    location = m ? m[2] : text;
    display = m?.[1]?.replace(DUPLICATE_SUFFIX, '') ?? location;
  }
  return { name: name || display, display, location, key: location };
}

/** A frame of stack text (one line), or null for a line that is no frame. */
function textFrame(line) {
  const w = V8_WASM.exec(line) ?? GECKO_WASM.exec(line);
  if (w) {
    const location = w[2];
    const display = w[1]?.replace(DUPLICATE_SUFFIX, '') || location;
    const file = location.slice(0, location.lastIndexOf(':wasm-function['));
    const instance = scriptInstances.get(file)?.deref() ?? null;
    const dot = display.indexOf('.');
    const name = dot > 0 && WASM_SCRIPT.test(file) ? display.slice(dot + 1) : display;
    return {
      wasm: true, name, display, location, instance,
      position: parseInt(WASM_OFFSET.exec(location)?.[1] ?? '0', 16), key: location,
    };
  }
  const m = V8_JS.exec(line) ?? GECKO_JS.exec(line);
  if (!m) return null;
  const text = line.replace(AT_PREFIX, '');
  const func = m[1] || null;
  return {
    wasm: false, glue: GLUE_LINE.test(line), bridge: func !== null && func.endsWith(BRIDGE_NAME), func,
    file: m[2], line: Number(m[3]), text, key: text,
  };
}

/** The frames of a capture: V8 CallSites, or stack text (its first line is the header). */
export function framesOf(raw) {
  const frames = [];
  if (Array.isArray(raw)) {
    for (const site of raw) frames.push(siteFrame(site));
  } else {
    for (const line of String(raw ?? '').split('\n').slice(1)) {
      const f = textFrame(line);
      if (f) frames.push(f);
    }
  }
  return frames;
}

const collectSites = (_, sites) => sites;

/**
 * The current stack below the caller of `above`, most recent first, at
 * most `limit` frames: V8 CallSites when the engine has them (structured:
 * no text is formatted), otherwise the engine's stack text.
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

/** The current stack's frames below the caller of `above`, at most `limit`. */
export function currentFrames(limit, above) {
  return framesOf(captureStack(limit, above));
}

/**
 * [start, end) of the first run of wasm frames at or after `from` (start
 * -1: none). A module's call of its own weak symbol goes through a JS
 * bridge: C calling C, inside the run.
 */
function wasmRun(frames, from = 0) {
  let start = from;
  while (start < frames.length && !frames[start].wasm) start++;
  if (start === frames.length) return [-1, -1];
  let end = start;
  for (;;) {
    while (end < frames.length && frames[end].wasm) end++;
    let next = end;
    while (next < frames.length && frames[next].bridge) next++;
    if (next === end || next >= frames.length || !frames[next].wasm) return [start, end];
    end = next;
  }
}

// ------------------------------------------------------------ symbolising
/** The most source frames one wasm frame shows (a line table may nest inlined calls without end). */
const MAX_SOURCE_FRAMES = 16;
/** The most characters of one function or file name shown. */
const MAX_NAME = 512;
// line ends, other control characters, quotes and backslashes: what could
// break a line of e.stack or e.backtrace into two, or end an ABI line's
// quoted file early (escaped as in a JSON string)
const UNPRINTABLE = /[\x00-\x1f\x7f\x85\u2028\u2029"\\]/g;

/**
 * A function or file name from a line table (a module's data, not trusted)
 * as it goes into e.stack and e.backtrace: on one line, control characters,
 * quotes and backslashes escaped, at most MAX_NAME characters.
 */
function printableName(text) {
  if (text === null || text === undefined) return text ?? null;
  let t = String(text);
  if (t.length > MAX_NAME) t = `${t.slice(0, MAX_NAME)}...`;
  return t.replace(UNPRINTABLE, (c) => (c === '"' || c === '\\' ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** Instance -> position -> source frames (null: no table covers it); wasm frames recur. */
const symbolised = new WeakMap();
const noInstance = {};

/**
 * The source frames one wasm frame stands for, innermost first:
 * `{ func, file, line, column, inlined, hidden, machinery }`, with `file`
 * null when no line table covers it (the frame keeps its location).
 * `hidden` ones are left out of what is shown; `machinery` ones (the error
 * machinery, the call plumbing) are not even counted as frames.
 */
function sourceEntries(frame) {
  const key = frame.instance ?? noInstance;
  let byPosition = symbolised.get(key);
  if (!byPosition) symbolised.set(key, (byPosition = new Map()));
  const cacheKey = frame.instance ? frame.position : frame.location;
  let entries = byPosition.get(cacheKey);
  if (entries !== undefined) return entries;
  const sources = frame.instance ? sourceFrames(frame.instance, frame.position) : null;
  const wholeMachinery = ERROR_MACHINERY.test(frame.name);
  if (sources === null || sources.every((s) => s.file === null)) {
    entries = [{
      func: printableName(frame.display), file: null, line: 0, column: 0, inlined: false,
      hidden: wholeMachinery || RUNTIME_FRAME.test(frame.name), machinery: wholeMachinery,
    }];
  } else {
    // (the outermost is the wasm function itself: its name-section name
    // carries a C++ function's whole signature, return type first, as the
    // names upstream's exclusions are written against)
    entries = sources.map((s) => {
      const machinery = (s.func !== null && ERROR_MACHINERY.test(s.func)) || (!s.inlined && wholeMachinery);
      const plumbing = s.inlined && s.file !== null && PLUMBING_FILE.test(s.file);
      return { ...s, func: printableName(s.func || frame.name), file: printableName(s.file), hidden: machinery || plumbing, machinery };
    });
    if (entries.length > MAX_SOURCE_FRAMES) {
      // the innermost calls and the function itself, the ones between counted
      const left = entries.length - MAX_SOURCE_FRAMES + 1;
      entries = [...entries.slice(0, MAX_SOURCE_FRAMES - 2), {
        func: `<${left} inlined calls left out>`, file: null, line: 0, column: 0, inlined: true, hidden: false, machinery: false,
      }, entries[entries.length - 1]];
    }
  }
  byPosition.set(cacheKey, entries);
  return entries;
}

/** What one wasm frame shows (its source frames not hidden). */
function shownFrames(frame) {
  return sourceEntries(frame).filter((e) => !e.hidden);
}

/** One ABI backtrace line. A frame without a line says so (never `line 0`). */
export function abiLine(file, line, func, inlined = false) {
  const where = line > 0 ? `line ${line}` : 'line unknown';
  return `  File "${file}", ${where}, in ${func}${inlined ? ' [inlined]' : ''}\n`;
}

/** A wasm frame's ABI lines; `skip.n` of its frames (machinery not counted) are left out, shown or not. */
function wasmAbiText(frame, skip = { n: 0 }) {
  let out = '';
  for (const s of sourceEntries(frame)) {
    if (skip.n > 0 && !s.machinery) {
      skip.n--;
      continue;
    }
    if (s.hidden) continue;
    out += s.file === null ? abiLine(frame.location, 0, s.func) : abiLine(s.file, s.line, s.func, s.inlined);
  }
  return out;
}

/** A JS frame's ABI line (glue frames: none). */
function jsAbiText(frame) {
  if (frame.glue) return '';
  return abiLine(frame.file, frame.line, frame.func ?? '<anonymous>');
}

/**
 * ABI backtrace text for frames[from, to): wasm frames symbolised (or
 * left out), JS frames but the glue's, most recent first. `skip` source
 * frames are left out at the top, shown ones or not (TVMFFIBacktrace's
 * explicit frame stands for its caller's, whatever the caller is).
 */
export function backtraceText(frames, from = 0, to = frames.length, skip = 0) {
  let out = '';
  const counter = { n: skip };
  for (let i = from; i < to; i++) {
    const f = frames[i];
    if (!f.wasm) {
      out += jsAbiText(f);
      continue;
    }
    out += wasmAbiText(f, counter);
  }
  return out;
}

/** `    at ...` lines of a JS error's stack for frames[from, to), at most `limit` (glue left out). */
function stackLines(frames, from, to, limit) {
  const lines = [];
  for (let i = from; i < to && lines.length < limit; i++) {
    const f = frames[i];
    if (!f.wasm) {
      if (!f.glue) lines.push(`    at ${f.text}`);
      continue;
    }
    for (const s of shownFrames(f)) {
      if (lines.length >= limit) break;
      if (s.file === null) lines.push(`    at ${s.func} (${f.location})`);
      else lines.push(`    at ${s.func}${s.inlined ? ' [inlined]' : ''} (${s.file}:${s.line}${s.column > 0 ? `:${s.column}` : ''})`);
    }
  }
  return lines;
}

// ------------------------------------------------------------ the host's imports
/**
 * Frames first captured for the `webffi.backtrace` import: the import's own
 * and up to six of C. Each wasm frame costs V8 about half a microsecond to
 * capture, several times a JS frame, so the capture stops early.
 */
const SEGMENT_LIMIT = 8;

/**
 * The `webffi.backtrace` import's text: the ABI lines of the wasm frames
 * from the top of the stack down to the first JS frame below them, i.e. the
 * C that is running now, less `skip` source frames at the top. Frames
 * further down belong to outer calls, which add their own when an error
 * crosses them.
 */
export function currentWasmBacktrace(skip = 0) {
  let frames = currentFrames(SEGMENT_LIMIT, currentWasmBacktrace);
  let [start, end] = wasmRun(frames);
  if (end === frames.length && frames.length >= SEGMENT_LIMIT) {
    // Deep C: the segment goes on below what was captured.
    frames = currentFrames(64, currentWasmBacktrace);
    [start, end] = wasmRun(frames);
  }
  return start < 0 ? '' : backtraceText(frames, start, end, skip);
}

// ------------------------------------------------- deferred captures
// An error raised in C is mostly caught and dropped unread. Its stack is
// captured once, at the raise, and formatted (most of a capture's cost) only
// when read: as its ABI backtrace (the C frames at the top) and as the JS
// error's `stack` (the C frames, then the JS frames from the user's call on).

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

/** A capture's frames (made on first use and kept). */
export function captureFrames(capture) {
  if (capture.frames !== undefined) return capture.frames;
  let raw = capture.text;
  if (raw === undefined) {
    const savedPrepare = Error.prepareStackTrace;
    try {
      Error.prepareStackTrace = collectSites; // V8 formats on first read, here
      raw = capture.stack;
    } finally {
      Error.prepareStackTrace = savedPrepare;
    }
  }
  capture.frames = framesOf(raw);
  capture.stack = undefined;
  return capture.frames;
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

/** [start, end) of a capture's own C frames: the first run of wasm frames. */
export function captureSegment(capture) {
  const [start, end] = wasmRun(captureFrames(capture));
  return start < 0 ? [0, 0] : [start, end];
}

/** A capture's C frames as ABI backtrace text (also the `webffi.backtrace_frames` import's). */
export function capturedBacktrace(capture) {
  const [start, end] = captureSegment(capture);
  return backtraceText(captureFrames(capture), start, end);
}

/**
 * A JS stack for an error raised in the captured C call: `header`, its C
 * frames, then the frames below them and the glue's, at most `limit` of
 * the user's.
 */
export function capturedStack(capture, header, limit) {
  const frames = captureFrames(capture);
  const [start, end] = captureSegment(capture);
  const own = stackLines(frames, start, end, Infinity);
  return [header, ...own, ...stackLines(frames, end, frames.length, limit)].join('\n');
}

/**
 * ABI backtrace text as the lines of a JS error's stack (`    at FUNC
 * (FILE:LINE)`; a frame without a line keeps its location), for errors whose
 * C frames came as text.
 */
export function backtraceStackLines(text) {
  const lines = [];
  for (const line of String(text).split('\n')) {
    const m = /^\s*File "(.*)", line (\d+|unknown), in (.*?)( \[inlined\])?$/.exec(line);
    if (!m) continue;
    lines.push(m[2] === 'unknown' ? `    at ${m[3]} (${m[1]})` : `    at ${m[3]}${m[4] ?? ''} (${m[1]}:${m[2]})`);
  }
  return lines;
}

/**
 * A JS stack for an error whose C frames came as ABI text: `header`, those
 * frames, then the JS frames of `holder` (a V8 capture, formatting
 * deferred, or null).
 */
export function textBacktraceStack(header, text, holder) {
  const below = holder === null ? [] : String(holder.stack ?? '').split('\n').slice(1);
  return [header, ...backtraceStackLines(text), ...below].join('\n');
}

/**
 * The frames of whoever called `above` (skipped with the frames above it),
 * marked as the caller's: in an async function after an await these are
 * V8's async frames, the awaits that led here. For an error that arrives
 * from elsewhere (a worker), so its stack shows which call on this side
 * failed. `{ stack: lines, backtrace: ABI text }`.
 */
export function callerFrames(above) {
  const frames = currentFrames(typeof Error.stackTraceLimit === 'number' ? Error.stackTraceLimit : 10, above);
  const stack = [];
  let backtrace = '';
  for (const f of frames) {
    if (f.wasm || f.glue) continue;
    stack.push(`    at ${f.text}`);
    backtrace += abiLine(`[caller] ${f.file}`, f.line, f.func ?? '<anonymous>');
  }
  return { stack, backtrace };
}

// ------------------------------------------------- JS stacks as backtraces
/**
 * A JS stack (Error.prototype.stack) as ABI backtrace lines. When the stack
 * was taken inside C (it has wasm frames), it ends at the outermost C frame:
 * what lies below is the caller's, outside the FFI. `complete` says so.
 */
export function jsStackToBacktrace(stack) {
  const frames = framesOf(typeof stack === 'string' ? stack : '');
  let last = -1;
  for (let i = 0; i < frames.length; i++) if (frames[i].wasm) last = i;
  return last >= 0
    ? { text: backtraceText(frames, 0, last + 1), complete: true }
    : { text: backtraceText(frames), complete: false };
}

/**
 * Where a crossing meets a recorded stack: the index just past the run of
 * wasm frames `crossed` (the current stack's first) found in `frames` at or
 * after `from`, with the frames below it equal as far as both go; -1 when
 * the recorded stack does not hold it (the value is thrown on another path).
 */
export function matchCrossing(frames, from, current, [start, end]) {
  const n = end - start;
  for (let i = from; i + n <= frames.length; i++) {
    let k = 0;
    while (k < n && frames[i + k].key === current[start + k].key) k++;
    if (k < n) continue;
    // the frames below the crossing are the same call chain
    let a = i + n;
    let b = end;
    let same = true;
    for (let m = 0; m < 8 && a < frames.length && b < current.length; m++, a++, b++) {
      if (frames[a].key !== current[b].key) {
        same = false;
        break;
      }
    }
    if (same) return i + n;
  }
  return -1;
}

export { wasmRun };
