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

// Handle lifetimes under deferred registration (js/runtime/lifetimes.js):
// handles of three kinds (an Array, a Function, a Tensor wrapper, each a new
// reference to a root object whose use count the core reports) made, kept,
// dropped and disposed at random, in and out of nested scopes (a scope's
// result escaping it, a scope that throws), inside JS callbacks C calls,
// hundreds in one job (past the pending list), with memory grown and
// collections in between. At every step no handle still held has lost its
// reference (each root's count is at least 1 + its live handles), every
// live handle still works, a disposed one is a ValueError naming its type,
// and a scope disposed exactly what it made; after a collection every
// dropped handle's reference is given back (the count is exactly 1 + live),
// however it was made.
const useCount = g('testing.object_use_count');
const ROOTS = [
  { key: 'ffi.Array', root: rt.toFFI([1, 2]), works: (h) => h.length === 2 },
  { key: 'ffi.Function', root: rt.toFFI((v) => v), works: (h) => h(5) === 5 },
  { key: 'ffi.Tensor', root: rt.tensor(new Float32Array([7, 7])), works: (h) => h.toTypedArray()[1] === 7 },
];

const leaf = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('make'), r: fc.nat(2), keep: fc.boolean() }), weight: 8 },
  { arbitrary: fc.record({ op: fc.constant('dispose'), i: fc.nat() }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('drop'), i: fc.nat() }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('many'), r: fc.nat(2), n: fc.integer({ min: 100, max: 600 }), keep: fc.nat(3) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('grow'), mib: fc.integer({ min: 2, max: 16 }) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('viewInScope'), n: fc.integer({ min: 1, max: 2000 }) }), weight: 1 },
);
const { block } = fc.letrec((tie) => ({
  block: fc.oneof({ maxDepth: 3, depthIdentifier: 'block' },
    leaf,
    fc.record({ op: fc.constant('scope'), body: fc.array(tie('block'), { maxLength: 8 }), ret: fc.option(fc.nat()), throws: fc.boolean() }),
    fc.record({ op: fc.constant('callback'), body: fc.array(tie('block'), { maxLength: 6 }) })),
}));
const topOp = fc.oneof(
  { arbitrary: block, weight: 12 },
  { arbitrary: fc.record({ op: fc.constant('collect') }), weight: 1 },
);

async function runHandles(ops) {
  const kept = []; // { h, r } held by this test
  const views = []; // { v, want }: arrays from view() of tensors a scope disposed
  const made = []; // per open scope: the handles made in it (and results of scopes in it)
  const checkAll = () => {
    for (let r = 0; r < ROOTS.length; r++) {
      let live = 0;
      for (const e of kept) if (e.r === r && !e.h.disposed) live++;
      const n = useCount(ROOTS[r].root);
      if (n < 1 + live) assert.fail(`${ROOTS[r].key}: use count ${n} below the ${1 + live} still held`);
    }
    for (const { h, r } of kept) {
      const { key, works } = ROOTS[r];
      if (h.disposed) {
        assert.throws(() => echo(h), (e) => e instanceof webffi.ValueError && e.message === `Cannot use a disposed \`${key}\``);
      } else {
        assert.ok(works(h), `a live ${key} handle stopped working`);
      }
    }
    for (const { v, want } of views) {
      if (v.length !== 0 && v[v.length - 1] !== want) assert.fail(`a view of a disposed tensor reads ${v[v.length - 1]}, not ${want}`);
    }
  };
  const madeHere = (h) => {
    if (made.length) made[made.length - 1].push(h);
  };
  const exec = (o) => {
    switch (o.op) {
      case 'make': {
        const h = echo(ROOTS[o.r].root);
        madeHere(h);
        if (o.keep) kept.push({ h, r: o.r });
        return h;
      }
      case 'dispose':
        if (kept.length) kept[o.i % kept.length].h.dispose();
        return null;
      case 'drop':
        if (kept.length) kept.splice(o.i % kept.length, 1);
        return null;
      case 'many': {
        for (let k = 0; k < o.n; k++) {
          const h = echo(ROOTS[o.r].root);
          madeHere(h);
          if (k < o.keep) kept.push({ h, r: o.r });
        }
        return null;
      }
      case 'grow':
        rt.empty([o.mib << 18], 'float32').dispose();
        return null;
      case 'viewInScope': {
        const want = o.n % 251;
        rt.scope(() => {
          const t = rt.empty([o.n], 'float32');
          t.set(new Float32Array(o.n).fill(want));
          views.push({ v: t.view(), want });
        });
        rt.empty([o.n], 'float32').set(new Float32Array(o.n).fill(-1)); // memory given back would be reused here
        return null;
      }
      case 'scope': {
        const mine = [];
        made.push(mine);
        let result;
        let threw = false;
        try {
          result = rt.scope(() => {
            const results = [];
            for (const b of o.body) {
              const h = exec(b);
              if (h) results.push(h);
            }
            if (o.throws) throw new Error('scope body');
            const live = results.filter((h) => !h.disposed);
            return o.ret !== null && live.length ? live[o.ret % live.length] : undefined;
          });
        } catch (e) {
          if (e.message !== 'scope body') throw e;
          threw = true;
        } finally {
          made.pop();
        }
        for (const h of mine) {
          if (h !== result) assert.ok(h.disposed, 'a handle made in a scope outlived it');
        }
        if (result !== undefined) {
          assert.ok(!threw && !result.disposed, 'the scope\'s result was disposed');
          madeHere(result); // the enclosing scope takes it
        }
        return result ?? null;
      }
      case 'callback': {
        let out = null;
        const cb = rt.toFFI((x) => {
          for (const b of o.body) {
            const h = exec(b);
            if (h) out = h;
          }
          checkAll();
          return x;
        });
        assert.equal(g('testing.apply')(cb, 3), 3);
        cb.dispose();
        return out;
      }
      case 'collect':
        return null;
      default:
        throw new Error(`unknown op ${o.op}`);
    }
  };
  for (const o of ops) {
    exec(o);
    checkAll();
    if (o.op === 'collect') {
      const expected = (r) => 1 + kept.filter((e) => e.r === r && !e.h.disposed).length;
      for (let k = 0; k < 60 && ROOTS.some((_, r) => useCount(ROOTS[r].root) !== expected(r)); k++) {
        collect();
        await settle();
      }
      for (let r = 0; r < ROOTS.length; r++) assert.equal(useCount(ROOTS[r].root), expected(r), `${ROOTS[r].key}: dropped handles were not all released`);
      checkAll();
    }
  }
  for (const { h } of kept) h.dispose();
  assert.equal(rt.poisoned, null);
}

test('handles kept, dropped and disposed in and out of scopes and callbacks keep their references exactly as long as they are held', { timeout: 600000 }, async (t) => {
  await runHandles([{ op: 'scope', body: [{ op: 'make', r: 0, keep: true }, { op: 'make', r: 2, keep: false }], ret: 1, throws: false },
    { op: 'collect' }]);
  await check(t, import.meta.url, fc.asyncProperty(fc.array(topOp, { minLength: 3, maxLength: 25 }).map((a) => [...a, { op: 'collect' }]), runHandles), 150);
});
