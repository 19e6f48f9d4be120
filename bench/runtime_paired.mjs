// The rows of bench/runtime.bench.mjs for two builds loaded in one process
// (this tree's runtime and another checkout's, e.g. the main before a
// change), measured in alternating paired rounds so both share the
// machine's noise; then each of our rows as a ratio to its physical floor
// measured in the same run (a raw export call, an export calling a JS
// import, `new Error()` with its stack read), beside the goal for it.
// Run: node bench/runtime_paired.mjs /path/to/other/checkout [rounds]
//
// With --threads in place of the checkout, this tree's two cores: base is
// the single-threaded core (load()), ours the threaded one
// (load({ threads: 2 }): dist/webffi-mt.wasm on a shared memory, one
// worker waiting), each with its own build of the fixtures.
// Run: node bench/runtime_paired.mjs --threads [rounds]
import { median, quantile } from './paired.mjs';

const otherRoot = process.argv[2];
if (!otherRoot) throw new Error('usage: node bench/runtime_paired.mjs OTHER_CHECKOUT|--threads [rounds]');
const threads = otherRoot === '--threads';
const rounds = Number(process.argv[3] ?? 21);
const ours = await import('../js/index.js');
const base = threads ? ours : await import(new URL('index.js', `file://${otherRoot.replace(/\/$/, '')}/js/`).href);

// Both runtimes get this tree's fixtures module (testing.nop, ...), so the
// rows call the same C code in both: older checkouts built their fixtures
// into the runtime (without the trampoline a TVMFFIFunctionCreate function
// has), and loading the module over them replaces those globals. The
// threaded core takes the fixtures built for it (webffi build --threads).
const fixturesUrl = new URL('../dist/webffi_testing.wasm', import.meta.url);
const threadedFixturesUrl = new URL('../dist/webffi_testing-mt.wasm', import.meta.url);
async function withFixtures(rt) {
  (await rt.loadModule(rt.threads > 1 ? threadedFixturesUrl : fixturesUrl)).dispose();
  return rt;
}

/** The row bodies of one runtime (load() with `options`), each in its own loop (distinct source: no shared feedback). */
async function rowsOf(mod, tag, options = {}) {
  const rt = await withFixtures(await mod.load(options));
  const quiet = await withFixtures(await mod.load({ ...options, backtraces: false }));
  const x = rt.exports;
  const nop = rt.getGlobal('testing.nop');
  const apply = rt.getGlobal('testing.apply');
  const raise = rt.getGlobal('testing.test_raise_error');
  const quietRaise = quiet.getGlobal('testing.test_raise_error');
  const callback = rt.toFFI((a) => a);
  const str16 = '0123456789abcdef';
  const errorStack = () => new Error('bench').stack;
  const ints100 = Array.from({ length: 100 }, (_, i) => i);
  const argv = x.WebFFIHeapAlloc(48);
  new Int32Array(x.memory.buffer, argv, 12).set([1, 0, 1, 0, 1, 0, 2, 0, 0, 0, 0, 0]);
  const fnPtr = nop.handle;
  const callWords = x.WebFFIFunctionCallWords;
  const catching = (f) => () => {
    try {
      f('ValueError', 'bench');
    } catch {
      // expected
    }
  };
  const rows = [
    ['raw wasm export call', 2e6, () => x.WebFFIObjectStrongCount(0)],
    ['C floor: TVMFFIFunctionCall(nop, 2 ints)', 1e6, () => x.TVMFFIFunctionCall(fnPtr, argv, 2, argv + 32)],
    ['C floor: WebFFIFunctionCallWords(nop, 1, 2)', 1e6, () => callWords(fnPtr, 2, 0, 1, 2, 0, 0, argv + 32)],
    ['packed call, two ints: nop(1, 2)', 1e6, () => nop(1, 2)],
    ['packed call, 16-byte string', 1e6, () => nop(str16)],
    ['packed call, 4 ints', 1e6, () => nop(1, 2, 3, 4)],
    ['packed call, 16 ints', 5e5, () => nop(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)],
    ['floor: raw export calling a JS import', 1e6, () => trampoline(1)],
    ['JS -> C -> JS callback: apply(cb, 1)', 5e5, () => apply(callback, 1)],
    ['100-int Array create + dispose', 5e4, () => rt.toFFI(ints100).dispose()],
    ['C error caught in JS', 5e4, catching(raise)],
    ['C error caught in JS, backtraces off', 5e4, quiet.setBacktraces ? catching(quietRaise) : null],
    ['floor: new Error() with its stack read', 5e4, errorStack],
    ['C error caught in JS, stack read', 5e4, () => {
      try {
        raise('ValueError', 'bench');
      } catch (e) {
        return e.stack;
      }
    }],
  ];
  let k = 0;
  return rows.map(([name, n, body]) => {
    if (!body) return [name, n, null];
    const loop = new Function('body', 'n', `for (let i = 0; i < n; i++) body(); // ${tag} row ${++k}`);
    return [name, n, () => loop(body, n)];
  });
}

// The floor of a callback: a wasm export whose body only calls a JS import
// (the two boundary crossings of JS -> C -> JS, nothing else), hand-assembled:
// (func (export "g") (param i32) (result i32) (call $f (local.get 0))).
const trampoline = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, 2, 7, 1, 1, 0x65, 1, 0x66, 0, 0,
  3, 2, 1, 0, 7, 5, 1, 1, 0x67, 0, 1, 0x0a, 8, 1, 6, 0, 0x20, 0, 0x10, 0, 0x0b,
])), { e: { f: (a) => a } }).exports.g;

