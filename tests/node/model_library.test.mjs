// MLC/web-llm model libraries (TVM-compiled, with their own tvm-ffi core)
// as webffi runtimes in Node, on Dawn over llvmpipe: the whole forward pass
// of the -s library against TVM's own web runtime in the same run, the
// runtime API over such a core, web-llm's tensor cache, and the libraries
// and caches that cannot be used.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { load, FFIError, RuntimeError, FFITypeError } from '../../js/index.js';
import { RelaxVM, loadTensorCache, libraryNeeds } from '../../js/model_library.js';
import { webgpuRuntimeBackend } from '../../js/backends/webgpu_runtime.js';
import { missingNeeds, shaderNeeds } from '../../js/backends/webgpu/tvm_shaders.js';
import { nodeGPU } from '../support/webgpu_node.mjs';
import { modelPath, ARCTIC_S, makeTensorCache, writeTensorCache, makeInputs } from '../support/model_fixture.mjs';
import { runWithTvmjs } from '../support/tvmjs_reference.mjs';

// Dawn's instance must outlive every device made from it (npm webgpu
// crashes when it is collected first): one for the whole file.
const gpu = nodeGPU();
const wasm = fs.readFileSync(modelPath(ARCTIC_S));
const quiet = { log() {}, warn() {} };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'webffi-models-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const loadLibrary = (options = {}) =>
  load({ wasm, autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet, ...options });

/** A device from the same adapter with the limits TVM's kernels need (for tvmjs). */
async function tvmjsDevice() {
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' });
  const requiredLimits = {};
  for (const k of ['maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX', 'maxStorageBuffersPerShaderStage',
    'maxComputeWorkgroupStorageSize', 'maxBufferSize', 'maxStorageBufferBindingSize']) {
    requiredLimits[k] = adapter.limits[k];
  }
  return adapter.requestDevice({ requiredLimits });
}

test('the -s library runs its forward pass on webffi and matches tvmjs in the same run; the output feeds webgpu.* kernels without a copy', async () => {
  const rt = await loadLibrary();
  assert.equal(rt.coreKind, 'tvm-ffi');
  let progress = null;
  const vm = await RelaxVM.create(rt, { onProgress: (p) => { progress = p; } });
  assert.ok(progress && progress.compiled === progress.total && progress.total >= 30, JSON.stringify(progress));
  const params = vm.metadata.params;
  assert.equal(params.length, 149);
  // Two records in bfloat16 (web-llm's f32-to-bf16), the rest raw.
  const cache = makeTensorCache(params, { bf16: new Set([params[3].name, params[20].name]) });
  const dir = writeTensorCache(path.join(tmp, 'arctic-s'), cache);
  const reports = [];
  await vm.loadParams(dir, { onProgress: (p) => reports.push(p) });
  const last = reports.at(-1);
  assert.equal(last.loadedRecords, 149);
  assert.equal(last.loadedBytes, last.totalBytes);
  assert.ok(reports.length >= 2, 'progress before and after');

  const L = 16;
  const inputs = makeInputs(L);
  const ids = rt.empty([1, L], 'int32', 'webgpu').set(inputs.ids);
  const mask = rt.empty([1, L], 'int32', 'webgpu').set(inputs.mask);
  const out = vm.getFunction('prefill')(ids, mask, vm.params);
  assert.deepEqual(out.shape, [1, L, 384]);
  assert.equal(String(out.device), 'webgpu:0');
  const ours = await out.data();

  const device = await tvmjsDevice();
  const reference = await runWithTvmjs({ wasm, device, cache, inputs });
  assert.deepEqual(reference.shape, [1, L, 384]);
  let maxDiff = 0;
  for (let i = 0; i < ours.length; i++) maxDiff = Math.max(maxDiff, Math.abs(ours[i] - reference.output[i]));
  assert.ok(maxDiff <= 1e-4, `max |webffi - tvmjs| = ${maxDiff}`);
  assert.ok(ours.some((v) => v !== 0) && ours.every(Number.isFinite), 'a real output');

  // The output stays where it is: the kernels read its buffer, and only
  // their own outputs are allocated.
  const engine = rt.backends.get('webgpu').engine;
  const before = engine.info().bytesAllocated;
  const squared = rt.getGlobal('webgpu.mul')(out, out);
  assert.equal(engine.info().bytesAllocated - before, out.nbytes, 'one new allocation, the product');
  const total = rt.getGlobal('webgpu.sum')(squared);
  const [sumOfSquares] = await total.data();
  const expected = ours.reduce((a, v) => a + Math.fround(v * v), 0);
  assert.ok(Math.abs(sumOfSquares - expected) <= 1e-3 * Math.abs(expected), `${sumOfSquares} vs ${expected}`);
  for (const t of [ids, mask, out, squared, total]) t.dispose();
  vm.dispose();
});

