// Memory that outlives its owner, as a class (docs/security.md, "What a view
// promises"): random sequences of tensors made, viewed, disposed, passed as
// DLTensor*, borrowed by callbacks, with memory freed, reused (blocks of the
// same sizes filled with other values) and grown in between. Every tensor
// holds a value of its own; whatever a kept reference still reads must be its
// own tensor's value: a view of a disposed tensor keeps its memory, a
// borrowed DLTensor*'s array is a copy that C no longer sees once the
// callback returned (writing to it then changes nothing C reads), a
// DLTensor* of a disposed tensor is refused, a tensor disposed inside a
// callback stays valid for the C frames below it, and a detached buffer is a
// TypeError of ours wherever it is passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';
import { check } from '../support/seeded.mjs';

const wasm = readFileSync(new URL('../../dist/webffi.wasm', import.meta.url));
const rt = await loadTesting(await webffi.load({ wasm, autoloadBackends: false }));
const g = (name) => rt.getGlobal(name);
const echo = g('testing.echo');
const apply = g('testing.apply');
const withDLTensor = g('testing.call_with_dltensor');
const addOne = g('testing.add_one');

const KINDS = [[Int32Array, 'int32'], [Float64Array, 'float64'], [Float32Array, 'float32']];
// A full collection on demand: the finalizers of collected wrappers release
// their memory, which must never be memory a kept view still reads.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc');
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
async function collectTwice() {
  for (let k = 0; k < 2; k++) {
    collect();
    await settle();
  }
}

const op = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('make'), kind: fc.nat(2), n: fc.integer({ min: 1, max: 3000 }) }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('view'), i: fc.nat() }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('dispose'), i: fc.nat() }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('reuse'), i: fc.nat(), k: fc.integer({ min: 1, max: 4 }) }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('grow'), mib: fc.integer({ min: 4, max: 24 }) }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('borrow'), write: fc.option(fc.integer({ min: -1000, max: 1000 })), keep: fc.boolean(), twice: fc.boolean() }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('disposeInCallback'), i: fc.nat(), asView: fc.boolean() }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('pointer'), i: fc.nat() }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('usePointer'), j: fc.nat() }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('detached'), where: fc.nat(6) }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('collect'), forget: fc.boolean() }), weight: 1 },
);

