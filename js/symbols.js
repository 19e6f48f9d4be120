// File, line and function for wasm code addresses, from the line tables
// `webffi build -g` (or -gline-tables-only) leaves in a module's
// `webffi.lines` section, or from a debug file given for the runtime itself
// (load({ debugInfo })). Tables are decoded on the first lookup, when a
// backtrace is read: loading and raising cost nothing more. The format is
// described in docs/debugging.md; bin/line_table.mjs writes it.
import { typedArrayParts, arrayBufferLength } from './buffers.js';

const SECTION = 'webffi.lines';
const BUILD_ID = 'webffi.build_id';
const MAGIC = 'WFL1';

/** Instance -> { module, table (undefined: not read yet, null: none), bytes? }. */
const sources = new WeakMap();

/**
 * Makes the frames of `instance` symbolisable: by the table in its
 * module's `webffi.lines` section, or by `debugBytes` (a debug file made
 * for this module, checked against its `webffi.build_id`).
 */
export function registerInstance(instance, module, debugBytes = null) {
  if (!(instance instanceof WebAssembly.Instance) || !(module instanceof WebAssembly.Module)) return;
  sources.set(instance, { module, table: undefined, bytes: debugBytes });
}

/**
 * Checks a debug file against a module before it is used: null when it
 * fits, else why not. A module without a build id takes no debug file.
 */
