// The line table (bin/line_table.mjs, read by js/symbols.js) against LLVM's
// own DWARF reader: tests/fixtures/dwarf/inlined.c compiled with clang-14
// for wasm32 with DWARF 4 and 5, at -O0 and -O2, linked by wasm-ld (no
// binaryen: the DWARF as LLVM wrote it); at every address where a row
// starts, and the byte after it, the frames the table gives (innermost
// first, inlined calls included) are the ones llvm-symbolizer --inlining
// gives. Emscripten 3.1.6's binaryen cannot handle DWARF 5, so this is
// where the DWARF 5 reader is tested. Needs clang-14, lld-14 and llvm-14
// (scripts/setup.sh installs them); fails without them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineTableFromDwarf, wasmSections, withCustomSection } from '../../bin/line_table.mjs';
import { LineTable } from '../../js/symbols.js';

const fixtures = fileURLToPath(new URL('../fixtures/dwarf/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'webffi-dwarf-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

function run(tool, args, input) {
  const r = spawnSync(tool, args, { encoding: 'utf8', input, cwd: fixtures });
  assert.ok(!r.error, `${tool}: ${r.error?.message} (apt-get install clang-14 lld-14 llvm-14)`);
  assert.equal(r.status, 0, `${tool} ${args.join(' ')}:\n${r.stderr}`);
  return r.stdout;
}

/** llvm-symbolizer's frames per address: [[func, file, line], ...] innermost first. */
function symbolize(wasm, addresses) {
  const out = run('llvm-symbolizer-14', ['--obj', wasm, '--inlining', '--functions=short'],
    addresses.map((a) => `0x${a.toString(16)}`).join('\n') + '\n');
  return out.trim().split(/\n\s*\n/).map((block) => {
    const lines = block.split('\n');
    const frames = [];
    for (let i = 0; i + 1 < lines.length; i += 2) {
      const m = /^(.*):(\d+):(\d+)$/.exec(lines[i + 1]);
      frames.push([lines[i], m ? basename(m[1]) : '??', m ? Number(m[2]) : 0]);
    }
    return frames;
  });
}

for (const dwarf of [4, 5]) {
  for (const opt of ['-O0', '-O2']) {
    test(`DWARF ${dwarf} at ${opt}: each address's frames are LLVM's`, () => {
      const object = join(dir, `inlined_${dwarf}${opt}.o`);
      const wasm = join(dir, `inlined_${dwarf}${opt}.wasm`);
      run('clang-14', ['--target=wasm32', '-nostdlib', `-gdwarf-${dwarf}`, opt, '-c', 'inlined.c', '-o', object]);
      run('wasm-ld-14', ['--no-entry', '--export-dynamic', object, '-o', wasm]);
      const bytes = new Uint8Array(readFileSync(wasm));
      const encoded = lineTableFromDwarf(bytes, { baseDir: fixtures });
      const table = new LineTable(encoded);
      assert.equal(table.codeStart, wasmSections(bytes).codeStart);
      // paths under the build's folder are written relative to it
      assert.deepEqual(table.strings.filter((s) => s.endsWith('.c') || s.endsWith('.h')).sort(), ['helpers.h', 'inlined.c']);
      const addresses = [];
      for (let i = 0; i < table.rowAddress.length; i++) {
        if (table.rowFile[i] !== 0) addresses.push(table.rowAddress[i], table.rowAddress[i] + 1);
      }
      assert.ok(addresses.length > 10, `${addresses.length} addresses`);
      const expected = symbolize(wasm, addresses);
      let inlined = 0;
      addresses.forEach((address, k) => {
        const llvm = expected[k];
        if (llvm.every(([func]) => func === '??')) return; // between functions
        const ours = (table.lookup(table.codeStart + address) ?? []).map((f) => [f.func, f.file === null ? '??' : basename(f.file), f.line]);
        // a row of line 0 (code of no line) is `no line` here
        const want = llvm.map(([func, file, line]) => [func, line === 0 ? '??' : file, line]);
        assert.deepEqual(ours, want, `address 0x${address.toString(16)}`);
        if (ours.length > 1) inlined++;
      });
      if (opt === '-O2') assert.ok(inlined > 0, 'some addresses are in inlined calls');
      // the section round-trips through a wasm
      const withTable = withCustomSection(bytes, 'webffi.lines', encoded);
      assert.deepEqual(new Uint8Array(WebAssembly.Module.customSections(new WebAssembly.Module(withTable), 'webffi.lines')[0]), encoded);
    });
  }
}

test('a table that cannot be read is refused, never read past its end', () => {
  const bytes = new Uint8Array(readFileSync(join(dir, 'inlined_4-O2.wasm')));
  const encoded = lineTableFromDwarf(bytes, { baseDir: fixtures });
  for (let cut = 0; cut < encoded.length; cut += Math.max(1, encoded.length >> 6)) {
    assert.throws(() => new LineTable(encoded.subarray(0, cut)), RangeError, `cut at ${cut}`);
  }
  const wrong = encoded.slice();
  wrong[0] = 0x58;
  assert.throws(() => new LineTable(wrong), /not a webffi line table/);
});
