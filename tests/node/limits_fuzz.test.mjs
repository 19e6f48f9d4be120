// The smaller findings, each as a class: nesting counted the same way
// everywhere (containers are the levels, 256 at most: JSON, JS values, the
// codec, C containers), error kinds and messages kept whole (NUL included),
// dtype names (a width of 0 refused, void named, every float8 a tensor),
// allocation failures naming the size asked for, and RPC work-directory names
// that listdir gives back as they were uploaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';
import { check } from '../support/seeded.mjs';

const wasm = readFileSync(new URL('../../dist/webffi.wasm', import.meta.url));
const rt = await loadTesting(await webffi.load({ wasm, autoloadBackends: false }));
const g = (name) => rt.getGlobal(name);
const LIMIT = 256;

/** A value nested `levels` containers deep (kinds[i % n] at level i), innermost empty or holding a scalar. */
function nested(levels, kinds, innermost) {
  const wrap = (kind, inner) => (kind === 'array' ? (inner === undefined ? [] : [inner]) : inner === undefined ? {} : { k: inner });
  let v = wrap(kinds[(levels - 1) % kinds.length], innermost === 'empty' ? undefined : 7);
  for (let i = levels - 2; i >= 0; i--) v = wrap(kinds[i % kinds.length], v);
  return v;
}

/** Whether f() succeeds; a refusal must be a ValueError saying the limit. */
function accepted(f, what) {
  try {
    const r = f();
    if (webffi.isHandle(r)) r.dispose();
    return true;
  } catch (e) {
    assert.ok(e instanceof webffi.ValueError && /256 levels/i.test(e.message), `${what}: ${e?.constructor?.name}: ${e?.message}`);
    return false;
  }
}

test('every reader and writer counts nesting the same way: 256 containers, the innermost empty or not', { timeout: 300000 }, async (t) => {
  const property = fc.property(
    fc.integer({ min: LIMIT - 4, max: LIMIT + 4 }),
    fc.array(fc.constantFrom('array', 'object'), { minLength: 1, maxLength: 3 }),
    fc.constantFrom('empty', 'scalar'),
    (levels, kinds, innermost) => {
      const v = nested(levels, kinds, innermost);
      const want = levels <= LIMIT;
      assert.equal(accepted(() => g('ffi.json.Parse')(JSON.stringify(v)), 'json.Parse'), want, `json.Parse of ${levels} levels`);
      assert.equal(accepted(() => rt.toFFI(v), 'toFFI'), want, `toFFI of ${levels} levels`);
      assert.equal(accepted(() => webffi.encodeValue(v), 'encodeValue'), want, `encodeValue of ${levels} levels`);
      if (levels === LIMIT) {
        // decodeValue of data a peer wrapped once more
        const encoded = webffi.encodeValue(v);
        assert.equal(accepted(() => webffi.decodeValue(['a', encoded]), 'decodeValue'), false);
        assert.equal(accepted(() => webffi.decodeValue(encoded), 'decodeValue'), true);
        // C containers built bottom-up: one more level is refused
        const list = rt.toFFI(v);
        assert.equal(accepted(() => g('ffi.List')(list), 'ffi.List'), false);
        assert.equal(accepted(() => g('ffi.json.Stringify')(list), 'json.Stringify'), true);
        list.dispose();
      }
    });
  await check(t, import.meta.url, property, 60);
});

