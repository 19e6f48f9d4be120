// Property-based fuzzing of how errors keep their backtraces: one error
// (made in JS, an FFI error made in JS, raised in C, raised in C with a
// cause and extra context) thrown through C callbacks at random depths,
// rethrown from catch blocks, passed to C as a value and converted, in
// random order and number. Every time it comes back as itself, and its
// backtrace stays bounded: at most its own frames plus one path's (the
// stack is captured 64 frames deep), never growing with repetition, with
// no line 0. (Before, 2,000 rethrows of one error grew its backtrace from
// 169 to 220,059 characters.)
//
// CI runs a fixed seed and a random one; WEBFFI_FUZZ_RUNS=N runs N inputs
// per seed, WEBFFI_FUZZ_SEED=S replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

const RUNS = Number(process.env.WEBFFI_FUZZ_RUNS ?? 300);
const FIXED_SEED = 20261203;
/** Frames an error's backtrace may hold: its own and one path's, each at most a 64-frame capture, inlined calls twice over. */
const MAX_LINES = 4 * 64;

const rt = await loadTesting(await webffi.load({ autoloadBackends: false }));
const g = (name) => rt.getGlobal(name);
const apply = g('testing.apply');
const echo = g('testing.echo');
const raise = g('testing.test_raise_error');
const chained = g('testing.raise_chained');

/** The errors a run starts from, by kind. */
const makers = {
  js: () => new Error('made in JS'),
  ffi: () => new webffi.KeyError('an FFI error made in JS'),
  c: () => caught(() => raise('ValueError', 'raised in C')),
  chained: () => caught(() => chained('ValueError', 'outer', 'KeyError', 'inner', rt.toFFI([1]))),
};

function caught(f) {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** Throws err from inside `depth` nested C calls (apply), rethrowing on the way out when asked. */
function throwThrough(err, depth, rethrow) {
  const inner = () => {
    throw err;
  };
  let f = inner;
  for (let d = 1; d < depth; d++) {
    const g2 = f;
    f = rethrow ? () => {
      try {
        return apply(g2);
      } catch (e) {
        throw e;
      }
    } : () => apply(g2);
  }
  return caught(() => apply(f));
}

const operation = fc.oneof(
  fc.record({ op: fc.constant('throw'), depth: fc.integer({ min: 1, max: 4 }), rethrow: fc.boolean() }),
  fc.record({ op: fc.constant('echo') }),
  fc.record({ op: fc.constant('toFFI') }),
  fc.record({ op: fc.constant('echoInCallback'), depth: fc.integer({ min: 1, max: 3 }) }),
);

function run(err, { op, depth, rethrow }) {
  switch (op) {
    case 'throw':
      return throwThrough(err, depth, rethrow);
    case 'echo':
      return echo(err);
    case 'toFFI':
      return rt.toFFI(err);
    default: { // passed to C as a value from inside nested callbacks, then thrown out
      let f = () => {
        throw echo(err);
      };
      for (let d = 1; d < depth; d++) {
        const g2 = f;
        f = () => apply(g2);
      }
      return caught(() => apply(f));
    }
  }
}

const lines = (text) => text.split('\n').filter(Boolean);

function check(kind, ops) {
  const err = makers[kind]();
  for (const o of ops) {
    assert.equal(run(err, o), err, `identity after ${JSON.stringify(o)}`);
    const bt = err.backtrace;
    assert.equal(typeof bt, 'string');
    assert.ok(lines(bt).length <= MAX_LINES, `${kind}: ${lines(bt).length} lines after ${JSON.stringify(ops)}`);
    assert.ok(!/line 0\b/.test(bt), bt);
    for (const line of lines(bt)) assert.match(line, /^ {2}File ".*", line (\d+|unknown), in .+$/);
  }
  // the same operation again and again: the backtrace stops changing
  const last = ops[ops.length - 1];
  run(err, last);
  const settled = err.backtrace.length;
  for (let i = 0; i < 3; i++) run(err, last);
  assert.equal(err.backtrace.length, settled, `${kind}: still growing under ${JSON.stringify(last)}`);
  assert.equal(rt.poisoned, null);
}

const property = fc.property(fc.constantFrom(...Object.keys(makers)), fc.array(operation, { minLength: 1, maxLength: 12 }), check);

const seeds = process.env.WEBFFI_FUZZ_SEED ? [Number(process.env.WEBFFI_FUZZ_SEED)]
  : [FIXED_SEED, Math.floor(Math.random() * 2 ** 31)];
for (const seed of seeds) {
  test(`an error's backtrace stays bounded however it is thrown and passed (${RUNS} runs, seed ${seed})`, () => {
    fc.assert(property, { numRuns: RUNS, seed });
  });
}

test('2,000 rethrows of one error through C leave its backtrace the length one throw gives', () => {
  for (const kind of Object.keys(makers)) {
    const err = makers[kind]();
    throwThrough(err, 1, false);
    const once = err.backtrace.length;
    for (let i = 0; i < 2000; i++) throwThrough(err, 1, false);
    assert.equal(err.backtrace.length, once, kind);
  }
  const live = rt.liveJSValues;
  for (let i = 0; i < 100; i++) throwThrough(new Error('fresh'), 2, true);
  assert.equal(rt.liveJSValues, live, 'the thrown values C held are released');
});
