// Exceptions that unwind through C, as a class: every entry into wasm is run
// at a random JS stack depth near the engine's limit, so the stack overflow
// (a RangeError, not a trap) happens before the call, inside C, inside a
// callback C made, or inside a deleter. Whatever unwinds, the runtime must
// not be poisoned, the shadow stack pointer must come back to where it was,
// the release machinery must keep releasing (a canary's count drops when the
// List holding it is disposed), and memory must not grow round after round.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';
import { check } from '../support/seeded.mjs';

const wasm = readFileSync(new URL('../../dist/webffi.wasm', import.meta.url));
const rt = await loadTesting(await webffi.load({ wasm, autoloadBackends: false }));
const x = rt.exports;
const g = (name) => rt.getGlobal(name);
const addOne = g('testing.add_one');
const apply = g('testing.apply');
const useCount = g('testing.object_use_count');
const List = g('ffi.List');
const parse = g('ffi.json.Parse');
const repr = g('ffi.ReprPrint');
const hash = g('ffi.RecursiveHash');
const raise = g('testing.test_raise_error');
const stackBase = x.WebFFIStackPointer();

const nestedText = (n) => '['.repeat(n) + ']'.repeat(n);
const doc = nestedText(250);
const nestedJS = (n) => {
  let v = [1];
  for (let i = 1; i < n; i++) v = [v, 'x'];
  return v;
};
/** A List nested `n` deep whose innermost holds a JS function (released through C's deleters and release_js). */
const nestedList = (n) => {
  let l = List(() => 1);
  for (let i = 1; i < n; i++) {
    const outer = List(l, i);
    l.dispose();
    l = outer;
  }
  return l;
};

// Each entry does its own work into wasm; what it makes it releases.
const ENTRIES = {
  parse: () => parse(doc).dispose(),
  disposeNested: () => nestedList(120).dispose(),
  callback: () => apply((a, b) => addOne(a) + addOne(b), 1, 2),
  callbackNested: () => apply(() => apply(() => parse(nestedText(60)).dispose()), null),
  callbackThrows: () => {
    const thrown = new webffi.ValueError('from JS');
    try {
      apply(() => {
        throw thrown;
      });
    } catch (e) {
      if (e !== thrown) throw e;
    }
  },
  toFFI: () => rt.toFFI(nestedJS(120)).dispose(),
  repr: () => {
    const l = rt.toFFI(nestedJS(100));
    try {
      return repr(l);
    } finally {
      l.dispose();
    }
  },
  hash: () => {
    const l = rt.toFFI(nestedJS(100));
    try {
      return hash(l);
    } finally {
      l.dispose();
    }
  },
  codec: () => {
    const l = List(1, 'two', [3, [4]]);
    try {
      webffi.decodeValue(webffi.encodeValue(l), { runtime: rt }).dispose();
    } finally {
      l.dispose();
    }
  },
  tensor: () => {
    const t = rt.tensor(new Float32Array(64).fill(2));
    try {
      return t.view()[3] + apply((v) => v.toTypedArray()[0], t.asDLTensorPtr());
    } finally {
      t.dispose();
    }
  },
  register: () => {
    rt.registerGlobal('unwind.fn', (a) => a + 1, { override: true });
    try {
      return g('unwind.fn')(1);
    } finally {
      rt.removeGlobal('unwind.fn');
    }
  },
  raise: () => {
    try {
      raise('ValueError', 'raised in C');
    } catch (e) {
      if (!(e instanceof webffi.ValueError)) throw e;
    }
  },
};
const names = Object.keys(ENTRIES);

function deep(n, f) {
  if (n > 0) {
    const r = deep(n - 1, f);
    return r;
  }
  return f();
}
const fits = (d) => {
  try {
    deep(d, () => 0);
    return true;
  } catch {
    return false;
  }
};
/** The deepest recursion of `deep` that fits now (frames change size as the JIT tiers up). */
function limit() {
  let lo = 0;
  let hi = 1 << 20;
  while (lo + 1 < hi) {
    const m = (lo + hi) >> 1;
    if (fits(m)) lo = m;
    else hi = m;
  }
  return lo;
}

const canary = List('canary');
const outcomes = new Map();

function sound(what) {
  assert.equal(rt.poisoned, null, `${what}: the instance was poisoned`);
  assert.equal(addOne(41), 42, `${what}: the runtime no longer answers`);
  // the next call finished whatever unwind the last one could not
  assert.equal(x.WebFFIStackPointer(), stackBase, `${what}: the shadow stack pointer did not come back`);
  const holder = List(canary);
  assert.equal(useCount(canary), 2);
  holder.dispose();
  assert.equal(useCount(canary), 1, `${what}: the release machinery is stuck (a disposed List kept its item)`);
}

let top = limit();
let runs = 0;
const property = fc.property(fc.constantFrom(...names), fc.nat(6000), (name, below) => {
  if (++runs % 50 === 0) top = limit();
  let outcome = 'returned';
  try {
    deep(Math.max(0, top - below), ENTRIES[name]);
  } catch (e) {
    if (!(e instanceof RangeError) && !(e instanceof webffi.FFIError && !(e instanceof webffi.FatalError))) {
      throw new Error(`${name}: an unexpected ${e?.constructor?.name} escaped: ${e?.stack ?? e}`);
    }
    outcome = e instanceof RangeError ? 'stack overflow' : e.kind;
  }
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  sound(name);
});

test('an exception that unwinds through C at any JS stack depth leaves the runtime working', { timeout: 600000 }, async (t) => {
  const memoryBefore = x.memory.buffer.byteLength;
  await check(t, import.meta.url, property, 1500);
  t.diagnostic(`outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  assert.ok((outcomes.get('stack overflow') ?? 0) > 0, 'no call overflowed the stack: the depths missed the limit');
  // round after round, nothing is kept: releases that were cut short went on
  for (const name of names) ENTRIES[name]();
  assert.ok(x.memory.buffer.byteLength <= Math.max(memoryBefore, 64 << 20),
    `wasm memory grew from ${memoryBefore} to ${x.memory.buffer.byteLength} bytes`);
  sound('the end');
});
