// JS runtime call costs, as ns/op and as a ratio to a raw wasm export call
// (WebFFIObjectStrongCount(0): a JS -> wasm call doing almost nothing)
// measured in the same run. Run: node bench/runtime.bench.mjs
import { load } from '../js/index.js';
import { loadTesting } from '../js/testing.js';

// testing.* (the test fixtures) are a module of their own, loaded into each runtime.
const rt = await loadTesting(await load());
// The same core with C backtraces off (load({ backtraces: false })).
const quiet = await loadTesting(await load({ backtraces: false }));
const quietRaise = quiet.getGlobal('testing.test_raise_error');
// The floor of a callback: a wasm export whose body only calls a JS import
// (the two boundary crossings of JS -> C -> JS, nothing else), hand-assembled:
// (func (export "g") (param i32) (result i32) (call $f (local.get 0))).
const trampoline = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, 2, 7, 1, 1, 0x65, 1, 0x66, 0, 0,
  3, 2, 1, 0, 7, 5, 1, 1, 0x67, 0, 1, 0x0a, 8, 1, 6, 0, 0x20, 0, 0x10, 0, 0x0b,
])), { e: { f: (a) => a } }).exports.g;
const x = rt.exports;
const nop = rt.getGlobal('testing.nop');
const apply = rt.getGlobal('testing.apply');
const raise = rt.getGlobal('testing.test_raise_error');
const callback = rt.toFFI((a) => a);
const str16 = '0123456789abcdef';
const ints100 = Array.from({ length: 100 }, (_, i) => i);

// Each row runs in its own loop function (distinct source, so V8 neither
// shares its feedback nor its code between rows): the call to `body` stays
// monomorphic and inlinable, as a call site in user code is. One shared loop
// would inline only the first rows measured (the baseline among them) and
// charge every later row ~2.5 ns of polymorphic call.
let rowCount = 0;

/** Best of 5 rounds of n calls, in ns per call. */
function measure(n, body) {
  const loop = new Function('body', 'n', `for (let i = 0; i < n; i++) body(); // row ${++rowCount}`);
  loop(body, n); // warm up
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now();
    loop(body, n);
    best = Math.min(best, ((performance.now() - t0) * 1e6) / n);
  }
  return best;
}

const raw = measure(2e6, () => x.WebFFIObjectStrongCount(0));
// The C floor of a packed call: TVMFFIFunctionCall straight from JS with the
// two int arguments already in memory (no marshaling at all).
const argv = x.WebFFIHeapAlloc(48);
const words = new Int32Array(x.memory.buffer, argv, 12);
words.set([1, 0, 1, 0, 1, 0, 2, 0, 0, 0, 0, 0]); // int 1, int 2, None
const fnPtr = nop.handle;
// What nop(1, 2) calls: the arguments as wasm parameters, C writes the Anys.
const callWords = x.WebFFIFunctionCallWords;
const rows = [
  ['raw wasm export call (baseline)', raw],
  ['C floor: TVMFFIFunctionCall(nop, 2 ints) export', measure(1e6, () => x.TVMFFIFunctionCall(fnPtr, argv, 2, argv + 32))],
  ...(callWords ? [['C floor: WebFFIFunctionCallWords(nop, 1, 2) export', measure(1e6, () => callWords(fnPtr, 2, 0, 1, 2, 0, 0, argv + 32))]] : []),
  ['packed call, two ints: nop(1, 2)', measure(1e6, () => nop(1, 2))],
  ['packed call, 16-byte string argument', measure(1e6, () => nop(str16))],
  ['floor: raw wasm export calling a JS import (JS -> wasm -> JS)', measure(1e6, () => trampoline(1))],
  ['JS -> C -> JS callback: apply(cb, 1)', measure(5e5, () => apply(callback, 1))],
  ['100-int Array create + dispose', measure(5e4, () => rt.toFFI(ints100).dispose())],
  ['C error thrown and caught in JS', measure(5e4, () => {
    try {
      raise('ValueError', 'bench');
    } catch {
      // expected
    }
  })],
  ['C error thrown and caught in JS, backtraces off', measure(5e4, () => {
    try {
      quietRaise('ValueError', 'bench');
    } catch {
      // expected
    }
  })],
  // For scale: one V8 stack capture here, which every error pays at least once.
  ['JS: new Error() (V8 stack capture)', measure(5e4, () => new Error('bench'))],
];

console.log('| operation | ns/op | ratio to raw export call |');
console.log('|---|---:|---:|');
for (const [name, ns] of rows) console.log(`| ${name} | ${ns.toFixed(1)} | ${(ns / raw).toFixed(1)}x |`);
