// The rows of bench/runtime.bench.mjs for two builds loaded in one process
// (this tree's runtime and another checkout's, e.g. the main before a
// change), measured in alternating paired rounds so both share the
// machine's noise. Run: node bench/runtime_paired.mjs /path/to/other/checkout [rounds]
import { median, quantile } from './paired.mjs';

const otherRoot = process.argv[2];
if (!otherRoot) throw new Error('usage: node bench/runtime_paired.mjs OTHER_CHECKOUT [rounds]');
const rounds = Number(process.argv[3] ?? 21);
const otherUrl = `file://${otherRoot.replace(/\/$/, '')}/js/`;
const base = await import(new URL('index.js', otherUrl).href);
const ours = await import('../js/index.js');

// Both runtimes get this tree's fixtures module (testing.nop, ...), so the
// rows call the same C code in both: older checkouts built their fixtures
// into the runtime (without the trampoline a TVMFFIFunctionCreate function
// has), and loading the module over them replaces those globals.
const fixturesUrl = new URL('../dist/webffi_testing.wasm', import.meta.url);
async function withFixtures(rt) {
  (await rt.loadModule(fixturesUrl)).dispose();
  return rt;
}

/** The row bodies of one runtime, each in its own loop (distinct source: no shared feedback). */
async function rowsOf(mod, tag) {
  const rt = await withFixtures(await mod.load());
  const quiet = await withFixtures(await mod.load({ backtraces: false }));
  const x = rt.exports;
  const nop = rt.getGlobal('testing.nop');
  const apply = rt.getGlobal('testing.apply');
  const raise = rt.getGlobal('testing.test_raise_error');
  const quietRaise = quiet.getGlobal('testing.test_raise_error');
  const callback = rt.toFFI((a) => a);
  const str16 = '0123456789abcdef';
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
    ['JS -> C -> JS callback: apply(cb, 1)', 5e5, () => apply(callback, 1)],
    ['100-int Array create + dispose', 5e4, () => rt.toFFI(ints100).dispose()],
    ['C error caught in JS', 5e4, catching(raise)],
    ['C error caught in JS, backtraces off', 5e4, quiet.setBacktraces ? catching(quietRaise) : null],
  ];
  let k = 0;
  return rows.map(([name, n, body]) => {
    if (!body) return [name, n, null];
    const loop = new Function('body', 'n', `for (let i = 0; i < n; i++) body(); // ${tag} row ${++k}`);
    return [name, n, () => loop(body, n)];
  });
}

const a = await rowsOf(base, 'base');
const b = await rowsOf(ours, 'ours');
const nsOf = (run, n) => {
  const t0 = performance.now();
  run();
  return ((performance.now() - t0) * 1e6) / n;
};

console.log(`paired in one process, ${rounds} rounds, base = ${otherRoot}`);
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
  console.log(`| ${name} | ${f(median(ta))} | ${f(median(tb))} | ${median(ratio).toFixed(3)} | ${quantile(ratio, 0.25).toFixed(2)}-${quantile(ratio, 0.75).toFixed(2)} | ${f(Math.min(...ta))}/${f(Math.max(...ta))} | ${f(Math.min(...tb))}/${f(Math.max(...tb))} |`);
  if (process.env.BENCH_DEBUG) console.error(name, ta.map(f).join(' '), '|', tb.map(f).join(' '));
}
