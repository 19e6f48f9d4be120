// Calls that pass values and return objects, webffi against TVM's own web runtime (tvmjs,
// npm @mlc-ai/web-runtime) driving the SAME wasm: an MLC model library
// (arctic-s by default), whose tvm-ffi core TVM compiled, so the C each call
// runs is identical and only the JS layers differ. Row by row, in one
// process, each side timed over `--calls` calls per round in alternating
// order; the medians of `--rounds` rounds (after one warm-up) are printed in
// ns per call with the paired ratio tvmjs / webffi (above 1: webffi faster).
// The first rows are calls that pass values (an int back, a string in, a
// JS function called through C, 100 ints, a C error), then the objects.
// tvmjs keeps every object it makes in its scope (beginScope/endScope), so
// each of its rounds runs inside one (its end timed too), as web-llm runs
// them; webffi's objects are disposed by hand, by rt.scope(), or left to
// the garbage collector. A last column times webffi's rows on its own core
// (dist/webffi.wasm), where the webgpu.* kernels live: its kernel-output row
// is webgpu.add_scalar on a [4] tensor, the dispatch included. The floor
// rows register a bare object with a FinalizationRegistry (with and
// without an unregister token): what the garbage collector's path costs at
// least.
// Time is the process's CPU time (process.cpuUsage: user + system, all its
// threads), so the waits of a machine shared with other jobs do not count;
// --clock wall takes wall-clock time instead.
// Run: node bench/objects_paired.mjs [--library s|m] [--rounds 9] [--calls 20000] [--clock cpu|wall]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { load } from '../js/index.js';
import { webgpuRuntimeBackend } from '../js/backends/webgpu_runtime.js';
import { nodeGPU } from '../tests/support/webgpu_node.mjs';
import { modelPath, ARCTIC_S, ARCTIC_M } from '../tests/support/model_fixture.mjs';
import { instantiateTvmjs } from '../tests/support/tvmjs_reference.mjs'; // and the WebGPU globals tvmjs reads
import { median } from './paired.mjs';

const { values: args } = parseArgs({
  options: {
    library: { type: 'string', default: 's' },
    rounds: { type: 'string', default: '9' },
    calls: { type: 'string', default: '20000' },
    clock: { type: 'string', default: 'cpu' },
  },
});
const rounds = Number(args.rounds);
const calls = Number(args.calls);
const gpu = nodeGPU(); // kept reachable: Dawn's devices need their instance
const wasm = fs.readFileSync(modelPath(args.library === 'm' ? ARCTIC_M : ARCTIC_S));
const quiet = { log() {}, warn() {} };

// ---- webffi on the model library's core, and on its own core
const rt = await load({ wasm, autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet });
await rt.backends.ensure('webgpu');
const own = await load({ logger: quiet });
await own.backends.ensure('webgpu');

// ---- tvmjs on the model library, with a WebGPU device from the same adapter
const tvm = await instantiateTvmjs(wasm);
tvm.initWebGPU(await (await gpu.requestAdapter({ featureLevel: 'compatibility' })).requestDevice());
tvm.beginScope(); // what the rows hold (functions, arguments); each round opens its own inside

const str16 = '0123456789abcdef';
const f32 = new Float32Array(4);