test('a model runtime has the runtime API: values, the library\'s errors, callbacks, globals, modules, tensors', async () => {
  const rt = await loadLibrary();
  const g = (name) => rt.getGlobal(name);
  const echo = g('testing.echo');
  assert.equal(g('testing.add_one')(41), 42);
  assert.equal(echo('a string longer than seven bytes, with é'), 'a string longer than seven bytes, with é');
  assert.equal(echo('short'), 'short');
  assert.equal(echo(2n ** 60n), 2n ** 60n);
  assert.equal(echo(1.5), 1.5);
  assert.equal(echo(null), null);
  assert.equal(echo(true), true);
  assert.deepEqual([...echo([1, 'two', [3]])].map((v) => (typeof v === 'object' ? [...v] : v)), [1, 'two', [3]]);
  const m = echo(new Map([['k', 1], ['j', 2]]));
  assert.deepEqual([...m.keys()], ['k', 'j']);
  assert.deepEqual(Uint8Array.from(echo(new Uint8Array([1, 2, 3]))), Uint8Array.from([1, 2, 3]));

  // The library's C++ errors, with their kinds and messages, and the instance goes on.
  assert.throws(() => g('testing.add_one')(1.5), (e) => e instanceof TypeError && e instanceof FFIError &&
    /Mismatched type on argument #0 when calling: `testing.add_one\(0: int\) -> int`. Expected `int` but got `float`/.test(e.message) &&
    /function_details\.h/.test(e.backtrace));
  assert.throws(() => g('testing.add_one')(), /Expected 1 but got 0 arguments/);
  assert.throws(() => g('testing.test_raise_error')('ValueError', 'lost'), RuntimeError);
  assert.throws(() => rt.objectClass('no.such.Type'), (e) => e.kind === 'KeyError');
  for (let i = 0; i < 200; i++) assert.throws(() => g('testing.add_one')('x'), FFITypeError);
  assert.equal(g('testing.add_one')(1), 2, 'the runtime works after 200 errors');

  // JS callbacks, and a JS error thrown through the library's C++ is the same object.
  assert.equal(g('testing.apply')((a, b) => a * b, 6, 7), 42);
  const thrown = new RangeError('from JS');
  assert.throws(() => g('testing.apply')(() => { throw thrown; }), (e) => e === thrown);
  assert.throws(() => g('tvmjs.testing.call')(() => { throw thrown; }), (e) => e === thrown);
  const live = rt.liveJSValues;
  g('tvmjs.testing.call')(() => 1);
  assert.equal(rt.liveJSValues, live, 'the library released the callback');

  // Globals both ways, and functions the library calls back.
  rt.registerGlobal('app.twice', (x) => 2 * x);
  assert.equal(g('tvmjs.testing.call')(g('app.twice'), 21), 42);
  assert.ok(rt.listGlobals().includes('vm.builtin.tensor_cache.update'));

  // Modules: the system library, its functions.
  const lib = g('ffi.SystemLib')();
  assert.equal(lib.typeKey, 'ffi.Module');
  assert.equal(typeof lib.getFunction('vm_load_executable'), 'function');
  await assert.rejects(() => rt.loadModule(new Uint8Array(8)), /cannot link webffi modules/);

  // Tensors on the CPU and on WebGPU.
  const t = rt.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2] });
  assert.deepEqual([...echo(t).view()], [1, 2, 3, 4]);
  await rt.backends.ensure('webgpu');
  const gpuT = await t.toDevice('webgpu');
  assert.equal(String(gpuT.device), 'webgpu:0');
  assert.deepEqual([...(await gpuT.data())], [1, 2, 3, 4]);
  const back = await gpuT.toDevice('cpu');
  assert.deepEqual([...back.view()], [1, 2, 3, 4]);
  for (const x of [t, gpuT, back, lib]) x.dispose();
  assert.throws(() => lib.getFunction('x'), /disposed/);
});

