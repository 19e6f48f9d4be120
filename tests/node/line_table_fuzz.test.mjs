// Line tables that lie (docs/security.md, "line tables"), generated: a
// module's webffi.lines section rewritten with function and file names of
// any text (newlines followed by forged `at` frames and ABI `File` lines,
// quotes, control characters, line and paragraph separators, long names)
// and with inlined calls nested without end (600,000 in one table). The
// error the module raises keeps its message; e.stack and e.backtrace have
// one line per frame, each of them well formed, no frame the names forged,
// and stay bounded in frames, text and time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { LineTable } from '../../js/symbols.js';
import { encodeTable, withCustomSection, withoutCustomSections, LINE_TABLE_SECTION } from '../../bin/line_table.mjs';
import { check } from '../support/seeded.mjs';

const traced = readFileSync(new URL('../../build/wasm/tests/modules/traced_g_O0.wasm', import.meta.url));
const original = new LineTable(new Uint8Array(WebAssembly.Module.customSections(new WebAssembly.Module(traced), LINE_TABLE_SECTION)[0]));
const rt = await webffi.load({ autoloadBackends: false, logger: { log() {}, warn() {} } });

/**
 * traced_g_O0.wasm with its line table's strings replaced by `names` (in
 * turn) and, when `nested` > 0, each function's inlined calls replaced by
 * `nested` calls one inside the other, all covering the whole function.
 */
function withTable(names, nested) {
  const strings = original.strings.map((_, i) => names[i % names.length]);
  const rows = [];
  for (let i = 0; i < original.rowAddress.length; i++) {
    rows.push([original.rowAddress[i], original.rowFile[i], original.rowLine[i], original.rowColumn[i]]);
  }
  const funcs = [];
  for (let f = 0; f < original.funcLow.length; f++) {
    const low = original.funcLow[f];
    const high = original.funcHigh[f];
    const scopes = [];
    for (let d = 1; d <= nested; d++) {
      scopes.push({ depth: d, name: 1 + (d % strings.length), callFile: 1 + ((d + 1) % strings.length), callLine: d, callColumn: 1, ranges: [[low, high]] });
    }
    funcs.push({ low, high, name: original.funcName[f] === 0 ? 0 : 1 + ((f + 2) % strings.length), scopes });
  }
  const table = encodeTable({ codeStart: original.codeStart, buildId: original.buildId, strings, rows, funcs });
  return { bytes: withCustomSection(withoutCustomSections(traced, (name) => name === LINE_TABLE_SECTION), LINE_TABLE_SECTION, table), tableBytes: table.length };
}

const ABI_LINE = /^ {2}File "(?:[^"\\]|\\.)*", line (?:\d+|unknown), in .*$/;
const CONTROL = /[\x00-\x1f\x7f\x85\u2028\u2029]/;

/** Raises the module's error and checks what a user sees of it. */
async function assertContained(bytes, what) {
  const mod = await rt.loadModule(bytes, { replace: true });
  const f = mod.getFunction('traced');
  const started = performance.now();
  let error;
  try {
    f(-1);
  } catch (e) {
    error = e;
  }
  const ms = performance.now() - started;
  assert.ok(error instanceof webffi.FFIError, `${what}: ${error}`);
  assert.equal(error.message, 'n must not be negative', what);
  const [head, ...frames] = error.stack.split('\n');
  assert.ok(head.endsWith('n must not be negative'), `${what}: ${head}`);
  for (const line of frames) {
    assert.match(line, /^ {4}at /, `${what}: a line of e.stack that is not a frame: ${JSON.stringify(line).slice(0, 200)}`);
    assert.doesNotMatch(line, CONTROL, `${what}: ${JSON.stringify(line).slice(0, 200)}`);
    assert.doesNotMatch(line, /^ {4}at forged /, `${what}: a forged frame`);
  }
  const abi = error.backtrace.split('\n').filter(Boolean);
  for (const line of abi) {
    assert.match(line, ABI_LINE, `${what}: ${JSON.stringify(line).slice(0, 200)}`);
    assert.doesNotMatch(line, CONTROL, what);
  }
  assert.ok(abi.length <= 256, `${what}: ${abi.length} backtrace lines`);
  assert.ok(error.stack.length < 256 << 10 && error.backtrace.length < 256 << 10, `${what}: e.stack ${error.stack.length}, e.backtrace ${error.backtrace.length} characters`);
  mod.dispose?.();
  return { ms, frames: frames.length, stack: error.stack.length };
}

const FORGE = ['\n    at forged (forged.c:1:1)', '\n  File "forged.c", line 1, in forged\n', '"', '\r', '\u2028', '\u2029', '\x00', '\x1b[31m', '\\', ')', ' (x.c:9:9)'];
const nameArb = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.array(fc.oneof(fc.constantFrom(...FORGE), fc.string({ maxLength: 6 })), { minLength: 1, maxLength: 5 }).map((p) => p.join('')),
  fc.integer({ min: 600, max: 20000 }).map((n) => `long${'n'.repeat(n)}`),
);

test('property: names of any text and inlined calls of any depth give well-formed, bounded e.stack and e.backtrace', { timeout: 120000 }, async (t) => {
  let slowest = 0;
  await check(t, import.meta.url, fc.asyncProperty(
    fc.array(nameArb, { minLength: 1, maxLength: 6 }), fc.constantFrom(0, 1, 3, 17, 200, 5000),
    async (names, nested) => {
      const { bytes } = withTable(names, nested);
      const { ms } = await assertContained(bytes, `${JSON.stringify(names).slice(0, 120)}, ${nested} inlined`);
      slowest = Math.max(slowest, ms);
    }), 40);
  t.diagnostic(`slowest error: ${slowest.toFixed(0)} ms`);
});

test('600,000 inlined calls (a 7.5 MB table): the error is bounded in frames, text and time', { timeout: 120000 }, async () => {
  // 200,000 nested in each of the module's three functions
  const { bytes, tableBytes } = withTable(['f\n    at forged (forged.c:1:1)', 'file.c'], 200000);
  assert.ok(tableBytes > 7 << 20, `a ${tableBytes}-byte table`);
  const started = performance.now();
  const { frames, stack } = await assertContained(bytes, '600k inlined');
  const ms = performance.now() - started;
  assert.ok(ms < 20000, `${ms.toFixed(0)} ms`);
  assert.ok(frames <= 256, `${frames} frames`);
  assert.ok(stack < 64 << 10, `${stack} characters`);
});