/** Each row: [name, webffi on a runtime (or null), tvmjs body (or null)]; bodies are made per runtime (their own feedback). */
function webffiRows(r) {
  const Shape = r.getGlobal('ffi.Shape');
  const ArrayOf = r.getGlobal('ffi.Array');
  const ArraySize = r.getGlobal('ffi.ArraySize');
  const FString = r.getGlobal('ffi.String');
  const arr = ArrayOf(1, 2, 3);
  const onGPU = r.device('webgpu');
  r.registerGlobal('bench.echo', (x) => x, { replace: true });
  const echo = r.getGlobal('bench.echo'); // a JS function behind a C function handle
  const ArrayGetItem = r.getGlobal('ffi.ArrayGetItem');
  const ints100 = Array.from({ length: 100 }, (_, i) => i);
  const rows = {
    int: () => ArraySize(arr),
    string: () => FString(str16),
    callback: () => echo(1),
    array100: () => ArrayOf(...ints100).dispose(),
    error: () => {
      try {
        ArrayGetItem(arr, 10);
      } catch (e) {
        return e.message;
      }
      throw new Error('no error');
    },
    dispose: () => Shape(3, 4).dispose(),
    scope: () => r.scope(() => {
      Shape(3, 4);
    }),
    gc: () => Shape(3, 4),
    array: () => ArrayOf(1).dispose(),
    empty: () => r.empty([4]).dispose(),
    tensor: () => r.tensor(f32).dispose(),
    gpuEmpty: () => r.empty([4], 'float32', onGPU).dispose(),
  };
  if (r.coreKind === 'tvm-ffi') {
    const alloc = r.getGlobal('runtime.TVMTensorAllocWithScope');
    const shape = Shape(4);
    rows.kernel = () => alloc(shape, r.dtype('float32'), onGPU, 'global').dispose();
  } else {
    const x = r.empty([4], 'float32', onGPU);
    const addScalar = r.getGlobal('webgpu.add_scalar');
    rows.kernel = () => addScalar(x, 1).dispose();
  }
  rows.floor = floor;
  rows.floorToken = floorToken;
  return rows;
}

function tvmjsRows() {
  const Shape = tvm.getGlobalFunc('ffi.Shape');
  const ArrayOf = tvm.getGlobalFunc('ffi.Array');
  const ArraySize = tvm.getGlobalFunc('ffi.ArraySize');
  const FString = tvm.getGlobalFunc('ffi.String');
  const alloc = tvm.getGlobalFunc('runtime.TVMTensorAllocWithScope');
  // a JS number reaches C as a float in tvmjs: ints are Scalar objects, made once
  const [one, two, three, four] = [1, 2, 3, 4].map((v) => tvm.scalar(v, 'int64'));
  const arr = ArrayOf(one, two, three);
  const cpu = tvm.cpu();
  const onGPU = tvm.webgpu();
  const shape = tvm.makeShapeTuple([4]);
  const dtype = tvm.toDLDataType ? tvm.toDLDataType('float32') : 'float32';
  tvm.registerFunc('bench.echo', (x) => x, true);
  const echo = tvm.getGlobalFunc('bench.echo');
  const ints100 = Array.from({ length: 100 }, (_, i) => tvm.scalar(i, 'int64'));
  return {
    int: () => ArraySize(arr),
    string: () => FString(str16),
    callback: () => echo(1),
    array100: () => ArrayOf(...ints100).dispose(),
    // tvmjs's instance does not survive a C error of this library in Node:
    // the first one ends it (an ExitStatus), the next call traps
    error: null,
    dispose: () => Shape(three, four).dispose(),
    scope: () => {
      tvm.beginScope();
      Shape(three, four);
      tvm.endScope();
    },
    gc: null, // tvmjs has no finalizer: an object not disposed stays until its scope ends
    array: () => ArrayOf(one).dispose(),
    empty: () => tvm.empty([4], 'float32', cpu).dispose(),
    tensor: () => tvm.empty([4], 'float32', cpu).copyFrom(f32).dispose(),
    gpuEmpty: () => tvm.empty([4], 'float32', onGPU).dispose(),
    kernel: () => alloc(shape, dtype, onGPU, 'global').dispose(),
    floor: null,
    floorToken: null,
  };
}

const NAMES = {
  int: '`ffi.ArraySize(obj)` -> int',
  string: '`ffi.String(16 chars)` -> string',
  callback: 'JS -> C -> JS: a registered JS function called by handle',
  array100: '`ffi.Array(100 ints)` + `dispose()`',
  error: 'a C error caught in JS (`ffi.ArrayGetItem` out of range)',
  dispose: '`ffi.Shape(3, 4)` + `dispose()`',
  scope: '`ffi.Shape(3, 4)` in a scope, one per call',
  gc: '`ffi.Shape(3, 4)` left to the GC',
  array: '`ffi.Array(1)` + `dispose()`',
  empty: '`rt.empty([4])` + `dispose()`',
  tensor: '`rt.tensor(Float32Array(4))` + `dispose()`',
  gpuEmpty: '`rt.empty([4])` on WebGPU + `dispose()`',
  kernel: 'a tensor returned from C (kernel output) + `dispose()`',
  floor: 'floor: a JS object registered with a FinalizationRegistry, collected',
  floorToken: 'the same with an unregister token (the object itself)',
};
// rows whose calls take microseconds run a tenth as many calls
const FEWER = new Set(['gpuEmpty', 'kernel', 'array100', 'error']);

