// The threaded core (load({ threads })) in Node: the pool runs C's
// parallel-for (TVMBackendParallelLaunch) on every thread with results
// equal to the serial ones, errors and traps in tasks reach the caller,
// and mismatched options, cores and modules are refused saying what to do.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { load, RuntimeError, ValueError, FFITypeError, MemoryError, IndexError } from '../../js/index.js';
import { THREAD_ENV_IMPORTS } from '../../js/threads/env_imports.js';
import { runCommand } from '../../js/command.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const modules = `${root}build/wasm/tests/modules`;
const quiet = { log() {}, warn() {} };

const mt = await load({ wasm: readFileSync(`${modules}/parallel_mt.wasm`), threads: 2, logger: quiet });
const st = await load({ wasm: readFileSync(`${modules}/parallel_st.wasm`), logger: quiet });
after(() => {
  mt.dispose();
  st.dispose();
});
const kernels = (rt) => {
  const lib = rt.getGlobal('ffi.SystemLib')();
  const get = (name) => lib.getFunction(name);
  return { sum: get('sum'), tasks: get('tasks'), fail: get('fail'), trap: get('trap'), call: get('call'),
    barriers: get('barriers'), alloc: get('alloc') };
};
const onMT = kernels(mt);
const onST = kernels(st);

test('the threaded core says how many threads it has; the single-threaded one has 1', () => {
  assert.equal(mt.threads, 2);
  assert.equal(st.threads, 1);
  assert.equal(onMT.tasks(0), 2, 'num_task 0: one task per thread');
  assert.equal(onMT.tasks(1), 1);
  assert.equal(onMT.tasks(64), 2, 'more tasks than threads: one per thread');
  assert.equal(onST.tasks(0), 1, 'serially: one task');
});

test('a parallel kernel equals the serial one bit for bit, whatever the split', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 40000 }), fc.integer({ min: 0, max: 8 }), fc.integer(), (n, tasks, seed) => {
    const data = new Float32Array(n);
    let x = seed | 0;
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1103515245) + 12345) | 0;
      data[i] = (x >>> 8) / 2 ** 24 - 0.5;
    }
    const a = mt.tensor(data);
    const b = st.tensor(data);
    try {
      const parallel = onMT.sum(a, tasks);
      assert.ok(Object.is(parallel, onST.sum(b, tasks)), `n=${n} tasks=${tasks}`);
      assert.ok(Object.is(parallel, onMT.sum(a, 1)), 'one task on the threaded core');
    } finally {
      a.dispose();
      b.dispose();
    }
  }), { numRuns: 60 });
});

test('barriers hold across every task of a launch', () => {
  assert.equal(onMT.barriers(0, 200), 1);
  assert.equal(onMT.barriers(2, 50), 1);
  assert.equal(onST.barriers(0, 10), 1);
});

test('a task that raises: the caller gets the lowest failing task\'s error, and the pool goes on', () => {
  for (let round = 0; round < 50; round++) {
    assert.throws(() => onMT.fail(2, 1), (e) => e instanceof ValueError && e.message === 'task 1 failed');
    assert.throws(() => onMT.fail(2, 0), (e) => e instanceof ValueError && e.message === 'task 0 failed');
    assert.equal(onMT.fail(2, 2), null);
  }
  assert.equal(onMT.tasks(0), 2, 'still two threads');
});

test('a JS function called from a task on a worker thread is refused with a RuntimeError', () => {
  let calls = 0;
  const f = () => {
    calls++;
  };
  assert.throws(() => onMT.call(f, 2), (e) => e instanceof RuntimeError &&
    /a JS function cannot be called from a worker thread \(a parallel task\)/.test(e.message));
  assert.equal(calls, 1, 'task 0, on the loading thread, called it');
  onMT.call(f, 1);
  assert.equal(calls, 2);
  onST.call(f, 2);
  assert.equal(calls, 3);
});

test('a task that traps on a worker: the caller gets an error, never a hang; later launches run serially', async () => {
  const rt = await load({ wasm: readFileSync(`${modules}/parallel_mt.wasm`), threads: 2, logger: quiet });
  try {
    const k = kernels(rt);
    assert.throws(() => k.trap(2, 1), (e) => e instanceof RuntimeError &&
      /^TVMBackendParallelLaunch: task 1 trapped on a worker thread \(.*unreachable.*\); the pool runs serially from now on/.test(e.message));
    assert.equal(k.tasks(0), 1, 'serially now');
    const data = new Float32Array(10000).map((_, i) => Math.sin(i));
    const t = rt.tensor(data);
    const s = st.tensor(data);
    assert.ok(Object.is(k.sum(t, 0), onST.sum(s, 0)));
    t.dispose();
    s.dispose();
  } finally {
    rt.dispose();
  }
});

test('load({ threads }) checks what it is given', async () => {
  await assert.rejects(load({ threads: 0 }), (e) => e instanceof FFITypeError &&
    /^load: threads must be 'auto' or an integer in \[1, 256\], got /.test(e.message));
  await assert.rejects(load({ threads: 2.5 }), FFITypeError);
  await assert.rejects(load({ threads: '2' }), FFITypeError);
  await assert.rejects(load({ wasm: readFileSync(`${modules}/parallel_mt.wasm`) }), (e) => e instanceof RuntimeError &&
    /is a threaded core \(built with `webffi build --threads`\): load it with load\(\{ threads: n \}\)/.test(e.message));
  await assert.rejects(load({ wasm: readFileSync(`${modules}/parallel_st.wasm`), threads: 2 }), (e) =>
    e instanceof RuntimeError && /is a single-threaded core: build it with `webffi build --threads`/.test(e.message));
  const one = await load({ threads: 1 });
  assert.equal(one.threads, 1, 'threads: 1 is the single-threaded core');
  one.dispose();
  const auto = await load({ threads: 'auto' });
  assert.ok(auto.threads >= 1);
  auto.dispose();
});

