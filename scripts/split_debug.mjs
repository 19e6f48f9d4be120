// Moves a linked wasm's line tables into a debug file of its own: reads the
// DWARF the link kept (-gline-tables-only), writes FILE.lines (webffi's
// line table, with the build id) and rewrites the wasm without its DWARF,
// with a `webffi.build_id` section that load({ debugInfo }) checks the
// file against. Run by the build on build/wasm/webffi.wasm.
// Usage: node scripts/split_debug.mjs FILE.wasm
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  BUILD_ID_SECTION, isDwarfSection, lineTableFromDwarf, wasmSections, withCustomSection, withoutCustomSections,
} from '../bin/line_table.mjs';

const file = process.argv[2];
if (!file?.endsWith('.wasm')) throw new Error('usage: node scripts/split_debug.mjs FILE.wasm');
const bytes = new Uint8Array(readFileSync(file));
const { codeStart, codeEnd } = wasmSections(bytes);
// The code decides what the table means: the id is a hash of it.
const buildId = createHash('sha256').update(bytes.subarray(codeStart, codeEnd)).digest().subarray(0, 16);
const root = new URL('../', import.meta.url).pathname;
const table = lineTableFromDwarf(bytes, { buildId, baseDir: root });
if (table === null) throw new Error(`${file}: no DWARF line table to split (was it linked with -gline-tables-only?)`);
const stripped = withoutCustomSections(bytes, (name) => isDwarfSection(name) || name === BUILD_ID_SECTION);
writeFileSync(file.replace(/\.wasm$/, '.lines'), table);
writeFileSync(file, withCustomSection(stripped, BUILD_ID_SECTION, buildId));