test('libraries that cannot run are refused with what was found', async () => {
  // An older web-llm library: TVM's ABI before tvm-ffi.
  const old = wasmModule({ imports: [['env', 'TVMWasmPackedCFunc']], exports: ['TVMFuncCall'] });
  await assert.rejects(load({ wasm: old }), (e) => e instanceof RuntimeError &&
    /built for TVM's ABI before tvm-ffi \(it imports TVMWasmPackedCFunc and exports TVMFuncCall/.test(e.message) &&
    /v0_2_80/.test(e.message));
  // A wasm that is neither kind.
  await assert.rejects(load({ wasm: wasmModule({ exports: ['add'] }) }),
    /neither webffi's core nor a tvm-ffi library: it exports add and imports nothing/);
  // Not wasm, and a truncated library.
  await assert.rejects(load({ wasm: new TextEncoder().encode('<html>not found</html>') }),
    (e) => e instanceof RuntimeError && /not a valid WebAssembly module/.test(e.message));
  await assert.rejects(load({ wasm: wasm.subarray(0, wasm.length >> 1) }),
    (e) => e instanceof RuntimeError && /not a valid WebAssembly module \(a truncated or corrupt file\?\)/.test(e.message));
  // A file path that is not there.
  await assert.rejects(load({ wasm: path.join(tmp, 'missing.wasm') }), /ENOENT|no such file/);
});

test('the tensor cache loader takes web-llm\'s formats and refuses bad caches, leaving nothing loaded', async () => {
  const rt = await loadLibrary();
  const params = [
    { name: 'a', shape: [3, 5], dtype: 'float32' },
    { name: 'b.LayerNorm.weight', shape: [7], dtype: 'float32' },
    { name: 'c', shape: [2, 2], dtype: 'float32' },
  ];
  const cache = makeTensorCache(params, { shardBytes: 64, bf16: new Set(['c']) });
  assert.ok(cache.index.records.length >= 2, 'several shards');
  const get = rt.getGlobal('vm.builtin.tensor_cache.get');
  const clear = rt.getGlobal('vm.builtin.tensor_cache.clear');

  // From bytes, onto the CPU and onto WebGPU; the older index name too.
  for (const device of ['cpu', 'webgpu']) {
    clear();
    const loaded = await loadTensorCache(rt, { index: cache.index, shards: cache.shards }, { device });
    assert.deepEqual(loaded.names, ['a', 'b.LayerNorm.weight', 'c']);
    for (const p of params) {
      const t = get(p.name);
      assert.equal(String(t.device), `${device}:0`);
      assert.deepEqual([...(await t.data())], [...cache.values.get(p.name)], p.name);
    }
  }
  const old = path.join(tmp, 'ndarray');
  writeTensorCache(old, cache);
  fs.renameSync(path.join(old, 'tensor-cache.json'), path.join(old, 'ndarray-cache.json'));
  clear();
  await loadTensorCache(rt, old, { device: 'cpu', cache: { dir: path.join(tmp, 'shard-cache') } });
  assert.deepEqual([...(await get('a').data())], [...cache.values.get('a')]);
  assert.equal(fs.readdirSync(path.join(tmp, 'shard-cache')).length, cache.index.records.length, 'shards kept in the cache directory');

  const bad = async (mutate, pattern) => {
    clear();
    const copy = structuredClone({ index: cache.index, shards: cache.shards });
    mutate(copy);
    await assert.rejects(loadTensorCache(rt, copy, { device: 'webgpu' }), pattern);
    assert.equal(get('a'), null, 'nothing was added');
  };
  const lastShard = cache.index.records.at(-1).dataPath;
  await bad((c) => { delete c.shards[lastShard]; }, new RegExp(`shard ${lastShard} is missing`));
  await bad((c) => { c.shards[lastShard] = c.shards[lastShard].subarray(1); }, /has \d+ bytes, the index says \d+/);
  await bad((c) => { c.index.records[0].records[0].shape = [3, 4]; }, /60 bytes stored, its shape and format need 48/);
  await bad((c) => { c.index.records[0].records[0].format = 'q4f16'; }, /unsupported format "q4f16"/);
  await bad((c) => { c.index.records[0].records[0].byteOffset = 1e6; }, /lie outside the shard/);
  await bad((c) => { c.index = { nope: 1 }; }, /has no `records` list/);
  await assert.rejects(loadTensorCache(rt, path.join(tmp, 'no-such-cache')), /does not exist/);
});

test('a kernel that needs more than the device offers is refused before any dispatch, naming the limit', async () => {
  const rt = await loadLibrary();
  await rt.backends.ensure('webgpu');
  const device = rt.backends.get('webgpu').engine.device;
  const create = rt.getGlobal('wasm.WebGPUCreateShader');
  const info = JSON.stringify({ name: 'big', arg_types: ['handle'], launch_param_tags: ['blockIdx.x', 'paramWriteAccess:[1]'] });
  const wgsl = (size) => `@group(0) @binding(0) var<storage, read_write> a : array<f32>;
struct PODArgs { packGridDimX: u32 }
@group(0) @binding(1) var<uniform> podArgs : PODArgs;
@compute @workgroup_size(${size}, 1, 1) fn big(@builtin(global_invocation_id) i : vec3<u32>) { a[i.x] = 1.0; }`;
  const over = device.limits.maxComputeInvocationsPerWorkgroup * 2;
  assert.throws(() => create(info, wgsl(over)), (e) => e.kind === 'RuntimeError' &&
    new RegExp(`big needs more than this WebGPU device offers: maxComputeWorkgroupSizeX ${over}`).test(e.message) &&
    /maxComputeInvocationsPerWorkgroup/.test(e.message));
  assert.equal(typeof create(info, wgsl(64)), 'function', 'a kernel within the limits is made');
  // The needs read from WGSL, and what a device lacks.
  const needs = shaderNeeds('enable f16;\nvar<workgroup> s : array<f32, 1024>;\n@compute @workgroup_size(16, 16, 1) fn k() {}');
  assert.deepEqual(needs.features, ['shader-f16']);
  assert.equal(needs.maxComputeInvocationsPerWorkgroup, 256);
  assert.equal(needs.maxComputeWorkgroupStorageSize, 4096);
  const without = { limits: device.limits, features: new Set() };
  assert.deepEqual(missingNeeds(without, { features: ['shader-f16'] }), ['the feature shader-f16']);
  // The -s library's own needs fit this device.
  const exec = rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')();
  const libNeeds = libraryNeeds(exec);
  assert.equal(libNeeds.maxComputeInvocationsPerWorkgroup, 256);
  assert.deepEqual(missingNeeds(device, libNeeds), []);
});

/** A minimal wasm module importing and exporting functions of type () -> (). */
function wasmModule({ imports = [], exports = [] }) {
  const enc = new TextEncoder();
  const u = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
  const str = (s) => [...u(enc.encode(s).length), ...enc.encode(s)];
  const section = (id, body) => [id, ...u(body.length), ...body];
  const bytes = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
  bytes.push(...section(1, [1, 0x60, 0, 0]));
  if (imports.length) bytes.push(...section(2, [...u(imports.length), ...imports.flatMap(([m, n]) => [...str(m), ...str(n), 0, 0])]));
  if (exports.length) {
    bytes.push(...section(3, [...u(exports.length), ...exports.map(() => 0)]));
    bytes.push(...section(7, [...u(exports.length), ...exports.flatMap((n, i) => [...str(n), 0, ...u(imports.length + i)])]));
    bytes.push(...section(10, [...u(exports.length), ...exports.flatMap(() => [2, 0, 0x0b])]));
  }
  return new Uint8Array(bytes);
}

test('a model runtime served from a worker: calls, the library\'s errors by value, prefill in the worker', async () => {
  const { Worker } = await import('node:worker_threads');
  const { connectRuntime } = await import('../../js/index.js');
  const { libraryParams } = await import('../support/model_fixture.mjs');
  const weights = writeTensorCache(path.join(tmp, 'worker-weights'), makeTensorCache(await libraryParams(modelPath(ARCTIC_S))));
  const worker = new Worker(new URL('../support/model_worker.mjs', import.meta.url), {
    workerData: { library: modelPath(ARCTIC_S), weights },
  });
  const remote = await connectRuntime(worker, { handshakeTimeout: 300000 });
  try {
    assert.equal(await remote.getGlobal('testing.add_one')(41), 42);
    await assert.rejects(remote.getGlobal('testing.add_one')(1.5), (e) => e instanceof FFITypeError &&
      /Mismatched type on argument #0 when calling: `testing.add_one/.test(e.message));
    await assert.rejects(remote.getGlobal('vm.builtin.tensor_cache.clear')(), /not expose/);
    const { ids, mask } = makeInputs(8);
    const embed = remote.getGlobal('model.embed');
    const first = await embed([...ids], [...mask]);
    assert.deepEqual(first.shape, [1, 8, 384]);
    assert.ok(first.data instanceof Float32Array && first.data.length === 8 * 384 && first.data.every(Number.isFinite));
    const again = await embed([...ids], [...mask]);
    assert.deepEqual(again.data, first.data, 'the same input gives the same embeddings');
  } finally {
    remote.close();
    await worker.terminate();
  }
});

test('a model runtime as a TVM RPC device: the library\'s own RPC server, only for peers the owner trusts', async () => {
  const { listenRPC, connectRPC } = await import('../../js/index.js');
  const rt = await loadLibrary();
  await assert.rejects(listenRPC(rt, { port: 0 }), /served by its own RPC server.*trustPeers: true/);
  const server = await listenRPC(rt, { port: 0, trustPeers: true, key: 'mlc' });
  try {
    const s = await connectRPC(`127.0.0.1:${server.port}`, 'mlc');
    assert.equal(s.serverKey, 'server:mlc');
    assert.equal(await s.getGlobal('testing.add_one')(41), 42);
    const t = await s.tensor(new Float32Array([1, 2, 3]));
    assert.deepEqual([...(await t.data())], [1, 2, 3]);
    // An error in the library's server ends its connection (its C++ cannot
    // catch it), after the client got the error; the device serves on.
    await assert.rejects(s.getGlobal('testing.add_one')('x'), /TypeError: Mismatched type on argument #0.*the connection ends/);
    await s.close();
    // TVM's web flow asks for the library's asynchronous session: WebGPU tensors.
    await rt.backends.ensure('webgpu');
    const w = await connectRPC(`127.0.0.1:${server.port}`, 'mlc', { sessionConstructor: ['rpc.WasmSession'] });
    const g = await w.tensor(new Float32Array([4, 5, 6, 7]), { device: 'webgpu' });
    assert.equal(String(g.device), 'webgpu:0');
    assert.deepEqual([...(await g.data())], [4, 5, 6, 7]);
    await w.close();
    await assert.rejects(connectRPC(`127.0.0.1:${server.port}`, 'other'), /key/);
  } finally {
    await server.close();
  }
});