test('modules declare which core they are for; a mismatch says how to rebuild', async () => {
  await assert.rejects(mt.loadModule(`${modules}/add_one.wasm`), (e) => e instanceof ValueError &&
    /was built for the single-threaded runtime, and this runtime is threaded .*rebuild the module with `webffi build --module --threads`/.test(e.message));
  await assert.rejects(st.loadModule(`${modules}/add_one_mt.wasm`), (e) => e instanceof ValueError &&
    /was built with `webffi build --module --threads` for the threaded runtime, and this runtime is single-threaded/.test(e.message));
  const mod = await mt.loadModule(`${modules}/add_one_mt.wasm`);
  mod.dispose();
});

test('the threaded core imports exactly the Emscripten 3.1.6 functions our pool provides', () => {
  const module = new WebAssembly.Module(readFileSync(`${root}dist/webffi-mt.wasm`));
  const env = WebAssembly.Module.imports(module).filter((i) => i.module === 'env');
  assert.deepEqual(env.filter((i) => i.kind === 'function').map((i) => i.name).sort(), [...THREAD_ENV_IMPORTS].sort());
  assert.deepEqual(env.filter((i) => i.kind === 'memory').map((i) => i.name), ['memory']);
});

test('a process whose runtime has threads exits by itself (the workers keep nothing alive)', () => {
  const script = `import { load } from ${JSON.stringify(`${root}js/index.js`)};
    const rt = await load({ threads: 2 });
    console.log(rt.getGlobal('ffi.String')('x'.repeat(40)).length);`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout.trim(), '40');
});

test('a launch inside a peer\'s request is held to the peer budget on every thread', () => {
  const x = mt.exports;
  const memory = x.WebFFIPeerBudgetGet(0);
  const live = x.WebFFIPeerBudgetGet(5);
  x.WebFFIPeerBudgetSet(live + (4n << 20n), 0n, 0); // 4 MiB more than the heap holds now
  try {
    assert.equal(onMT.alloc(2, 16 << 20), null, 'outside a peer\'s request: no budget');
    x.WebFFIPeerEnter();
    try {
      assert.throws(() => onMT.alloc(2, 16 << 20), (e) => e instanceof MemoryError && e.message === 'task 1: cannot allocate');
      assert.equal(onMT.alloc(2, 1 << 20), null, 'within the budget');
    } finally {
      x.WebFFIPeerLeave();
    }
  } finally {
    x.WebFFIPeerBudgetSet(memory, 0n, 0);
  }
});

test('C++ exceptions thrown and caught at once on every thread are never misrouted; a C++ error becomes its JS class', async () => {
  const rt = await load({ wasm: readFileSync(`${modules}/parallel_cxx_mt.wasm`), threads: 2, logger: quiet });
  try {
    const lib = rt.getGlobal('ffi.SystemLib')();
    const throws = lib.getFunction('throws');
    let misrouted = 0;
    for (let round = 0; round < 4; round++) misrouted += Number(throws(100000)); // 2 threads x 100,000 throws, 4 times
    assert.equal(misrouted, 0);
    assert.throws(() => lib.getFunction('at')(7), (e) => e instanceof IndexError && e.message === 'task 1: index out of range');
    assert.equal(lib.getFunction('at')(2), null);
  } finally {
    rt.dispose();
  }
});

test('webffi build --threads at -O3 and -Os writes a core load() recognises', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-threads-'));
  try {
    for (const opt of ['-O3', '-Os']) {
      const out = join(dir, `parallel${opt}.wasm`);
      const built = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--threads', opt,
        `${root}tests/modules/parallel.c`, '-o', out], { encoding: 'utf8' });
      assert.equal(built.status, 0, built.stderr);
      const names = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(out))).map((i) => `${i.module}.${i.name}`);
      assert.ok(names.includes('env.__pthread_create_js') && names.includes('webffi.call_js'), `${opt}: ${names.slice(0, 5)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a threaded command program: main here, its pthreads and the pool on workers, exit() and output in order', async () => {
  // (tests/modules/command_mt.c: 6 pthreads on top of the pool's, then a launch)
  const run = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'run', '--threads', '3', `${modules}/command_mt.wasm`, '6', '7'],
    { encoding: 'utf8', timeout: 60000 });
  assert.deepEqual([run.status, run.stdout, run.stderr], [7, 'pthreads: 6, sum 55\nlaunch: 3 tasks\n', '']);
  const out = [];
  const code = await runCommand(readFileSync(`${modules}/command_mt.wasm`), {
    args: ['command_mt', '2'], threads: 2, write: (fd, text) => out.push([fd, text]),
  });
  assert.deepEqual([code, out], [0, [[1, 'pthreads: 2, sum 1\n'], [1, 'launch: 2 tasks\n']]]);
  await assert.rejects(runCommand(readFileSync(`${modules}/command_mt.wasm`), { threads: 0 }), RangeError);
});