const a = await rowsOf(base, 'base');
const b = await rowsOf(ours, 'ours', threads ? { threads: 2 } : {});
const nsOf = (run, n) => {
  const t0 = performance.now();
  run();
  return ((performance.now() - t0) * 1e6) / n;
};

const oursMedian = new Map(); // row name -> our median ns
const baseMedian = new Map();
const ratioMedian = new Map(); // row name -> median of ours/base over the rounds
console.log(threads
  ? `paired in one process, ${rounds} rounds, base = the single-threaded core (load()), ours = the threaded core (load({ threads: 2 }))`
  : `paired in one process, ${rounds} rounds, base = ${otherRoot}`);
console.log('| operation | base ns (median) | ours ns (median) | ours/base (median) | ours/base p25-p75 | base min/max | ours min/max |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (let r = 0; r < a.length; r++) {
  const [name, n, runA] = a[r];
  const runB = b[r][2];
  if (process.env.ROWS && !process.env.ROWS.split(',').some((k) => name.includes(k))) continue;
  if (!runA || !runB) {
    console.log(`| ${name} | - | - | - | - | - | - |`);
    continue;
  }
  runA();
  runB(); // warm-up
  const ta = [];
  const tb = [];
  const ratio = [];
  for (let i = 0; i < rounds; i++) {
    let x;
    let y;
    if (i % 2) {
      y = nsOf(runB, n);
      x = nsOf(runA, n);
    } else {
      x = nsOf(runA, n);
      y = nsOf(runB, n);
    }
    ta.push(x);
    tb.push(y);
    ratio.push(y / x);
  }
  const f = (v) => v.toFixed(1);
  oursMedian.set(name, median(tb));
  ratioMedian.set(name, median(ratio));
  baseMedian.set(name, median(ta));
  console.log(`| ${name} | ${f(median(ta))} | ${f(median(tb))} | ${median(ratio).toFixed(3)} | ${quantile(ratio, 0.25).toFixed(2)}-${quantile(ratio, 0.75).toFixed(2)} | ${f(Math.min(...ta))}/${f(Math.max(...ta))} | ${f(Math.min(...tb))}/${f(Math.max(...tb))} |`);
  if (process.env.BENCH_DEBUG) console.error(name, ta.map(f).join(' '), '|', tb.map(f).join(' '));
}

// Our rows against their floors (medians of the rounds above) and the goals of
// the performance work (docs/performance.md). The 16-int row's goal is per
// argument: at most twice the 4-int call's cost per argument.
const goals = [
  ['packed call, two ints: nop(1, 2)', 'raw wasm export call', 5],
  ['packed call, 16-byte string', 'raw wasm export call', 12],
  ['JS -> C -> JS callback: apply(cb, 1)', 'floor: raw export calling a JS import', 10],
  ['C error caught in JS, stack read', 'floor: new Error() with its stack read', 2],
];
console.log('');
console.log('| ours | floor | ours ns | floor ns | ours/floor | base/floor | goal | met |');
console.log('|---|---|---:|---:|---:|---:|---:|---|');
for (const [row, floor, goal] of goals) {
  const t = oursMedian.get(row);
  const t0 = oursMedian.get(floor);
  if (t === undefined || t0 === undefined) continue;
  const r = t / t0;
  const rb = baseMedian.get(row) / baseMedian.get(floor); // the base's own floor, measured beside it
  console.log(`| ${row} | ${floor} | ${t.toFixed(1)} | ${t0.toFixed(1)} | ${r.toFixed(1)}x | ${rb.toFixed(1)}x | <= ${goal}x | ${r <= goal ? 'yes' : 'no'} |`);
}
const t4 = oursMedian.get('packed call, 4 ints');
const t16 = oursMedian.get('packed call, 16 ints');
if (t4 !== undefined && t16 !== undefined) {
  const r = t16 / 16 / (t4 / 4);
  const rb = baseMedian.get('packed call, 16 ints') / 16 / (baseMedian.get('packed call, 4 ints') / 4);
  console.log(`| packed call, 16 ints | per argument, against 4 ints | ${t16.toFixed(1)} | ${t4.toFixed(1)} | ${r.toFixed(2)}x | ${rb.toFixed(2)}x | <= 2x | ${r <= 2 ? 'yes' : 'no'} |`);
}
const tArr = oursMedian.get('100-int Array create + dispose');
if (tArr !== undefined) console.log(`| 100-int Array create + dispose | (absolute) | ${tArr.toFixed(1)} | | | ${baseMedian.get('100-int Array create + dispose').toFixed(1)} ns | <= 500 ns | ${tArr <= 500 ? 'yes' : 'no'} |`);

if (threads && ratioMedian.size > 0) {
  // issue 33's goal: the threaded core's call paths within 1.1x of the single-threaded core's, every row
  const over = [...ratioMedian].filter(([, r]) => r > 1.1);
  const [worst, worstRatio] = [...ratioMedian].reduce((w, e) => (e[1] > w[1] ? e : w));
  console.log('');
  console.log(`threaded / single-threaded, median per row: ${over.length === 0 ? 'every row within 1.1x' :
    `${over.length} row(s) over 1.1x: ${over.map(([n, r]) => `${n} ${r.toFixed(2)}x`).join('; ')}`} ` +
    `(highest: ${worst}, ${worstRatio.toFixed(3)}x)`);
}
