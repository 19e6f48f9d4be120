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
//   timers are bounded (timerMs: by the C core's RPC engine on webffi's
//   core, by boundLibraryTimer over a model library).
// On webffi's core the budget is the C core's (src/peer_budget.c), which
// counts the heap exactly and is shared with its RPC endpoint. A library TVM
// compiled carries its own allocator, which webffi cannot count: there the
// budget is kept here and bounds wasm memory itself (peers may not grow it
// past memoryBytes, and are not served while it is past).
import { MemoryError, FFITypeError, makeError } from '../errors.js';
import { isHandle } from '../objects.js';
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
  // own runtime.RPCTimeEvaluator: exposed, a peer gets boundLibraryTimer's;
  // webffi's RPC engine serves a bounded one of its own)
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

const TIMER_NAME = 'runtime.RPCTimeEvaluator';

/**
 * A model library's own runtime.RPCTimeEvaluator runs as long as its
 * arguments say (a huge `number` held the thread for minutes). It stays the
 * library's for the owner; for a peer (the global is denied by default, an
 * owner may expose it) it is webffi's, bounded as on webffi's core: refused
 * at creation when `repeat x min_repeat_ms` passes the budget's timerMs,
 * stopped with an RPCError once an evaluation runs past it.
 */
export function boundLibraryTimer(rt, guard) {
  const own = rt.getGlobal(TIMER_NAME, { optional: true });
  if (own === null) return;
  rt.registerGlobal(TIMER_NAME, function boundedTimeEvaluator(...args) {
    return guard.active > 0 ? peerTimer(guard, args) : own(...args);
  }, { override: true });
}

const intIn = (v, min, max) => Number.isSafeInteger(v) && v >= min && v <= max;

/** A timer for a peer: TVM's timing loop (a warm-up, then `repeat` runs of `number` calls grown to min_repeat_ms) within the budget. */
function peerTimer(guard, [mod, name, , , number, repeat, minRepeatMs, limitZero]) {
  if (!isHandle(mod) || mod.typeKey !== 'ffi.Module') {
    throw makeError('ValueError', `${TIMER_NAME}: a peer times a function of a module it holds (argument 0; a global named alone would pass by serve's expose)`);
  }
  if (typeof name !== 'string') throw makeError('TypeError', `${TIMER_NAME}: argument 1 is the function's name`);
  if (!intIn(number, 1, Number.MAX_SAFE_INTEGER) || !intIn(repeat, 1, 100000) || !intIn(minRepeatMs, 0, 2 ** 31) ||
      !intIn(limitZero, 0, Number.MAX_SAFE_INTEGER)) {
    throw makeError('ValueError', `${TIMER_NAME}: number and repeat must be positive, min_repeat_ms and limit_zero_time_iterations not negative`);
  }
  const budget = guard.read().timerMs;
  if (minRepeatMs > budget || repeat * minRepeatMs > budget) {
    throw makeError('ValueError', `${TIMER_NAME}: repeat ${repeat} x min_repeat_ms ${minRepeatMs} passes the runtime's timer budget of ${budget} ms, which every peer shares`);
  }
  const f = mod.getFunction(name);
  const discard = (v) => {
    if (isHandle(v)) v.dispose();
  };
  return function timedWithinBudget(...args) {
    const began = performance.now();
    discard(f(...args));
    const out = new Float64Array(repeat);
    let n = number;
    for (let r = 0; r < repeat; r++) {
      let ms = 0;
      let zeros = 0;
      do {
        if (ms > 0) n = Math.min(1e12, Math.max(Math.floor(minRepeatMs / (ms / n) + 1), Math.floor(n * 1.618)));
        const start = performance.now();
        for (let j = 0; j < n; j++) {
          discard(f(...args));
          const spent = performance.now() - began;
          if (spent > budget) {
            throw makeError('RPCError', `${TIMER_NAME}: stopped after ${Math.round(spent)} ms, past the runtime's timer budget of ${budget} ms (the thread serves every peer)`);
          }
        }
        ms = performance.now() - start;
        if (ms === 0) zeros++;
      } while (ms < minRepeatMs && zeros < limitZero);
      out[r] = ms / 1e3 / n;
    }
    return new Uint8Array(out.buffer);
  };
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