test('error kinds and messages cross C whole, NUL and all', { timeout: 300000 }, async (t) => {
  const text = fc.string({ unit: fc.oneof(fc.constantFrom('\0', 'é', '\u{1F600}', ':'), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' })), minLength: 1, maxLength: 24 });
  const property = fc.property(text, text, (kind, message) => {
    let caught = null;
    try {
      g('testing.test_raise_error')(kind, message);
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof webffi.FFIError, String(caught));
    assert.equal(caught.kind, kind);
    assert.equal(caught.message, message);
    const back = webffi.decodeValue(webffi.encodeValue(caught));
    assert.deepEqual([back.kind, back.message], [kind, message]);
  });
  await check(t, import.meta.url, property, 300);
});

test('dtype names: a width of 0 or past 255 is refused, every accepted name prints back to itself', { timeout: 300000 }, async (t) => {
  const family = fc.constantFrom('int', 'uint', 'float', 'bfloat', 'i', 'u', 'f', 'bf');
  const property = fc.property(family, fc.integer({ min: 0, max: 300 }), fc.boolean(), fc.option(fc.integer({ min: 1, max: 16 })),
    (fam, bits, padded, lanes) => {
      const digits = padded ? String(bits).padStart(3, '0') : String(bits);
      const name = `${fam}${digits}${lanes === null ? '' : `x${lanes}`}`;
      let dt = null;
      try {
        dt = rt.dtype(name);
      } catch (e) {
        assert.ok(e instanceof webffi.ValueError, `${name}: ${e}`);
      }
      assert.equal(dt !== null, bits >= 1 && bits <= 255, `${name} ${dt === null ? 'refused' : `read as ${dt}`}`);
      if (dt !== null) {
        assert.equal(dt.bits, bits);
        const again = rt.dtype(String(dt));
        assert.deepEqual([again.code, again.bits, again.lanes], [dt.code, dt.bits, dt.lanes]);
      }
    });
  await check(t, import.meta.url, property, 400);
  assert.equal(String(rt.dtype('void')), 'void');
  assert.equal(String(rt.dtype('')), 'void');
  for (const name of ['float8_e3m4', 'float8_e4m3', 'float8_e4m3b11fnuz', 'float8_e4m3fn', 'float8_e4m3fnuz', 'float8_e5m2', 'float8_e5m2fnuz', 'float8_e8m0fnu']) {
    const tensor = rt.empty([5], name);
    assert.equal(String(tensor.dtype), name);
    tensor.set(new Uint8Array([1, 2, 3, 4, 255]));
    assert.deepEqual(Array.from(tensor.toTypedArray()), [1, 2, 3, 4, 255]);
    assert.ok(tensor.view() instanceof Uint8Array);
    tensor.dispose();
  }
});

test('an allocation too large names the bytes asked for', { timeout: 300000 }, async (t) => {
  const dtypes = { float32: 4, float64: 8, int16: 2, uint8: 1 };
  const property = fc.property(fc.constantFrom(...Object.keys(dtypes)), fc.array(fc.integer({ min: 2, max: 2 ** 20 }), { minLength: 1, maxLength: 4 }),
    (dtype, shape) => {
      const bytes = shape.reduce((a, b) => a * b, dtypes[dtype]);
      fc.pre(bytes >= 2 ** 32 && Number.isSafeInteger(bytes));
      assert.throws(() => rt.empty(shape, dtype), (e) => e instanceof webffi.MemoryError && e.message === `Failed to allocate ${bytes} bytes`);
    });
  await check(t, import.meta.url, property, 100);
  assert.throws(() => rt.empty([2 ** 31], 'float32'), { message: 'Failed to allocate 8589934592 bytes' });
});

test('RPC work-directory names come back from listdir as uploaded; a comma in one is refused', { timeout: 300000 }, async (t) => {
  const server = await webffi.listenRPC(rt, { port: 0, allowUpload: true, onError() {} });
  const session = await webffi.connectRPC(`127.0.0.1:${server.port}`, 'webffi');
  try {
    const name = fc.string({ unit: fc.oneof(fc.constantFrom(',', ' ', '.', 'é'), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' })), minLength: 1, maxLength: 12 })
      .filter((s) => !s.startsWith('/'));
    const property = fc.asyncProperty(fc.uniqueArray(name, { maxLength: 6 }), async (names) => {
      for (const n of await session.listdir()) await session.remove(n);
      const stored = [];
      for (const n of names) {
        try {
          await session.upload(n, new Uint8Array([1]));
          stored.push(n);
        } catch (e) {
          assert.ok(n.includes(','), `${JSON.stringify(n)} refused: ${e.message}`);
          assert.match(e.message, /no comma/);
          continue;
        }
        assert.ok(!n.includes(','), `${JSON.stringify(n)} was stored`);
      }
      assert.deepEqual((await session.listdir()).sort(), stored.sort());
    });
    await check(t, import.meta.url, property, 40);
  } finally {
    await session.close();
    await server.close();
  }
});
