// An MLC model library on webffi against TVM's own web runtime (tvmjs, npm
// @mlc-ai/web-runtime), both in this process on WebGPU devices from the same
// adapter (Node: Dawn over llvmpipe; no GPU needed), same weights, same
// inputs. Rows, each with the ratio webffi / tvmjs (or / a raw baseline):
//   pipelines   compiling every kernel's pipeline ahead (RelaxVM.create /
//               asyncLoadWebGPUPipelines)
//   params      uploading the tensor cache to the GPU, against raw
//               createBuffer + writeBuffer of the same bytes (bandwidth)
//   prefill     one forward pass, from the call to the output on the host
//   record      CPU time of the call itself (the dispatches recorded), per dispatch
// Run: node bench/model_library.mjs [--library s|m] [--length L] [--rounds N]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { load } from '../js/index.js';
import { RelaxVM, loadTensorCache } from '../js/model_library.js';
import { webgpuRuntimeBackend } from '../js/backends/webgpu_runtime.js';
import { nodeGPU } from '../tests/support/webgpu_node.mjs';
import { modelPath, ARCTIC_S, ARCTIC_M, makeTensorCache, makeInputs } from '../tests/support/model_fixture.mjs';
import * as tvmjs from '@mlc-ai/web-runtime';
import '../tests/support/tvmjs_reference.mjs'; // the WebGPU globals tvmjs reads
import { median } from './paired.mjs';

const { values: args } = parseArgs({
  options: { library: { type: 'string', default: 's' }, length: { type: 'string', default: '16' }, rounds: { type: 'string', default: '5' } },
});
const library = args.library === 'm' ? ARCTIC_M : ARCTIC_S;
const L = Number(args.length);
const rounds = Number(args.rounds);
const gpu = nodeGPU(); // kept reachable: Dawn's devices need their instance
const wasm = fs.readFileSync(modelPath(library));
const quiet = { log() {}, warn() {} };

// Dispatches counted where both runtimes record them.
let dispatches = 0;
const passProto = Object.getPrototypeOf((await (await gpu.requestAdapter({ featureLevel: 'compatibility' })).requestDevice())
  .createCommandEncoder().beginComputePass());
const dispatch = passProto.dispatchWorkgroups;
passProto.dispatchWorkgroups = function countedDispatch(...a) {
  dispatches++;
  return dispatch.apply(this, a);
};

async function device() {
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' });
  const requiredLimits = {};
  for (const k of ['maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX', 'maxStorageBuffersPerShaderStage',
    'maxComputeWorkgroupStorageSize', 'maxBufferSize', 'maxStorageBufferBindingSize']) requiredLimits[k] = adapter.limits[k];
  return adapter.requestDevice({ requiredLimits });
}

// ---- webffi
const rt = await load({ wasm, autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet });
let t0 = performance.now();
const vm = await RelaxVM.create(rt);
const oursPipelines = performance.now() - t0;
const cache = makeTensorCache(vm.metadata.params);
const totalBytes = cache.index.records.reduce((a, s) => a + s.nbytes, 0);
const inputs = makeInputs(L);
const backend = rt.backends.get('webgpu');
t0 = performance.now();
await vm.loadParams({ index: cache.index, shards: cache.shards });
await backend.sync();
const oursParams = performance.now() - t0;
const ids = rt.empty([1, L], 'int32', 'webgpu').set(inputs.ids);
const mask = rt.empty([1, L], 'int32', 'webgpu').set(inputs.mask);
const prefill = vm.getFunction('prefill');
async function oursOnce() {
  const n0 = dispatches;
  const start = performance.now();
  const out = prefill(ids, mask, vm.params);
  const recorded = performance.now() - start;
  await out.data();
  const ms = performance.now() - start;
  out.dispose();
  return { ms, recorded, dispatches: dispatches - n0 };
}

// ---- parameter upload: loadTensorCache into a fresh runtime (no buffers to
// reuse yet, as on a page's first load) against raw createBuffer +
// writeBuffer of the same records on the same device, in alternating order.
async function rawUpload(d) {
  const start = performance.now();
  const buffers = [];
  for (const shard of cache.index.records) {
    const bytes = cache.shards[shard.dataPath];
    for (const r of shard.records) {
      const b = d.createBuffer({ size: Math.ceil(r.nbytes / 4) * 4, usage: 0x80 | 0x8 | 0x4 });
      d.queue.writeBuffer(b, 0, bytes, r.byteOffset, r.nbytes);
      buffers.push(b);
    }
  }
  await d.queue.onSubmittedWorkDone();
  const ms = performance.now() - start;
  for (const b of buffers) b.destroy();
  return ms;
}
async function oursUpload(fresh) {
  const start = performance.now();
  await loadTensorCache(fresh, { index: cache.index, shards: cache.shards });
  await fresh.backends.get('webgpu').sync();
  return performance.now() - start;
}
const uploads = { ours: [], raw: [] };
for (let i = 0; i < rounds; i++) {
  const fresh = await load({ wasm, autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet });
  await fresh.backends.ensure('webgpu');
  const d = fresh.backends.get('webgpu').engine.device;
  if (i % 2) {
    uploads.raw.push(await rawUpload(d));
    uploads.ours.push(await oursUpload(fresh));
  } else {
    uploads.ours.push(await oursUpload(fresh));
    uploads.raw.push(await rawUpload(d));
  }
  fresh.dispose();
}
const rawParams = median(uploads.raw);
const oursUploadMs = median(uploads.ours);

