// MLC/web-llm model libraries (TVM-compiled, with their own tvm-ffi core)
// as webffi runtimes in Node, on Dawn over llvmpipe: the whole forward pass
// of the -s library against TVM's own web runtime in the same run, the
// runtime API over such a core, web-llm's tensor cache, and the libraries
// and caches that cannot be used.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, FFIError, RuntimeError, FFITypeError, ValueError } from '../../js/index.js';
import { RelaxVM, loadTensorCache, libraryNeeds, libraryParams, seededTensorCache } from '../../js/model_library.js';
import { parseLibraryError } from '../../js/core/tvm_core.js';
import { progressPrinter } from '../../bin/model.mjs';
import { startModelServer } from '../support/model_server.mjs';
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
  const vm = await RelaxVM.create(rt, { pipelines: true, onProgress: (p) => { progress = p; } });
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
  await assert.rejects(loadTensorCache(rt, path.join(tmp, 'no-such-cache')),
    /no index at file:.*no-such-cache\/: looked for tensor-cache\.json and ndarray-cache\.json \(neither is there\)/);
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

// ---- the package's model tools: `webffi model weights` and `webffi model fetch`

const cli = fileURLToPath(new URL('../../bin/webffi.mjs', import.meta.url));
/** Runs `webffi ARGS` (asynchronously: the test's own server answers it meanwhile). */
function webffi(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
const md5 = (bytes) => createHash('md5').update(bytes).digest('hex');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

test('webffi model weights writes seeded weights from the -s library\'s own metadata, which the runtime loads', async () => {
  const out = path.join(tmp, 'cli-weights');
  const r = await webffi(['model', 'weights', modelPath(ARCTIC_S), '--out', out, '--seed', '7', '--shard-mb', '40']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /tensor-cache\.json and 4 shards, 149 records, 126\.7 MiB \(seed 7\)/);
  const rt = await loadLibrary();
  const params = libraryParams(rt);
  assert.equal(params.length, 149);
  const expected = seededTensorCache(params, { seed: 7, shardBytes: 40 << 20 });
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(out, 'tensor-cache.json'), 'utf8')), JSON.parse(JSON.stringify(expected.index)));
  const loaded = await loadTensorCache(rt, out, { device: 'cpu' });
  assert.equal(loaded.records, 149);
  const get = rt.getGlobal('vm.builtin.tensor_cache.get');
  for (const p of [params[0], params[5], params.at(-1)]) {
    assert.deepEqual(get(p.name).view(), expected.values.get(p.name), p.name);
  }
  assert.notDeepEqual(expected.values.get(params[0].name), seededTensorCache(params.slice(0, 1), { seed: 8 }).values.get(params[0].name), 'another seed, other values');
  // A library that is not one, and missing arguments
  const bad = await webffi(['model', 'weights', path.join(tmp, 'none.wasm'), '--out', out]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /webffi: model weights: .*none\.wasm/);
  assert.equal((await webffi(['model', 'weights', modelPath(ARCTIC_S)])).status, 2);
  rt.dispose();
});

/** A small model in web-llm's layout: shards with their md5sum, as MLC writes them. */
function smallModel(seed) {
  const params = [
    { name: 'embed.weight', shape: [64, 32], dtype: 'float32' },
    { name: 'layer.0.weight', shape: [32, 32], dtype: 'float32' },
    { name: 'layer.0.LayerNorm.weight', shape: [32], dtype: 'float32' },
    { name: 'layer.1.weight', shape: [32, 48], dtype: 'float32' },
  ];
  const cache = seededTensorCache(params, { seed, shardBytes: 8192 });
  for (const shard of cache.index.records) shard.md5sum = md5(cache.shards[shard.dataPath]);
  return cache;
}

