// What errors cost, against a JS error in the same run: a C error caught in
// JS (frames on and off), its backtrace and stack read (symbolised from a
// line table when the module has one), the first decode of a line table,
// and the bytes a line table adds to a module and to the runtime.
// Each row is timed in alternating rounds with the floor, `new Error()`
// with its stack read in the same place, so a slow stretch of the machine
// hits both sides of a ratio; medians are printed.
// Run: node bench/errors.bench.mjs [rounds] [OTHER_CHECKOUT] (after the
// build: it reads build/wasm/tests/modules/traced_*.wasm and dist/); with
// another checkout (e.g. the main before a change), its runtime's C errors
// are timed against the same floor too.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { load } from '../js/index.js';
import { loadTesting } from '../js/testing.js';
import { LineTable } from '../js/symbols.js';
import { median, quantile } from './paired.mjs';

const rounds = Number(process.argv[2] ?? 15);
const otherRoot = process.argv[3];
const modules = new URL('../build/wasm/tests/modules/', import.meta.url);
const rt = await loadTesting(await load());
const quiet = await loadTesting(await load({ backtraces: false }));
const raise = rt.getGlobal('testing.test_raise_error');
const quietRaise = quiet.getGlobal('testing.test_raise_error');
const tracedG = (await rt.loadModule(new URL('traced_g_O2.wasm', modules))).getFunction('traced');
const tracedPlain = (await rt.loadModule(new URL('traced_plain.wasm', modules))).getFunction('traced');

// Each body in its own function (distinct source: V8 shares no feedback between rows).
let rowCount = 0;
const loopOf = (body) => new Function('body', 'n', `for (let i = 0; i < n; i++) body(); // row ${++rowCount}`);
const nsOf = (loop, body, n) => {
  const t0 = performance.now();
  loop(body, n);
  return ((performance.now() - t0) * 1e6) / n;
};
const caught = (f, read) => () => {
  try {
    f();
  } catch (e) {
    return read ? read(e) : e;
  }
  throw new Error('expected a throw');
};

/** [floor ns, row ns, row/floor] medians over paired rounds. */
function paired(body, n) {
  const floorBody = () => new Error('bench').stack;
  const floorLoop = loopOf(floorBody);
  const loop = loopOf(body);
  floorLoop(floorBody, n);
  loop(body, n);
  const a = [];
  const b = [];
  const r = [];
  for (let i = 0; i < rounds; i++) {
    let x;
    let y;
    if (i % 2) {
      y = nsOf(loop, body, n);
      x = nsOf(floorLoop, floorBody, n);
    } else {
      x = nsOf(floorLoop, floorBody, n);
      y = nsOf(loop, body, n);
    }
    a.push(x);
    b.push(y);
    r.push(y / x);
  }
  return [median(a), median(b), median(r), quantile(r, 0.25), quantile(r, 0.75)];
}

const rows = [
  ['C error caught in JS (frames on)', caught(() => raise('ValueError', 'bench')), 2e4],
  ['C error caught in JS, backtraces off', caught(() => quietRaise('ValueError', 'bench')), 2e4],
  ['C error caught, stack read', caught(() => raise('ValueError', 'bench'), (e) => e.stack), 1e4],
  ['C error caught, backtrace read (no line table)', caught(() => tracedPlain(-1), (e) => e.backtrace), 1e4],
  ['C error caught, backtrace read (-g: 3 frames symbolised)', caught(() => tracedG(-1), (e) => e.backtrace), 1e4],
  ['C error caught, stack read (-g: 3 frames symbolised)', caught(() => tracedG(-1), (e) => e.stack), 1e4],
];

if (otherRoot) {
  const base = `file://${otherRoot.replace(/\/$/, '')}/js/`;
  const other = await import(new URL('index.js', base).href);
  const otherTesting = await import(new URL('testing.js', base).href);
  const ort = await otherTesting.loadTesting(await other.load());
  const oquiet = await otherTesting.loadTesting(await other.load({ backtraces: false }));
  const oraise = ort.getGlobal('testing.test_raise_error');
  const oquietRaise = oquiet.getGlobal('testing.test_raise_error');
  rows.unshift(
    [`${otherRoot}: C error caught in JS (frames on)`, caught(() => oraise('ValueError', 'bench')), 2e4],
    [`${otherRoot}: C error caught in JS, backtraces off`, caught(() => oquietRaise('ValueError', 'bench')), 2e4],
    [`${otherRoot}: C error caught, stack read`, caught(() => oraise('ValueError', 'bench'), (e) => e.stack), 1e4],
  );
}

console.log(`errors, ${rounds} paired rounds against \`new Error()\` with its stack read (the floor), in one process`);
console.log('| operation | floor ns | ns/op | ratio to floor (median) | p25-p75 |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, body, n] of rows) {
  const [floor, ns, ratio, lo, hi] = paired(body, n);
  console.log(`| ${name} | ${floor.toFixed(0)} | ${ns.toFixed(0)} | ${ratio.toFixed(2)}x | ${lo.toFixed(2)}-${hi.toFixed(2)} |`);
}

// The first read of a backtrace decodes the module's table once.
const runtimeTable = readFileSync(new URL('../dist/webffi.lines', import.meta.url));
const decodes = [];
let table;
for (let i = 0; i < 9; i++) {
  const t0 = performance.now();
  table = new LineTable(new Uint8Array(runtimeTable));
  decodes.push(performance.now() - t0);
}
const lookups = 1e5;
const span = table.funcHigh[table.funcHigh.length - 1];
const t0 = performance.now();
for (let i = 0; i < lookups; i++) table.lookup(table.codeStart + ((i * 7919) % span));
const lookupNs = ((performance.now() - t0) * 1e6) / lookups;
console.log();
console.log(`decoding the runtime's line table (${runtimeTable.length} bytes, ${table.rowAddress.length} rows, ` +
  `${table.funcLow.length} functions): ${median(decodes).toFixed(1)} ms (median of 9), once per runtime, at the first read; ` +
  `one address looked up: ${lookupNs.toFixed(0)} ns`);

// Sizes: what -g and the release flag add to a module, and the runtime's debug file.
const size = (url) => {
  const bytes = readFileSync(url);
  return [bytes.length, gzipSync(bytes, { level: 9 }).length];
};
console.log();
console.log('| wasm | bytes | gzipped | added to the plain build |');
console.log('|---|---:|---:|---:|');
const [plainBytes, plainGz] = size(new URL('traced_plain.wasm', modules));
for (const [label, file] of [['tests/modules/traced.c, plain -O2', 'traced_plain.wasm'],
  ['... -gline-tables-only (the line table only)', 'traced_lines.wasm'], ['... -g (DWARF and the line table)', 'traced_g_O2.wasm']]) {
  const [b, gz] = size(new URL(file, modules));
  console.log(`| ${label} | ${b} | ${gz} | ${b - plainBytes} (${gz - plainGz} gzipped) |`);
}
const [cxxPlain] = size(new URL('traced_cxx_plain.wasm', modules));
const [cxxG] = size(new URL('traced_cxx_g.wasm', modules));
console.log(`| tests/modules/traced_cxx.cc, plain / -g | ${cxxPlain} / ${cxxG} | | ${cxxG - cxxPlain} |`);
const [rtBytes, rtGz] = size(new URL('../dist/webffi.wasm', import.meta.url));
const [linesBytes, linesGz] = size(new URL('../dist/webffi.lines', import.meta.url));
console.log(`| dist/webffi.wasm / its line table dist/webffi.lines (not loaded unless asked) | ${rtBytes} / ${linesBytes} | ${rtGz} / ${linesGz} | |`);
