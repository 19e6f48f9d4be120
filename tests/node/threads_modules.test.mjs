// Modules loaded at run time into the threaded core run their parallel
// launches on every thread: each worker instantiates a loaded module (from
// the bytes the loading thread keeps) before its next task, and drops it
// once it is unloaded; the module's memory is freed only when no launch
// runs. C++ modules throw and catch on every thread.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { load, IndexError, ValueError } from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const modules = `${root}build/wasm/tests/modules`;
const quiet = { log() {}, warn() {} };
const kernelBytes = readFileSync(`${modules}/parallel_module_mt.wasm`);

const rt = await load({ wasm: readFileSync(`${root}build/wasm/webffi-mt.wasm`), threads: 2, logger: quiet });
const st = await load({ wasm: readFileSync(`${modules}/parallel_st.wasm`), logger: quiet });
after(() => {
  rt.dispose();
  st.dispose();
});

/** n pseudo-random float32s in [-0.5, 0.5). */
function data(n, seed) {
  const out = new Float32Array(n);
  let x = seed | 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) | 0;
    out[i] = (x >>> 8) / 2 ** 24 - 0.5;
  }
  return out;
}

test('a module loaded at run time runs its launches on every thread, equal to the serial result bit for bit', async () => {
  const mod = await rt.loadModule(kernelBytes);
  const sum = mod.getFunction('sum');
  const tasks = mod.getFunction('tasks');
  const serialSum = st.getGlobal('ffi.SystemLib')().getFunction('sum');
  assert.equal(tasks(0), 2, 'a task per thread: the worker ran the module\'s lambda');
  for (const [n, seed] of [[1, 1], [1000, 2], [100003, 3]]) {
    const values = data(n, seed);
    const a = rt.tensor(values);
    const b = st.tensor(values);
    try {
      for (const split of [0, 2, 3, 8]) {
        const parallel = sum(a, split);
        assert.ok(Object.is(parallel, serialSum(b, split)), `n=${n} tasks=${split}: ${parallel}`);
      }
    } finally {
      a.dispose();
      b.dispose();
    }
  }
  // a task's error in the module reaches the caller as its class
  assert.throws(() => mod.getFunction('fail')(2, 1), (e) => e instanceof ValueError && /task 1/.test(e.message));
  assert.equal(tasks(0), 2, 'the pool still runs both threads');
  rt.unloadModule('parallel');
});

test('load, use on every thread, unload, reload: 1,000 cycles with the heap flat', async () => {
  const x = rt.exports;
  const memoryBytes = () => x.memory.buffer.byteLength;
  /** Where a 1 MiB block lands: it moves up when anything below it leaks. */
  const probe = () => {
    const p = x.WebFFIHeapAlloc(1 << 20);
    x.WebFFIHeapFree(p);
    return p;
  };
  const cycle = async () => {
    const mod = await rt.loadModule(kernelBytes);
    const tasks = mod.getFunction('tasks');
    assert.equal(tasks(0), 2);
    tasks.dispose();
    mod.dispose();
    rt.unloadModule('parallel');
  };
  for (let i = 0; i < 20; i++) await cycle();
  const [before, at] = [memoryBytes(), probe()];
  for (let i = 0; i < 980; i++) await cycle();
  assert.equal(memoryBytes(), before, 'the memory did not grow');
  assert.equal(probe(), at, 'nothing left behind in the heap');
});

test('C++ in a module loaded at run time throws and catches on every thread at once, never misrouted', async () => {
  const mod = await rt.loadModule(readFileSync(`${modules}/parallel_cxx_module_mt.wasm`));
  try {
    const throws = mod.getFunction('throws');
    let misrouted = 0;
    for (let round = 0; round < 4; round++) misrouted += Number(throws(50000)); // 2 threads x 50,000 throws, 4 times
    assert.equal(misrouted, 0);
    assert.throws(() => mod.getFunction('at')(7), (e) => e instanceof IndexError && e.message === 'task 1: index out of range');
    assert.equal(mod.getFunction('at')(2), null);
  } finally {
    rt.unloadModule('parallel_cxx');
  }
});

test('generated loads, unloads and launches of two modules: every launch on both threads equals the serial one', async () => {
  const cxxBytes = readFileSync(`${modules}/parallel_cxx_module_mt.wasm`);
  const serialSum = st.getGlobal('ffi.SystemLib')().getFunction('sum');
  const values = data(4099, 7);
  const a = rt.tensor(values);
  const b = st.tensor(values);
  const want = new Map([0, 1, 2, 3, 5].map((split) => [split, serialSum(b, split)]));
  const loaded = { parallel: null, parallel_cxx: null };
  const step = {
    load: async (name) => {
      loaded[name] ??= await rt.loadModule(name === 'parallel' ? kernelBytes : cxxBytes);
    },
    unload: (name) => {
      if (loaded[name] === null) return;
      loaded[name].dispose();
      loaded[name] = null;
      rt.unloadModule(name);
    },
    use: (name, split) => {
      const mod = loaded[name];
      if (mod === null) return;
      if (name === 'parallel') {
        assert.equal(mod.getFunction('tasks')(0), 2);
        assert.ok(Object.is(mod.getFunction('sum')(a, split), want.get(split)));
      } else {
        assert.equal(Number(mod.getFunction('throws')(200)), 0, 'no catch misrouted');
      }
    },
  };
  const op = fc.tuple(fc.constantFrom('load', 'unload', 'use'), fc.constantFrom('parallel', 'parallel_cxx'),
    fc.constantFrom(0, 1, 2, 3, 5));
  try {
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 24 }), async (ops) => {
      for (const [what, name, split] of ops) await step[what](name, split);
      for (const name of Object.keys(loaded)) step.unload(name);
    }), { numRuns: 60 });
  } finally {
    a.dispose();
    b.dispose();
  }
});

test('a module given compiled, without its bytes, runs its launches serially while it is loaded', async () => {
  const compiled = await rt.loadModule(new WebAssembly.Module(kernelBytes));
  const [tasks, sum] = [compiled.getFunction('tasks'), compiled.getFunction('sum')];
  assert.equal(tasks(0), 1, 'no bytes for the workers: one task, on this thread');
  const values = data(5000, 11);
  const a = rt.tensor(values);
  const b = st.tensor(values);
  try {
    assert.ok(Object.is(sum(a, 0), st.getGlobal('ffi.SystemLib')().getFunction('sum')(b, 1)));
  } finally {
    a.dispose();
    b.dispose();
  }
  // (it is loaded while anything holds it: its functions too)
  for (const held of [tasks, sum, compiled]) held.dispose();
  rt.unloadModule('parallel');
  const mod = await rt.loadModule(kernelBytes);
  assert.equal(mod.getFunction('tasks')(0), 2, 'with it unloaded, every thread again');
  mod.dispose();
  rt.unloadModule('parallel');
});

test('C++ locks in a module loaded at run time hold across threads: std::mutex, std::call_once, function-local statics', async () => {
  // (a threaded C++ module's locks are the runtime's: its own C library's would do nothing)
  const mod = await rt.loadModule(readFileSync(`${modules}/locks_mt.wasm`));
  try {
    const lockedCount = mod.getFunction('locked_count');
    for (let round = 0; round < 3; round++) assert.equal(lockedCount(200000), 400000, 'no update lost under the mutex');
    assert.equal(mod.getFunction('once_count')(), 2, 'call_once ran once, the static was initialised once');
  } finally {
    rt.unloadModule('locks_mt');
  }
});