test('webffi model fetch: a HuggingFace layout from a local server, checked, an interrupted download resumed, a wrong size refused', async () => {
  const server = await startModelServer();
  try {
    const repo = '/mlc-ai/tiny-MLC/resolve/main/';
    const cache = smallModel(3);
    const names = Object.keys(cache.shards);
    assert.ok(names.length >= 3, `${names.length} shards`);
    server.routes.set(`${repo}tensor-cache.json`, { body: Buffer.from(JSON.stringify(cache.index)) });
    for (const [name, bytes] of Object.entries(cache.shards)) server.routes.set(repo + name, { body: bytes });
    server.routes.set(`${repo}mlc-chat-config.json`, { body: Buffer.from(JSON.stringify({ tokenizer_files: ['tokenizer.json'] })) });
    server.routes.set(`${repo}tokenizer.json`, { body: Buffer.from('{"model":{}}') });
    const library = fs.readFileSync(modelPath(ARCTIC_S));
    server.routes.set('/libs/tiny-webgpu.wasm', { body: library });
    // The second shard's connection drops halfway the first time.
    const cut = names[1];
    server.routes.set(repo + cut, { body: cache.shards[cut], mode: 'cut', cutAt: 3000, holdMs: 500 });
    const out = path.join(tmp, 'fetched');
    const args = ['model', 'fetch', 'mlc-ai/tiny-MLC', '--lib', `${server.url}/libs/tiny-webgpu.wasm`, '--lib-sha256', sha256(library), '--out', out];
    const env = { HF_ENDPOINT: server.url };
    const first = await webffi(args, env);
    assert.equal(first.status, 1, first.stdout + first.stderr);
    assert.match(first.stderr, new RegExp(`${cut}: the download stopped after 3000 of ${cache.shards[cut].length} bytes .*run again to continue`));
    assert.equal(fs.statSync(path.join(out, `${cut}.part`)).size, 3000, 'the part kept');
    assert.ok(!fs.existsSync(path.join(out, 'tensor-cache.json')), 'no index before every shard is there');

    server.routes.get(repo + cut).mode = 'normal';
    server.log.length = 0;
    const second = await webffi(args, env);
    assert.equal(second.status, 0, second.stderr);
    assert.deepEqual(server.log.filter((l) => l.path === repo + cut).map((l) => l.range), ['bytes=3000-'], 'continued with a Range request');
    assert.match(second.stderr, new RegExp(`^${cut}: 0\\.0 MiB resumed \\(\\d/5 files\\)$`, 'm'), 'plain progress lines when not a terminal');
    assert.match(second.stdout, /5 files, 3\.4 MiB \(\d fetched, \d already there\), checked/);
    for (const [name, bytes] of Object.entries(cache.shards)) assert.deepEqual(fs.readFileSync(path.join(out, name)), Buffer.from(bytes), name);
    assert.deepEqual(fs.readFileSync(path.join(out, 'tiny-webgpu.wasm')), library);
    assert.ok(fs.existsSync(path.join(out, 'tokenizer.json')) && fs.existsSync(path.join(out, 'mlc-chat-config.json')));
    assert.deepEqual(fs.readdirSync(out).filter((f) => f.endsWith('.part')), []);

    // Fetched again: nothing downloaded but the index and config.
    server.log.length = 0;
    const third = await webffi(args, env);
    assert.equal(third.status, 0, third.stderr);
    assert.deepEqual(server.log.map((l) => l.path).filter((p) => p.endsWith('.bin') || p.endsWith('.wasm')), []);

    // The runtime loads what was fetched.
    const rt = await loadLibrary({ wasm: path.join(out, 'tiny-webgpu.wasm') });
    const loaded = await loadTensorCache(rt, out, { device: 'cpu' });
    assert.equal(loaded.records, 4);
    assert.deepEqual(rt.getGlobal('vm.builtin.tensor_cache.get')('layer.1.weight').view(), cache.values.get('layer.1.weight'));
    rt.dispose();

    // A shard whose size is not the index's: refused before a byte is written.
    const other = '/mlc-ai/wrong-MLC/resolve/main/';
    const wrong = smallModel(4);
    server.routes.set(`${other}ndarray-cache.json`, { body: Buffer.from(JSON.stringify(wrong.index)) });
    for (const [name, bytes] of Object.entries(wrong.shards)) server.routes.set(other + name, { body: bytes });
    const long = Object.keys(wrong.shards)[0];
    server.routes.set(other + long, { body: Buffer.concat([wrong.shards[long], Buffer.alloc(5)]) });
    const wrongOut = path.join(tmp, 'wrong');
    const refused = await webffi(['model', 'fetch', `${server.url}${other}`, '--out', wrongOut]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, new RegExp(`${long}: the server has ${wrong.shards[long].length + 5} bytes, the index says ${wrong.shards[long].length}; refused, nothing written`));
    assert.ok(!fs.existsSync(path.join(wrongOut, long)) && !fs.existsSync(path.join(wrongOut, `${long}.part`)));
    assert.ok(!fs.existsSync(path.join(wrongOut, 'ndarray-cache.json')));
    // The same size, other bytes: the md5sum the index records refuses them.
    const flipped = Buffer.from(wrong.shards[long]);
    flipped[7] ^= 1;
    server.routes.set(other + long, { body: flipped, mode: 'chunked' });
    const badHash = await webffi(['model', 'fetch', `${server.url}${other}`, '--out', wrongOut]);
    assert.equal(badHash.status, 1);
    assert.match(badHash.stderr, new RegExp(`${long}: its md5 is ${md5(flipped)}, the index says ${md5(wrong.shards[long])}; refused`));
    assert.ok(!fs.existsSync(path.join(wrongOut, long)));
    // No index at all: both names looked for are named.
    const none = await webffi(['model', 'fetch', `${server.url}/nothing/here/`, '--out', path.join(tmp, 'none')]);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /no index at http:\/\/127\.0\.0\.1:\d+\/nothing\/here\/: looked for tensor-cache\.json and ndarray-cache\.json/);
  } finally {
    await server.close();
  }
});

