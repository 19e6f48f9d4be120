// Property test of how strings reach C: every length around the small-string
// and ASCII-loop bounds, ASCII or not, with NUL bytes and lone surrogates,
// alone or among ints, handles and None, in each of the four positions that
// go as wasm parameters (a plain ASCII string as a `const char*` in the call
// frame), past four arguments (the general path), inside containers and as
// a callback's argument and result. What comes back from C must be the
// string as UTF-8 would carry it (lone surrogates as U+FFFD, as TextEncoder
// writes them), and the runtime must keep answering, its frame released.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { load } from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

const RUNS = Number(process.env.WEBFFI_FUZZ_RUNS ?? 2000);
const rt = await loadTesting(await load({ autoloadBackends: false }));
const list = rt.getGlobal('ffi.List');
const echo = rt.getGlobal('testing.echo');
const apply = rt.getGlobal('testing.apply');
const handle = list(1, 2);

// What a string is once it went through UTF-8 and back.
const carried = (s) => new TextDecoder().decode(new TextEncoder().encode(s));

const char = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\0', '\x7f', '\x80', 'é', '\u07ff', '\u0800', '€', '\ud800', '\udfff', '😀', '\x01') },
);
const lengths = fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 40, max: 56 }), fc.integer({ min: 0, max: 600 }));
const text = fc.tuple(lengths, fc.array(char, { minLength: 1, maxLength: 8 }), fc.boolean())
  .map(([n, pool, ascii]) => {
    // mostly one character class repeated, so long ASCII-only strings are common
    let s = '';
    for (let i = 0; s.length < n; i++) s += ascii ? String.fromCharCode(0x41 + (i % 26)) : pool[i % pool.length];
    return s.slice(0, n);
  });
const other = fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.constantFrom(0, -1), fc.constant(null), fc.constant(true), fc.constant('handle'));
const args = fc.array(fc.oneof(text.map((s) => ({ s })), other), { minLength: 1, maxLength: 7 });

const real = (a) => (a?.s !== undefined ? a.s : a === 'handle' ? handle : a);
const expect = (a) => (a?.s !== undefined ? carried(a.s) : a);

test('strings reach C whole in every argument position and path', () => {
  fc.assert(fc.property(args, (as) => {
    const got = list(...as.map(real));
    try {
      assert.equal(got.length, as.length);
      for (let i = 0; i < as.length; i++) {
        const v = got.get(i);
        if (as[i] === 'handle') {
          assert.deepEqual(v.toJS(), [1, 2]);
          v.dispose();
        } else {
          assert.equal(v, expect(as[i]));
        }
      }
    } finally {
      got.dispose();
    }
    for (const a of as) {
      if (a?.s === undefined) continue;
      assert.equal(echo(a.s), carried(a.s));
      assert.equal(apply((x) => x, a.s), carried(a.s));
      assert.equal(apply(() => a.s), carried(a.s));
      const arr = rt.toFFI([a.s, 1]);
      assert.equal(arr.get(0), carried(a.s));
      arr.dispose();
    }
    // still answering, frame released
    assert.equal(rt.getGlobal('testing.add_one')(41), 42);
  }), { numRuns: RUNS, seed: process.env.WEBFFI_FUZZ_SEED ? Number(process.env.WEBFFI_FUZZ_SEED) : undefined });
});

test('a string argument after a string that needs the general path', () => {
  const long = 'x'.repeat(200);
  assert.deepEqual(list('é'.repeat(9), long, 'plain ascii text', 'a\0b and more').toJS(), ['é'.repeat(9), long, 'plain ascii text', 'a\0b and more']);
  assert.deepEqual(list(long, 'short', '\ud800 lone and long enough', 7).toJS(), [long, 'short', '\ufffd lone and long enough', 7]);
});
