// Property-based fuzzing of the by-value codec (fast-check): random values
// round-trip; random and mutated encodings (tags, lengths, nesting, sharing
// and cycles, `__proto__`, huge numbers, fake lengths) decode to a value or
// throw an error of a webffi kind, never anything else, and the runtime that
// decodes them keeps answering with its heap intact. Each property runs with
// a fixed seed and a random one (printed); WEBFFI_FUZZ_RUNS=N runs longer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { runs, seeds, jsValue, ffiData, mutations, mutate, sameValue, isWebffiError } from '../support/fuzz_values.mjs';
import { BAD_PAYLOADS } from '../support/peer_corpus.mjs';
import { loadTesting } from '../support/testing_module.mjs';

const { encodeValue, decodeValue } = webffi;
const rt = await loadTesting(await webffi.load());
const addOne = rt.getGlobal('testing.add_one');
const recursiveEq = rt.getGlobal('ffi.RecursiveEq');
// Objects of the decoding runtime whose contents must not change, whatever is decoded.
const canaries = [rt.toFFI([1, 'two', [3]]), rt.getGlobal('ffi.Dict')('k', 7), rt.getGlobal('ffi.List')(5, 6)];
const canaryText = canaries.map(String).join('|');
const tally = { inputs: 0, values: 0, errors: 0, ms: 0 };

/** Runs a property with each seed; prints what it tried. */
function check(name, property, numRuns) {
  for (const seed of seeds()) {
    const t0 = performance.now();
    const before = tally.inputs;
    fc.assert(property, { seed, numRuns, endOnFailure: true });
    const ms = performance.now() - t0;
    tally.ms += ms;
    console.log(`# codec fuzz: ${name}: seed ${seed}, ${numRuns} runs, ${tally.inputs - before} decodes, ${ms.toFixed(0)} ms`);
  }
}

/** Decodes data with and without the runtime; every outcome is a value or a webffi error. */
function decodeAnyhow(data) {
  for (const runtime of [null, rt]) {
    tally.inputs++;
    try {
      rt.scope(() => { decodeValue(data, { runtime }); }); // handles made are released
      tally.values++;
    } catch (e) {
      if (!isWebffiError(e)) {
        throw new Error(`decodeValue threw a non-webffi error: ${e?.name}: ${String(e?.message).slice(0, 300)}`, { cause: e });
      }
      tally.errors++;
    }
  }
}

function runtimeIntact() {
  assert.equal(addOne(41), 42, 'the runtime answers');
  assert.equal(canaries.map(String).join('|'), canaryText, 'canaries unchanged');
}

test('random values round-trip through encodeValue, structured clone and decodeValue', () => {
  check('round trip', fc.property(jsValue, (v) => {
    tally.inputs++;
    tally.values++;
    const back = decodeValue(structuredClone(encodeValue(v)));
    return sameValue(v, back);
  }), runs(300));
});

test('random FFI containers round-trip into another runtime (RecursiveEq)', async () => {
  const other = await webffi.load();
  const toOther = other.getGlobal('ffi.RecursiveEq');
  check('ffi round trip', fc.property(ffiData, (v) => rt.scope(() => {
    tally.inputs++;
    tally.values++;
    const h = rt.toFFI(v);
    const back = other.scope(() => {
      const got = decodeValue(structuredClone(encodeValue(h)), { runtime: other });
      const again = decodeValue(encodeValue(h), { runtime: other });
      return webffi.isHandle(got) ? toOther(got, again) : sameValue(got, again);
    });
    return back === true && recursiveEq(h, h);
  })), runs(150));
});

test('mutated encodings decode to a value or a webffi error, and the runtime survives', () => {
  const encoded = fc.oneof(
    jsValue.map((v) => encodeValue(v)),
    ffiData.map((v) => rt.scope(() => encodeValue(rt.toFFI(v)))),
    fc.constantFrom(...BAD_PAYLOADS.map(([, build]) => build)).map((build) => {
      try {
        return structuredClone(build());
      } catch {
        return ['a', 1];
      }
    }),
    fc.constant(0).map(() => rt.scope(() => encodeValue([rt.objectClass('testing.TestIntPair').__ffi_init__(1, 2),
      rt.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2] }), rt.dtype('float32'), rt.device('cpu')]))),
  );
  check('mutations', fc.property(encoded, mutations, (data, list) => {
    const mutated = mutate(data, list);
    decodeAnyhow(mutated);
    let cloned;
    try {
      cloned = structuredClone(mutated);
    } catch {
      return true;
    }
    decodeAnyhow(cloned);
    return true;
  }), runs(1000));
  runtimeIntact();
});

test('arbitrary data decodes to a value or a webffi error', () => {
  const tagged = fc.tuple(fc.constantFrom('a', 'E', 'o', 'm', 'A', 'L', 'M', 'D', 'S', 'Ai', 'Li', 'O', 'X', 'dev', 'dt', 'f', 'i'),
    fc.array(fc.anything({ maxDepth: 3, withBigInt: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true, withDate: true }), { maxLength: 5 }))
    .map(([tag, rest]) => [tag, ...rest]);
  check('anything', fc.property(fc.oneof(tagged, fc.anything({ maxDepth: 3, withTypedArray: true, withMap: true })), (data) => {
    decodeAnyhow(data);
    return true;
  }), runs(1000));
  runtimeIntact();
  console.log(`# codec fuzz total: ${tally.inputs} inputs (${tally.values} values, ${tally.errors} webffi errors, 0 other), ${(tally.ms / 1000).toFixed(1)} s`);
});
