// What protects a runtime's owner from its peers (worker-session peers,
// TVM RPC clients), for every kind of core: the runtime is made with one
// guard (js/runtime.js), and every path that serves a peer goes through it.
// - PEER_DENIED: the globals the default `expose` of any runtime keeps from a
//   peer: what hands out addresses, frees, mutates registries or caches, or
//   runs as long as it is told.
// - The peer budget: a peer's requests run between enter() and leave(); the
//   heap they may fill is bounded (memoryBytes), the device memory
//   allocated while one runs is charged until it is freed, whatever asked
//   for it (deviceTake/deviceGive, called by the device backends), and
//   timers are bounded (timerMs).
// On webffi's core the budget is the C core's (src/peer_budget.c), which
// counts the heap exactly and is shared with its RPC endpoint. A library TVM
// compiled carries its own allocator, which webffi cannot count: there the
// budget is kept here and bounds wasm memory itself (peers may not grow it
// past memoryBytes, and are not served while it is past).
import { MemoryError, FFITypeError } from '../errors.js';
import { WEBFFI_CORE } from './detect.js';

/**
 * Globals a peer cannot call unless the server names them in `expose`, on
 * every kind of runtime.
 */
export const PEER_DENIED = Object.freeze([
  // test hooks (`testing.trap` traps on purpose), module loading and lookup,
  // the global registry (listing, removing, metadata: existence is not
  // leaked), registry and type mutation (`ffi._RegisterFFIInit` writes type
  // attributes for good) and the runtime's own internals
  'testing.*', 'webffi.*', 'ffi.Module*', 'ffi.SystemLib', 'ffi.Function*', 'ffi.GetGlobalFuncMetadata', 'ffi.MakeField*',
  'ffi._*',
  // what hands out or takes raw addresses: TVM's WebGPU device protocol
  // (`wasm.WebGPUDeviceAPI` allocates, frees and copies by address),
  // device APIs, streams, copies to and from raw pointers, views over
  // another tensor's memory, RPC sessions and remote handles
  'wasm.*', 'device_api.*', 'runtime.Device_*', 'runtime.TVMSetStream', 'runtime.TVMTensorCopyFromBytes',
  'runtime.TVMTensorCopyToBytes', 'runtime.TVMTensorCreateView', 'rpc.*', 'tvm.rpc.*',
  // a model library's VM internals, caches and registries: the weights
  // (`vm.builtin.tensor_cache.*`, parameters), the memory manager
  // (`vm.builtin.memory_manager.clear` frees what the owner's tensors use),
  // KV caches, the py-func registry; TVM's web glue; executables and files
  'vm.builtin.*', 'tvmjs.*', 'relax.*', 'runtime.LoadParams*', 'runtime.SaveParams*', 'cache_flush_*', '__*',
  // timers and profilers that run for as long as they are told (a library's
  // own runtime.RPCTimeEvaluator; webffi's RPC engine serves a bounded one)
  'runtime.RPCTimeEvaluator', 'profiling.*', 'runtime.profiling.*',
]);

const MEMORY = 0;
const DEVICE = 1;
const DEVICE_HELD = 2;
const TIMER = 3;
const DEPTH = 4;
const HEAP = 5;

const DEFAULTS = { memoryBytes: 1536 * 2 ** 20, deviceBytes: 2 ** 30, timerMs: 2000 };

function deviceRefusal(n, budget, held) {
  return new MemoryError(`webffi: allocating ${n} bytes of device memory for a peer would pass the runtime's peer budget of ${budget} bytes, which every peer shares (${held} held)`);
}

/** The guard over webffi's core: its C budget (webffi.h, WebFFIPeer*). */
function webffiGuard(x) {
  const get = (what) => Number(x.WebFFIPeerBudgetGet(what));
  const take = x.WebFFIPeerDeviceTake;
  const give = x.WebFFIPeerDeviceGive;
  return {
    enter: x.WebFFIPeerEnter,
    leave: x.WebFFIPeerLeave,
    get active() {
      return get(DEPTH);
    },
    read: () => ({
      memoryBytes: get(MEMORY), deviceBytes: get(DEVICE), deviceHeld: get(DEVICE_HELD), timerMs: get(TIMER),
      active: get(DEPTH), heapInUse: get(HEAP),
    }),
    set(memory, device, timer) {
      x.WebFFIPeerBudgetSet(BigInt(memory), BigInt(device), timer);
    },
    deviceTake(n) {
      const rc = take(BigInt(n));
      if (rc < 0) throw deviceRefusal(n, get(DEVICE), get(DEVICE_HELD));
      return rc === 1;
    },
    deviceGive(n) {
      give(BigInt(n));
    },
    memoryGrew() {},
  };
}

/** The guard over a library TVM compiled: the budget kept in JS. */
function libraryGuard(memory) {
  const budget = { ...DEFAULTS };
  let depth = 0;
  let deviceHeld = 0;
  const size = () => memory.buffer.byteLength;
  return {
    enter() {
      if (depth === 0 && size() > budget.memoryBytes) {
        throw new MemoryError(`webffi: the runtime's wasm memory (${size()} bytes) is past the peer budget of ${budget.memoryBytes} bytes: peers are not served until the budget is raised (setPeerBudget)`);
      }
      depth++;
    },
    leave() {
      if (depth > 0) depth--;
    },
    get active() {
      return depth;
    },
    read: () => ({ ...budget, deviceHeld, active: depth, heapInUse: size() }),
    set(memory, device, timer) {
      if (memory) budget.memoryBytes = memory;
      if (device) budget.deviceBytes = device;
      if (timer) budget.timerMs = timer;
    },
    deviceTake(n) {
      if (depth === 0) return false;
      if (n > budget.deviceBytes - deviceHeld) throw deviceRefusal(n, budget.deviceBytes, deviceHeld);
      deviceHeld += n;
      return true;
    },
    deviceGive(n) {
      deviceHeld = Math.max(0, deviceHeld - n);
    },
    /**
     * The library grew its memory (its emscripten_notify_memory_growth):
     * within a peer's request, past the budget, the request ends here
     * with a MemoryError (its allocation never completes; the pages stay).
     */
    memoryGrew() {
      if (depth > 0 && size() > budget.memoryBytes) {
        throw new MemoryError(`webffi: a peer's request may not grow the runtime's wasm memory past the peer budget of ${budget.memoryBytes} bytes (it asked for ${size()})`);
      }
    },
  };
}

/** The peer guard of an attached core (js/core/): one per runtime. */
export function createPeerGuard(core) {
  const x = core.exports;
  if (core.kind === WEBFFI_CORE) return webffiGuard(x);
  return libraryGuard(x.memory);
}

/** Checks setPeerBudget's fields; returns [memory, device, timer, kept] (0: unchanged). */
export function budgetFields(budget) {
  const field = (name, max) => {
    const v = budget?.[name];
    if (v === undefined) return 0;
    if (!Number.isSafeInteger(v) || v < 1 || v > max) throw new FFITypeError(`setPeerBudget: ${name} is an integer from 1 to ${max}`);
    return v;
  };
  return [field('memoryBytes', 2 ** 32), field('deviceBytes', Number.MAX_SAFE_INTEGER), field('timerMs', 2 ** 31 - 1),
    field('keptBytes', Number.MAX_SAFE_INTEGER)];
}
