// An MLC model library on webffi against TVM's own web runtime (tvmjs, npm
// @mlc-ai/web-runtime), both in this process on WebGPU devices from the same
// adapter (Node: Dawn over llvmpipe; no GPU needed), same weights, same
// inputs. Rows, each with the ratio webffi / tvmjs (or / a raw baseline):
//   first load  what a page waits for, each in a fresh process (the first
//               WebGPU device and pipelines of a process pay for Dawn's and
//               the shader compiler's start), the order rotating: from the
//               library's bytes to a VM that can be called (load +
//               RelaxVM.create / instantiate + the device +
//               createVirtualMachine + asyncLoadWebGPUPipelines, every
//               pipeline ahead, as web-llm does), its part after the device,
//               and the first prefill after it (the parameters loaded
//               between, not counted); webffi by default (each pipeline
//               compiled as first used) and with pipelines: true (all ahead)
//   pipelines   every pipeline ahead in this process (webffi first: the
//               process's start is its)
//   params      uploading the tensor cache to the GPU, against raw
//               createBuffer + writeBuffer of the same bytes (bandwidth)
//   prefill     one forward pass, from the call to the output on the host
//   record      CPU time of the call itself (the dispatches recorded), per dispatch
// Run: node bench/model_library.mjs [--library s|m] [--length L] [--rounds N] [--loads N]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { load } from '../js/index.js';
import { RelaxVM, loadTensorCache } from '../js/model_library.js';
import { webgpuRuntimeBackend } from '../js/backends/webgpu_runtime.js';
import { nodeGPU } from '../tests/support/webgpu_node.mjs';
import { modelPath, ARCTIC_S, ARCTIC_M, makeTensorCache, makeInputs } from '../tests/support/model_fixture.mjs';
import { instantiateTvmjs } from '../tests/support/tvmjs_reference.mjs'; // and the WebGPU globals tvmjs reads
import { median } from './paired.mjs';

const { values: args } = parseArgs({
  options: {
    library: { type: 'string', default: 's' }, length: { type: 'string', default: '16' }, rounds: { type: 'string', default: '5' },
    loads: { type: 'string', default: '3' }, 'first-load': { type: 'string' },
  },
});
const library = args.library === 'm' ? ARCTIC_M : ARCTIC_S;
const L = Number(args.length);
const rounds = Number(args.rounds);
const gpu = nodeGPU(); // kept reachable: Dawn's devices need their instance
const wasm = fs.readFileSync(modelPath(library));
const quiet = { log() {}, warn() {} };

// ---- one first load in this fresh process (the parent runs these): the
// time until the VM can be called, then the first prefill (the parameters,
// loaded between the two, are not counted: the params rows measure them)
if (args['first-load']) {
  const who = args['first-load'];
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let vmStart;
  let ready;
  let first;
  const inputs = makeInputs(L);
  if (who === 'webffi' || who === 'webffi-ahead') {
    const rt = await load({ wasm, autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet });
    vmStart = performance.now();
    const vm = await RelaxVM.create(rt, { pipelines: who === 'webffi-ahead' });
    ready = performance.now();
    await vm.loadParams(makeTensorCache(vm.metadata.params));
    await rt.backends.get('webgpu').sync();
    const ids = rt.empty([1, L], 'int32', 'webgpu').set(inputs.ids);
    const mask = rt.empty([1, L], 'int32', 'webgpu').set(inputs.mask);
    const t = performance.now();
    await vm.getFunction('prefill')(ids, mask, vm.params).data();
    first = performance.now() - t;
  } else {
    const tvm = await instantiateTvmjs(wasm);
    tvm.initWebGPU(await device());
    tvm.beginScope();
    vmStart = performance.now();
    const dev = tvm.webgpu();
    const vm = tvm.createVirtualMachine(dev);
    await tvm.asyncLoadWebGPUPipelines(vm.getInternalModule());
    ready = performance.now();
    const cache = makeTensorCache(JSON.parse(vm.getFunction('_metadata')()).params);
    const names = [];
    for (const shard of cache.index.records) {
      for (const r of shard.records) {
        const host = tvm.empty(r.shape, r.dtype, tvm.cpu());
        tvm.ctx.arrayDecodeStorage(host, cache.shards[shard.dataPath].subarray(r.byteOffset, r.byteOffset + r.nbytes), r.format, r.dtype);
        tvm.tensorCacheUpdate(r.name, tvm.empty(r.shape, r.dtype, dev).copyFrom(host), false);
        names.push(r.name);
      }
    }
    await dev.sync();
    const params = tvm.getParamsFromCacheByName(names);
    const ids = tvm.empty([1, L], 'int32', dev).copyFrom(inputs.ids);
    const mask = tvm.empty([1, L], 'int32', dev).copyFrom(inputs.mask);
    const t = performance.now();
    const out = vm.getFunction('prefill')(ids, mask, params);
    tvm.empty(out.shape, out.dtype, tvm.cpu()).copyFrom(out);
    await dev.sync();
    first = performance.now() - t;
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ ready: ready - start, vm: ready - vmStart, first, cpu: (cpu.user + cpu.system) / 1000 }));
  process.exit(0);
}

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