// What the garbage collector's path costs at least: one registration and
// one collection of a bare object (no wasm call), the same on both columns.
const floorRegistry = new FinalizationRegistry(() => {});
const floor = () => {
  floorRegistry.register({}, 0);
};
const floorToken = () => {
  const o = {};
  floorRegistry.register(o, 0, o);
};

const ours = webffiRows(rt);
const ownRows = webffiRows(own);
const theirs = tvmjsRows();

const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
const now = args.clock === 'wall' ? () => Number(process.hrtime.bigint()) : cpuNs;

/** ns per call of f over n calls; tvmjs's in a scope of the round's own (its end, the disposal of what is left, timed too). */
async function time(f, n, tvmScope) {
  const t0 = now();
  if (tvmScope) tvm.beginScope();
  for (let i = 0; i < n; i++) f();
  if (tvmScope) tvm.endScope();
  const ns = (now() - t0) / n;
  // a turn of the event loop: finalizers and pending registrations run, as between a page's tasks
  await new Promise((resolve) => setImmediate(resolve));
  return ns;
}

const results = [];
for (const key of Object.keys(NAMES)) {
  const a = ours[key];
  const b = theirs[key];
  const c = ownRows[key];
  const samples = { ours: [], theirs: [], own: [], ratio: [] };
  for (let i = 0; i <= rounds; i++) {
    // alternate which goes first, so neither always runs on the other's garbage
    const order = i % 2 ? [['theirs', b], ['ours', a], ['own', c]] : [['ours', a], ['own', c], ['theirs', b]];
    const got = {};
    for (const [who, f] of order) if (f) got[who] = await time(f, FEWER.has(key) ? Math.ceil(calls / 10) : calls, who === 'theirs');
    if (i === 0) continue;
    for (const who of ['ours', 'theirs', 'own']) if (got[who] !== undefined) samples[who].push(got[who]);
    if (b) samples.ratio.push(got.theirs / got.ours);
  }
  results.push({
    key,
    ours: median(samples.ours),
    theirs: b ? median(samples.theirs) : null,
    ratio: b ? median(samples.ratio) : null,
    own: median(samples.own),
  });
}
tvm.endScope();

const ns = (v) => (v === null ? '-' : v.toFixed(0)).padStart(8);
console.log(`same core: ${modelPath(args.library === 'm' ? ARCTIC_M : ARCTIC_S).split('/').pop()}; medians of ${rounds} rounds of ${calls} calls; ns per call (${args.clock === 'wall' ? 'wall clock' : 'process CPU time'})`);
console.log(`${'call'.padEnd(56)} ${'webffi'.padStart(8)} ${'tvmjs'.padStart(8)} ${'tvmjs/webffi'.padStart(13)}   ${'own core'.padStart(8)}`);
for (const r of results) {
  console.log(`${NAMES[r.key].padEnd(56)} ${ns(r.ours)} ${ns(r.theirs)} ${(r.ratio === null ? '-' : `${r.ratio.toFixed(2)}x`).padStart(13)}   ${ns(r.own)}`);
}
const by = Object.fromEntries(results.map((r) => [r.key, r]));
console.log(`scope / dispose by hand: ${(by.scope.ours / by.dispose.ours).toFixed(2)}x (same core), ${(by.scope.own / by.dispose.own).toFixed(2)}x (own core)`);
console.log(`GC / dispose by hand: ${(by.gc.ours / by.dispose.ours).toFixed(2)}x (same core), ${(by.gc.own / by.dispose.own).toFixed(2)}x (own core); GC / (dispose + floor): ${(by.gc.ours / (by.dispose.ours + by.floor.ours)).toFixed(2)}x, ${(by.gc.own / (by.dispose.own + by.floor.own)).toFixed(2)}x`);
console.log(`own core's kernel output is webgpu.add_scalar([4], 1) + dispose(); the same core's, runtime.TVMTensorAllocWithScope on WebGPU`);
rt.dispose();
own.dispose();
process.exit(0);