async function run(ops) {
  let nextId = 1;
  const tensors = []; // { t, id, Arr, n }
  // arrays from view(), which must read their tensor's value or nothing; only
  // the value is kept here, not the tensor (the array alone must hold it)
  const views = [];
  const copies = []; // arrays from a borrowed view: C's no more once the callback returned
  const pointers = []; // { ref, entry }
  const fill = (entry) => entry.id * 3 + 1;
  const pick = (i) => (tensors.length ? tensors[i % tensors.length] : null);
  const make = (kind, n) => {
    const [Arr, dtype] = KINDS[kind];
    const id = nextId++;
    const t = rt.empty([n], dtype);
    const entry = { t, id, Arr, n };
    t.set(new Arr(n).fill(fill(entry)));
    return entry;
  };
  const garbage = (n, Arr) => {
    const t = rt.empty([n], Arr === Int32Array ? 'int32' : Arr === Float64Array ? 'float64' : 'float32');
    t.set(new Arr(n).fill(-7));
    return t;
  };
  // Each step runs in a plain function: a suspended async frame keeps stale
  // registers, which would hold a tensor the test means to let go.
  const step = (o) => {
    switch (o.op) {
      case 'make':
        tensors.push(make(o.kind, o.n));
        break;
      case 'view': {
        const e = pick(o.i);
        if (!e || e.t.disposed) break;
        views.push({ v: e.t.view(), id: e.id, want: fill(e), n: e.n, Arr: e.Arr });
        break;
      }
      case 'dispose':
        pick(o.i)?.t.dispose();
        break;
      case 'reuse': {
        // blocks the size of a tensor's, filled with another value: freed memory comes back here
        const e = pick(o.i);
        if (!e) break;
        const made = [];
        for (let k = 0; k < o.k; k++) made.push(garbage(e.n, e.Arr));
        for (const m of made) m.dispose();
        break;
      }
      case 'grow': {
        const big = rt.empty([o.mib << 18], 'float32');
        big.dispose();
        break;
      }
      case 'borrow': {
        // C's float32[2, 2] on its own frame: 1, 2, 3, 4; the result is their sum after the call
        let kept = null;
        const f = rt.toFFI((dl) => {
          const a = dl.view();
          assert.deepEqual(Array.from(a), [1, 2, 3, 4]);
          if (o.write !== null) a.fill(o.write);
          if (o.twice) assert.deepEqual(Array.from(dl.toTypedArray()), o.write === null ? [1, 2, 3, 4] : [o.write, o.write, o.write, o.write]);
          if (o.keep) kept = a;
          return null;
        });
        const sum = withDLTensor(f);
        f.dispose();
        assert.equal(sum, o.write === null ? 10 : 4 * o.write, 'what the callback wrote through its copy reached C');
        if (kept) copies.push(kept);
        for (const c of copies) c.fill(12345); // kept copies reach nothing of C's: the next call sums its own 1..4
        assert.equal(withDLTensor(rt.toFFI(() => null)), 10);
        break;
      }
      case 'disposeInCallback': {
        const e = pick(o.i);
        if (!e || e.t.disposed) break;
        // C holds the tensor's DLTensor* (or the tensor) while the callback disposes it and reuses memory
        const f = rt.toFFI((v) => {
          e.t.dispose();
          for (let k = 0; k < 3; k++) garbage(e.n, e.Arr).dispose();
          return Number(v.toTypedArray()[e.n - 1]);
        });
        const got = apply(f, o.asView ? e.t.asDLTensorPtr() : e.t);
        f.dispose();
        assert.equal(got, fill(e), 'the tensor stayed valid for the call that held it');
        break;
      }
      case 'pointer': {
        const e = pick(o.i);
        if (!e || e.t.disposed) break;
        pointers.push({ ref: e.t.asDLTensorPtr(), e });
        break;
      }
      case 'usePointer': {
        if (!pointers.length) break;
        const { ref, e } = pointers[o.j % pointers.length];
        let got;
        try {
          got = echo(ref);
        } catch (err) {
          assert.ok(e.t.disposed, `a live tensor's DLTensor* was refused: ${err.message}`);
          assert.ok(err instanceof webffi.ValueError && /disposed/.test(err.message), err.message);
          break;
        }
        assert.ok(!e.t.disposed, 'the DLTensor* of a disposed tensor was accepted');
        assert.equal(Number(got.toTypedArray()[0]), fill(e));
        break;
      }
      case 'detached': {
        const a = new Float32Array(4);
        structuredClone(a.buffer, { transfer: [a.buffer] });
        const calls = [
          () => rt.tensor(a),
          () => rt.empty([4], 'float32').set(a),
          () => rt.empty([4], 'float32').data(a),
          () => echo(a),
          () => webffi.encodeValue([a]),
          () => rt.toFFI({ k: a.buffer }),
          () => rt.toFFI([1, a]),
        ];
        // data() is async: its refusal is a rejection
        return Promise.resolve().then(calls[o.where]).then(() => null, (err) => err).then((threw) => {
          assert.ok(threw instanceof webffi.FFITypeError, `a detached buffer: ${threw?.constructor?.name}: ${threw?.message}`);
        });
      }
      case 'collect': {
        // drop the wrappers of disposed tensors (their views may live on), collect, let finalizers run, reuse
        if (o.forget) {
          for (let k = tensors.length - 1; k >= 0; k--) if (tensors[k].t.disposed) tensors.splice(k, 1);
        }
        return collectTwice().then(() => {
          for (const { n, Arr } of views) garbage(n, Arr).dispose();
        });
      }
      default:
        throw new Error(`unknown op ${o.op}`);
    }
    return null;
  };
  for (const o of ops) {
    const pending = step(o);
    if (pending !== null) await pending;
    for (const { v, id, want } of views) {
      if (v.length === 0) continue; // detached by memory growth: reads nothing
      for (let i = 0; i < v.length; i += Math.max(1, v.length >> 3)) {
        if (v[i] !== want) assert.fail(`a view of tensor #${id} reads ${v[i]}, not its ${want}`);
      }
    }
    assert.equal(rt.poisoned, null);
  }
  assert.equal(addOne(1), 2);
  for (const { t } of tensors) t.dispose();
}

test('kept views, pointers and borrowed arrays never reach memory their owner gave back', { timeout: 600000 }, async (t) => {
  // the finding itself first: a view kept past dispose and collection reads its tensor, not the next one
  await run([{ op: 'make', kind: 2, n: 1000 }, { op: 'view', i: 0 }, { op: 'dispose', i: 0 },
    { op: 'collect', forget: true }, { op: 'make', kind: 2, n: 1000 }, { op: 'reuse', i: 0, k: 2 }]);
  await check(t, import.meta.url, fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), run), 400);
});