test('model fetch progress: one line rewritten in place on a terminal, a line per file otherwise', () => {
  const writes = [];
  const tty = progressPrinter({ isTTY: true, columns: 80, write: (s) => writes.push(s) });
  tty.onProgress({ file: 'a.bin', event: 'bytes', loadedBytes: 1 << 20, totalBytes: 4 << 20, doneFiles: 0, totalFiles: 2 });
  tty.onProgress({ file: 'a.bin', event: 'file', how: 'downloaded', bytes: 2 << 20, loadedBytes: 2 << 20, totalBytes: 4 << 20, doneFiles: 1, totalFiles: 2 });
  tty.end();
  assert.deepEqual(writes, ['\r\x1b[K1.0 MiB of 4.0 MiB 25%, 0/2 files, a.bin', '\r\x1b[K2.0 MiB of 4.0 MiB 50%, 1/2 files, a.bin', '\n']);
  const lines = [];
  const plain = progressPrinter({ isTTY: false, write: (s) => lines.push(s) });
  plain.onProgress({ file: 'a.bin', event: 'bytes', loadedBytes: 1, totalBytes: 4, doneFiles: 0, totalFiles: 2 });
  plain.onProgress({ file: 'a.bin', event: 'file', how: 'resumed', bytes: 2 << 20, loadedBytes: 2, totalBytes: 4, doneFiles: 1, totalFiles: 2 });
  plain.end();
  assert.deepEqual(lines, ['a.bin: 2.0 MiB resumed (1/2 files)\n']);
});

test('a library\'s failed check comes out as the kind its message names (TVM\'s convention), with the check and the frame', async () => {
  const rt = await loadLibrary();
  const vm = await RelaxVM.create(rt);
  await vm.loadParams(seededTensorCache(vm.metadata.params));
  const ids = rt.empty([1, 4], 'int32', 'webgpu');
  const prefill = vm.getFunction('prefill');
  // Pipelines compiled as first used (the default): prefill compiles the
  // 15 of the library's 38 kernels it runs (docs/model-libraries.md).
  const gpuDevice = rt.backends.get('webgpu').engine.device;
  const proto = Object.getPrototypeOf(gpuDevice);
  const create = proto.createComputePipeline;
  let compiled = 0;
  proto.createComputePipeline = function counted(...a) {
    compiled++;
    return create.apply(this, a);
  };
  try {
    const two = rt.empty([1, 2], 'int32', 'webgpu').set(new Int32Array([101, 102]));
    assert.deepEqual((await prefill(two, two, vm.params).data()).length, 2 * 384);
  } finally {
    proto.createComputePipeline = create;
  }
  assert.equal(compiled, 15);
  assert.equal(Object.keys(JSON.parse(vm.executable.getFunction('webgpu.get_fmap')())).length, 38);
  assert.throws(() => prefill('not a tensor', ids, vm.params), (e) => e instanceof FFITypeError && e.kind === 'TypeError' &&
    e.message.startsWith('Check failed: (opt_ptr.has_value()) is false: ErrorContext(fn=prefill, loc=param[0]') &&
    /expect a Tensor but get ffi\.String$/.test(e.message) && /builtin\.cc", line \d+/.test(e.backtrace));
  assert.throws(() => prefill(ids, ids), (e) => e instanceof ValueError && e.kind === 'ValueError' &&
    /^Check failed: .*\(3 vs\. 2\) : Invoking function prefill expects 3 arguments/.test(e.message));
  assert.equal(rt.getGlobal('testing.add_one')(1), 2, 'the runtime goes on');
  // The VM does not: the failed call's frames stay (its C++ unwinds without
  // exceptions), and its next call fails; a VM created again runs, on the
  // parameters already in the runtime's tensor cache (docs/model-libraries.md).
  const two = rt.empty([1, 2], 'int32', 'webgpu').set(new Int32Array([101, 102]));
  assert.throws(() => prefill(two, two, vm.params), (e) => e.kind === 'InternalError' && /register_file/.test(e.message));
  const again = await RelaxVM.create(rt);
  const names = again.metadata.params.map((p) => p.name);
  const cached = rt.getGlobal('vm.builtin.param_module_from_cache_by_name')(names).getFunction('get_params')();
  assert.equal((await again.getFunction('prefill')(two, two, cached).data()).length, 2 * 384);
  again.dispose();
  // The parser: ICHECK's InternalError, a check's named kind, a LOG(FATAL) kind, none.
  const parse = (line) => parseLibraryError(`[FATAL] /src/x.cc:9: ${line}\n\n`);
  assert.deepEqual(parse('InternalError: Check failed: a == b (1 vs. 2) : ValueError: bad'),
    { kind: 'ValueError', message: 'Check failed: a == b (1 vs. 2) : bad', backtrace: '  File "/src/x.cc", line 9, in <unknown>\n' });
  assert.equal(parse('InternalError: Check failed: a == b (1 vs. 2) : plain').kind, 'InternalError');
  assert.equal(parse('InternalError: Check failed: a == b (1 vs. 2) : plain').message, 'Check failed: a == b (1 vs. 2) : plain');
  assert.equal(parse('Check failed: x is false: KeyError: k').kind, 'KeyError');
  assert.equal(parse('IndexError: out of range').kind, 'IndexError');
  assert.equal(parse('IndexError: out of range').message, 'out of range');
  assert.equal(parse('no kind: here').kind, 'InternalError');
  assert.equal(parse('Check failed: x is false: no kind: TypeError: later').kind, 'InternalError', 'only the first word after the check');
  vm.dispose();
  rt.dispose();
});
