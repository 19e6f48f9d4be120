// The threaded core as a kind of runtime (docs/security.md, "Threads"):
// generated sequences of parallel launches (any split, failing tasks, JS
// callbacks from worker tasks, memory growing between and during them,
// long strings through the shared memory) leave the runtime working, every
// result equal to the single-threaded core's and every failure an error of
// the right kind; no launch hangs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { load, RuntimeError, ValueError } from '../../js/index.js';

const modules = fileURLToPath(new URL('../../build/wasm/tests/modules/', import.meta.url));
const quiet = { log() {}, warn() {} };
const mt = await load({ wasm: readFileSync(`${modules}parallel_mt.wasm`), threads: 2, logger: quiet });
const st = await load({ wasm: readFileSync(`${modules}parallel_st.wasm`), logger: quiet });
after(() => {
  mt.dispose();
  st.dispose();
});
const lib = (rt) => rt.getGlobal('ffi.SystemLib')();
const [kmt, kst] = [lib(mt), lib(st)];
const fn = (lib, name) => lib.getFunction(name);

const step = fc.oneof(
  fc.record({ op: fc.constant('sum'), n: fc.integer({ min: 0, max: 20000 }), tasks: fc.integer({ min: -3, max: 300 }), seed: fc.integer() }),
  fc.record({ op: fc.constant('fail'), tasks: fc.integer({ min: 0, max: 8 }), bad: fc.integer({ min: 0, max: 8 }) }),
  fc.record({ op: fc.constant('call'), tasks: fc.integer({ min: 0, max: 8 }) }),
  fc.record({ op: fc.constant('grow'), mib: fc.integer({ min: 1, max: 24 }) }),
  fc.record({ op: fc.constant('string'), s: fc.string({ unit: 'grapheme', maxLength: 200 }) }),
  fc.record({ op: fc.constant('barriers'), tasks: fc.integer({ min: 0, max: 8 }), rounds: fc.integer({ min: 0, max: 30 }) }),
);

function floats(n, seed) {
  const data = new Float32Array(n);
  let x = seed | 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) | 0;
    data[i] = x / 2 ** 31;
  }
  return data;
}

test('generated launches keep the threaded core working and equal to the serial one', () => {
  const kept = [];
  fc.assert(fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
    for (const s of steps) {
      if (s.op === 'sum') {
        const data = floats(s.n, s.seed);
        const [a, b] = [mt.tensor(data), st.tensor(data)];
        try {
          const tasks = Math.max(0, s.tasks);
          assert.ok(Object.is(fn(kmt, 'sum')(a, tasks), fn(kst, 'sum')(b, tasks)));
        } finally {
          a.dispose();
          b.dispose();
        }
      } else if (s.op === 'fail') {
        const failing = s.bad < Math.max(1, Math.min(s.tasks === 0 ? 2 : s.tasks, 2));
        if (failing) {
          assert.throws(() => fn(kmt, 'fail')(s.tasks, s.bad), (e) => e instanceof ValueError && e.message === `task ${s.bad} failed`);
        } else {
          assert.equal(fn(kmt, 'fail')(s.tasks, s.bad), null);
        }
      } else if (s.op === 'call') {
        let calls = 0;
        const onWorker = (s.tasks === 0 ? 2 : Math.min(s.tasks, 2)) > 1;
        const run = () => fn(kmt, 'call')(() => void calls++, s.tasks);
        if (onWorker) assert.throws(run, (e) => e instanceof RuntimeError && /cannot be called from a worker thread/.test(e.message));
        else run();
        assert.equal(calls, 1);
      } else if (s.op === 'grow') {
        kept.push(mt.empty([s.mib << 18], 'float32'));
        if (kept.length > 4) kept.shift().dispose();
      } else if (s.op === 'string') {
        assert.equal(mt.getGlobal('ffi.String')(s.s), s.s.toWellFormed());
      } else {
        assert.equal(fn(kmt, 'barriers')(s.tasks, s.rounds), 1);
      }
    }
    assert.equal(fn(kmt, 'tasks')(0), 2, 'the pool still has both threads');
  }), { numRuns: 40 });
  for (const t of kept) t.dispose();
});
