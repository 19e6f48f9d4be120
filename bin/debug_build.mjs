// What `webffi build -g` and `-gline-tables-only` do at the link: keep the
// DWARF through it (emcc drops it unless the link asks), then add webffi's
// line table (bin/line_table.mjs) as the `webffi.lines` section, which the
// runtime reads when a backtrace is read. -g keeps the DWARF as well (for
// a debugger: Chrome's C/C++ DevTools extension reads it); the release
// flag drops it.
import {
  LINE_TABLE_SECTION, isDwarfSection, lineTableFromDwarf, withCustomSection, withoutCustomSections,
} from './line_table.mjs';

/** 'dwarf' (-g), 'lines' (-gline-tables-only) or null: the last debug flag wins, as with clang. */
export function debugMode(flags) {
  let mode = null;
  for (const f of flags) {
    if (f === '-g0') mode = null;
    else if (f === '-gline-tables-only' || f === '-gmlt') mode = 'lines';
    else if (/^-g(3|dwarf(-[2-5])?)?$/.test(f)) mode = 'dwarf';
  }
  return mode;
}

/** The link flags that keep the DWARF the compile made. */
export function debugLink(flags) {
  const mode = debugMode(flags);
  if (mode === null) return [];
  return [mode === 'lines' ? '-gline-tables-only' : '-g'];
}

/**
 * The linked wasm with its line table added (and, for -gline-tables-only,
 * its DWARF removed); unchanged without a debug flag. Paths under the
 * current folder are written relative to it.
 */
export function withLineTable(bytes, flags, note = () => {}) {
  const mode = debugMode(flags);
  if (mode === null) return bytes;
  const wasm = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const table = lineTableFromDwarf(wasm, { baseDir: process.cwd() });
  if (table === null) {
    note('warning: the link kept no DWARF line table (were the sources compiled without -g?): ' +
      'backtraces will show wasm locations only');
    return bytes;
  }
  const kept = mode === 'lines' ? withoutCustomSections(wasm, isDwarfSection) : wasm;
  return Buffer.from(withCustomSection(kept, LINE_TABLE_SECTION, table));
}