export function debugFileProblem(module, bytes) {
  let table;
  try {
    table = new LineTable(bytes);
  } catch (e) {
    return `not a webffi line table (${e.message})`;
  }
  const id = WebAssembly.Module.customSections(module, BUILD_ID)[0];
  if (!id) return 'the wasm has no build id to match it with';
  if (!sameBytes(new Uint8Array(id), table.buildId)) return 'it was made for another build of the wasm';
  return null;
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The table of a registered instance, decoded on first use (null: none or unreadable). */
function tableOf(instance) {
  const source = sources.get(instance);
  if (source === undefined) return null;
  if (source.table === undefined) {
    source.table = null;
    try {
      const bytes = source.bytes ?? WebAssembly.Module.customSections(source.module, SECTION)[0];
      if (bytes) source.table = new LineTable(new Uint8Array(bytes));
    } catch {
      // a table that cannot be read names no lines; the frames keep their wasm locations
    }
    source.bytes = null;
  }
  return source.table;
}

/**
 * The source frames at module offset `position` of `instance`, innermost
 * first (inlined calls as frames of their own, marked `inlined`), or null
 * when it has no line table covering the address. Each frame is
 * `{ func, file, line, column, inlined }`; `func` is null where the table
 * names no function (the caller uses the wasm name), `line` 0 where the
 * table has no line for the address.
 */
export function sourceFrames(instance, position) {
  const table = tableOf(instance);
  return table === null ? null : table.lookup(position);
}

const decoder = new TextDecoder();

/** A decoded `webffi.lines` table. */
export class LineTable {
  constructor(bytes) {
    let pos = 0;
    const uleb = () => {
      let result = 0;
      let scale = 1;
      for (;;) {
        if (pos >= bytes.length) throw new RangeError('truncated line table');
        const b = bytes[pos++];
        result += (b & 0x7f) * scale;
        if (b < 0x80) return result;
        scale *= 128;
        if (scale > 2 ** 49) throw new RangeError('line table value too large');
      }
    };
    const zigzag = () => {
      const v = uleb();
      return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
    };
    const count = (perItem) => {
      const n = uleb();
      if (n * perItem > bytes.length - pos) throw new RangeError('line table count past its end');
      return n;
    };
    if (decoder.decode(bytes.subarray(0, 4)) !== MAGIC) throw new RangeError('not a webffi line table');
    pos = 4;
    this.codeStart = uleb();
    const idLength = count(1);
    this.buildId = bytes.slice(pos, pos + idLength);
    pos += idLength;
    const strings = new Array(count(1));
    for (let i = 0; i < strings.length; i++) {
      const n = count(1);
      strings[i] = decoder.decode(bytes.subarray(pos, pos + n));
      pos += n;
    }
    this.strings = strings;
    const str = (i) => {
      if (i > strings.length) throw new RangeError('line table string index out of range');
      return i === 0 ? null : strings[i - 1];
    };
    const rows = count(3); // the fewest bytes an entry takes
    this.rowAddress = new Uint32Array(rows);
    this.rowFile = new Uint32Array(rows);
    this.rowLine = new Uint32Array(rows);
    this.rowColumn = new Uint32Array(rows);
    let address = 0;
    let line = 0;
    let file = 0;
    for (let i = 0; i < rows; i++) {
      address += uleb();
      const step = uleb(); // the line step (zigzag) doubled, plus 1 when a file index follows
      if (step % 2 === 1) {
        file = uleb();
        str(file);
      }
      const zig = Math.floor(step / 2);
      line += zig % 2 === 0 ? zig / 2 : -(zig + 1) / 2;
      this.rowAddress[i] = address;
      this.rowFile[i] = file;
      this.rowLine[i] = line;
      this.rowColumn[i] = uleb();
    }
    const funcs = count(4);
    this.funcLow = new Uint32Array(funcs);
    this.funcHigh = new Uint32Array(funcs);
    this.funcName = new Uint32Array(funcs);
    this.funcScopes = new Array(funcs);
    let low = 0;
    for (let i = 0; i < funcs; i++) {
      low += uleb();
      this.funcLow[i] = low;
      this.funcHigh[i] = low + uleb();
      this.funcName[i] = uleb();
      str(this.funcName[i]);
      const scopes = [];
      for (let n = count(6), s = 0; s < n; s++) {
        const scope = { depth: uleb(), name: str(uleb()), callFile: str(uleb()), callLine: uleb(), callColumn: uleb(), ranges: [] };
        for (let r = count(2), k = 0; k < r; k++) {
          const from = low + zigzag();
          scope.ranges.push(from, from + uleb());
        }
        scopes.push(scope);
      }
      this.funcScopes[i] = scopes;
    }
  }

  /** The last index i with array[i] <= value (-1 when none). */
  static floor(array, value) {
    let lo = 0;
    let hi = array.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (array[mid] <= value) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  lookup(position) {
    const address = position - this.codeStart;
    if (address < 0) return null;
    const r = LineTable.floor(this.rowAddress, address);
    const f = LineTable.floor(this.funcLow, address);
    const inFunc = f >= 0 && address < this.funcHigh[f];
    if (!inFunc && (r < 0 || this.rowFile[r] === 0)) return null;
    const file = r >= 0 && this.rowFile[r] !== 0 ? this.strings[this.rowFile[r] - 1] : null;
    const here = file === null
      ? { file: null, line: 0, column: 0 }
      : { file, line: this.rowLine[r], column: this.rowColumn[r] };
    if (!inFunc) return [{ func: null, ...here, inlined: false }];
    // The inlined calls that contain the address, outermost first. Scopes
    // come in pre-order, and siblings never overlap: a scope is looked at
    // only one level below the deepest one holding the address so far.
    const chain = [];
    for (const scope of this.funcScopes[f]) {
      if (scope.depth !== chain.length + 1) continue;
      for (let i = 0; i < scope.ranges.length; i += 2) {
        if (address >= scope.ranges[i] && address < scope.ranges[i + 1]) {
          chain.push(scope);
          break;
        }
      }
    }
    const outerName = this.funcName[f] === 0 ? null : this.strings[this.funcName[f] - 1];
    const frames = [];
    let at = here;
    for (let i = chain.length - 1; i >= 0; i--) {
      frames.push({ func: chain[i].name, ...at, inlined: true });
      at = chain[i].callFile === null
        ? { file: null, line: 0, column: 0 }
        : { file: chain[i].callFile, line: chain[i].callLine, column: chain[i].callColumn };
    }
    frames.push({ func: outerName, ...at, inlined: false });
    return frames;
  }
}

/**
 * The bytes of the runtime's debug file for load({ debugInfo }): `true`
 * takes the file beside the wasm (`webffi.wasm` -> `webffi.lines`), a URL
 * or string names one, bytes are the file itself. Null (with one warning)
 * when it cannot be read or was made for another build: a debug file never
 * keeps the runtime from loading.
 */
export async function readDebugInfo(source, wasmUrl, module, logger) {
  let bytes;
  try {
    if (source === true) {
      if (wasmUrl === null) throw new TypeError('debugInfo: true needs the wasm as a URL; pass the debug file itself');
      source = String(wasmUrl).replace(/\.wasm(?=$|[?#])/, '.lines');
    }
    if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
      // A copy: the lines are decoded later (at the first backtrace), and
      // the caller may reuse or transfer its buffer meanwhile.
      if (ArrayBuffer.isView(source)) {
        const { buffer, byteOffset, byteLength } = typedArrayParts(source, 'debugInfo');
        bytes = new Uint8Array(buffer, byteOffset, byteLength).slice();
      } else {
        bytes = new Uint8Array(source, 0, arrayBufferLength(source, 'debugInfo')).slice();
      }
    } else if (source instanceof URL || typeof source === 'string') {
      const base = globalThis.location?.href;
      const url = base ? new URL(source, base) : new URL(source);
      const readFile = url.protocol === 'file:' && globalThis.process?.getBuiltinModule?.('node:fs/promises')?.readFile;
      if (readFile) {
        bytes = new Uint8Array(await readFile(url));
      } else {
        const response = await fetch(url);
        if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
        bytes = new Uint8Array(await response.arrayBuffer());
      }
    } else {
      throw new TypeError('debugInfo must be true, a URL, a string or bytes');
    }
  } catch (e) {
    logger?.warn?.(`webffi: the runtime's debug file was not loaded: ${e.message}`);
    return null;
  }
  const problem = debugFileProblem(module, bytes);
  if (problem !== null) {
    logger?.warn?.(`webffi: the runtime's debug file was not used: ${problem}`);
    return null;
  }
  return bytes;
}