// ---- first loads, each in a fresh process, the order rotating
const KINDS = ['webffi', 'webffi-ahead', 'tvmjs'];
const firstLoads = Object.fromEntries(KINDS.map((k) => [k, []]));
for (let i = 0; i < Number(args.loads); i++) {
  for (let j = 0; j < KINDS.length; j++) {
    const who = KINDS[(i + j) % KINDS.length];
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--library', args.library, '--length', String(L), '--first-load', who],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    firstLoads[who].push(JSON.parse(out.trim().split('\n').at(-1)));
  }
}

// ---- webffi
const rt = await load({ wasm, autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet });
let t0 = performance.now();
const vm = await RelaxVM.create(rt, { pipelines: true });
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
const tvm = await instantiateTvmjs(wasm);
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
const loadMed = (who, key) => median(firstLoads[who].map((r) => r[key]));
const loadList = (who, key) => firstLoads[who].map((r) => r[key].toFixed(0)).join(', ');
const loadRow = (name, who, key, note = '') => row(name, loadMed(who, key), loadMed('tvmjs', key), 'ms',
  `(${who === 'webffi' ? '' : `${who}, `}each: ${loadList(who, key)}; tvmjs ${loadList('tvmjs', key)})${note}`);
console.log(`first loads: a fresh process each, ${firstLoads.tvmjs.length} of each, medians; tvmjs compiles every pipeline ahead (as web-llm does)`);
loadRow('ready to call', 'webffi', 'ready', ' webffi compiles each pipeline as first used');
loadRow('  the VM (after the device)', 'webffi', 'vm');
loadRow('  first prefill after it', 'webffi', 'first');
row('  ready + first prefill', median(firstLoads.webffi.map((r) => r.ready + r.first)), median(firstLoads.tvmjs.map((r) => r.ready + r.first)), 'ms');
loadRow('  process CPU time', 'webffi', 'cpu', ' (to the first prefill\'s end)');
loadRow('ready, all pipelines ahead', 'webffi-ahead', 'ready');
loadRow('  the VM and its pipelines', 'webffi-ahead', 'vm');
loadRow('  first prefill after it', 'webffi-ahead', 'first');
loadRow('  process CPU time', 'webffi-ahead', 'cpu', ' (to the first prefill\'s end)');
row('all pipelines, one process', oursPipelines, theirsPipelines, 'ms', '(webffi first: it pays the process\'s start)');
row('params to the GPU (VM)', oursParams, theirsParams, 'ms', '(first load of each runtime)');
console.log(`${'params bandwidth'.padEnd(26)} webffi ${fmt(totalBytes / 2 ** 20 / (oursUploadMs / 1000))} MiB/s  raw writeBuffer ${fmt(totalBytes / 2 ** 20 / (rawParams / 1000))} MiB/s  ratio ${(rawParams / oursUploadMs).toFixed(2)}x of raw (medians of ${rounds}, a fresh runtime each, raw on its device)`);
row('prefill (to host)', med(ours, 'ms'), med(theirs, 'ms'), 'ms');
row('CPU per dispatch', perDispatch(ours), perDispatch(theirs), 'us');
process.exit(0);