// ---- tvmjs, driven as web-llm drives it
const wasi = tvmjs.createPolyfillWASI();
Object.assign(wasi.imports.env, {
  _ZN3tvm7runtime9threading15ResetThreadPoolEv: () => {},
  _ZN3tvm7runtime9threading10NumThreadsEv: () => 1,
});
const tvm = await tvmjs.instantiate(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength), wasi, () => {});
tvm.initWebGPU(await device());
tvm.beginScope();
const dev = tvm.webgpu();
const tvmVM = tvm.detachFromCurrentScope(tvm.createVirtualMachine(dev));
t0 = performance.now();
await tvm.asyncLoadWebGPUPipelines(tvmVM.getInternalModule());
const theirsPipelines = performance.now() - t0;
t0 = performance.now();
const names = [];
for (const shard of cache.index.records) {
  const bytes = cache.shards[shard.dataPath];
  for (const r of shard.records) {
    const host = tvm.empty(r.shape, r.dtype, tvm.cpu());
    tvm.ctx.arrayDecodeStorage(host, bytes.subarray(r.byteOffset, r.byteOffset + r.nbytes), r.format, r.dtype);
    const onGPU = tvm.empty(r.shape, r.dtype, dev);
    onGPU.copyFrom(host);
    tvm.tensorCacheUpdate(r.name, onGPU, false);
    names.push(r.name);
  }
}
await dev.sync();
const theirsParams = performance.now() - t0;
const tvmParams = tvm.detachFromCurrentScope(tvm.getParamsFromCacheByName(names));
const tvmIds = tvm.detachFromCurrentScope(tvm.empty([1, L], 'int32', dev).copyFrom(inputs.ids));
const tvmMask = tvm.detachFromCurrentScope(tvm.empty([1, L], 'int32', dev).copyFrom(inputs.mask));
const tvmPrefill = tvm.detachFromCurrentScope(tvmVM.getFunction('prefill'));
tvm.endScope();
async function theirsOnce() {
  tvm.beginScope();
  const n0 = dispatches;
  const start = performance.now();
  const out = tvmPrefill(tvmIds, tvmMask, tvmParams);
  const recorded = performance.now() - start;
  const host = tvm.empty(out.shape, out.dtype, tvm.cpu());
  host.copyFrom(out);
  await dev.sync();
  const ms = performance.now() - start;
  tvm.endScope();
  return { ms, recorded, dispatches: dispatches - n0 };
}

// ---- prefill, alternating (the first call of each warms up)
await oursOnce();
await theirsOnce();
const ours = [];
const theirs = [];
for (let i = 0; i < rounds; i++) {
  if (i % 2) {
    theirs.push(await theirsOnce());
    ours.push(await oursOnce());
  } else {
    ours.push(await oursOnce());
    theirs.push(await theirsOnce());
  }
}

const fmt = (v, digits = 1) => v.toFixed(digits).padStart(10);
const row = (name, a, b, unit, note = '') =>
  console.log(`${name.padEnd(26)} webffi ${fmt(a)} ${unit}  tvmjs ${fmt(b)} ${unit}  ratio ${(a / b).toFixed(2)}x ${note}`);
const med = (list, key) => median(list.map((r) => r[key]));
const perDispatch = (list) => median(list.map((r) => (1000 * r.recorded) / r.dispatches));
console.log(`${library}, L = ${L}, ${rounds} rounds, ${ours[0].dispatches} dispatches per prefill (tvmjs: ${theirs[0].dispatches}), ` +
  `${(totalBytes / 2 ** 20).toFixed(1)} MiB of parameters`);
row('pipelines (all kernels)', oursPipelines, theirsPipelines, 'ms');
row('params to the GPU (VM)', oursParams, theirsParams, 'ms', '(first load of each runtime)');
console.log(`${'params bandwidth'.padEnd(26)} webffi ${fmt(totalBytes / 2 ** 20 / (oursUploadMs / 1000))} MiB/s  raw writeBuffer ${fmt(totalBytes / 2 ** 20 / (rawParams / 1000))} MiB/s  ratio ${(rawParams / oursUploadMs).toFixed(2)}x of raw (medians of ${rounds}, a fresh runtime each, raw on its device)`);
row('prefill (to host)', med(ours, 'ms'), med(theirs, 'ms'), 'ms');
row('CPU per dispatch', perDispatch(ours), perDispatch(theirs), 'us');
process.exit(0);
