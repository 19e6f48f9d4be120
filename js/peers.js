// The runtime-wide budget of peers (src/peer_budget.c): every peer of a
// runtime (TVM RPC clients through listenRPC or an endpoint, worker-session
// peers through serve) is charged against it together, whatever each one's
// own limits allow, and what is left is the owner's. The TVM RPC endpoint
// enters it by itself; a worker session enters it around the synchronous
// part of each call it runs for its peer (js/session.js).
import { FFITypeError, MemoryError } from './errors.js';

const MEMORY = 0;
const DEVICE = 1;
const DEVICE_HELD = 2;
const TIMER = 3;
const DEPTH = 4;
const HEAP = 5;

/** The budget's exports, or null for a core without them. */
function entries(rt) {
  const x = rt?.exports;
  return typeof x?.WebFFIPeerBudgetGet === 'function' ? x : null;
}

/**
 * The runtime's peer budget: { memoryBytes (the heap bytes that may be in
 * use while a peer's request runs), deviceBytes (device memory all RPC
 * sessions may hold together), deviceHeld (held now), timerMs (how long one
 * runtime.RPCTimeEvaluator evaluation may run synchronously), active (peer
 * requests running now), heapInUse (the heap's live bytes), keptBytes (JS
 * data, strings and bytes, the worker sessions of this thread may keep for
 * their peers together), kept (kept now) }; null when the core has no budget.
 */
export function peerBudget(rt) {
  const x = entries(rt);
  if (!x) return null;
  const get = (what) => Number(x.WebFFIPeerBudgetGet(what));
  return {
    memoryBytes: get(MEMORY), deviceBytes: get(DEVICE), deviceHeld: get(DEVICE_HELD),
    timerMs: get(TIMER), active: get(DEPTH), heapInUse: get(HEAP), keptBytes: heldLimit, kept: held,
  };
}

/** Changes the runtime's peer budget ({ memoryBytes?, deviceBytes?, timerMs?, keptBytes? }, each a positive integer); returns it. */
export function setPeerBudget(rt, budget = {}) {
  const x = entries(rt);
  if (!x) throw new FFITypeError('setPeerBudget: this runtime has no peer budget (WebFFIPeerBudgetSet)');
  const field = (name, max) => {
    const v = budget?.[name];
    if (v === undefined) return 0;
    if (!Number.isSafeInteger(v) || v < 1 || v > max) throw new FFITypeError(`setPeerBudget: ${name} is an integer from 1 to ${max}`);
    return v;
  };
  const memory = field('memoryBytes', 2 ** 32);
  const device = field('deviceBytes', Number.MAX_SAFE_INTEGER);
  const timer = field('timerMs', 2 ** 31 - 1);
  const kept = field('keptBytes', Number.MAX_SAFE_INTEGER);
  x.WebFFIPeerBudgetSet(BigInt(memory), BigInt(device), timer);
  if (kept) heldLimit = kept;
  return peerBudget(rt);
}

// JS data the worker sessions of this thread keep for their peers (a string
// or bytes result held as a remote object lives in the JS heap, not in wasm
// memory): counted together, whatever each session's maxRemotes allows.
let heldLimit = 512 * 1024 * 1024;
let held = 0;

/** The bytes of JS data a remote table keeps (typed arrays, ArrayBuffers, strings); 0 for the rest. */
export function heldBytes(v) {
  if (typeof v === 'string') return 2 * v.length;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (v instanceof ArrayBuffer) return v.byteLength;
  return 0;
}

/** Charges n bytes kept for a peer; a MemoryError past the budget. */
export function holdForPeer(n) {
  if (n === 0) return;
  if (held + n > heldLimit) {
    throw new MemoryError(`webffi session: keeping ${n} more bytes for a peer would pass the budget of ${heldLimit} bytes that every peer of this thread shares (${held} kept)`);
  }
  held += n;
}

export function releaseForPeer(n) {
  held = Math.max(0, held - n);
}

/**
 * Runs fn(a, b, c) as a peer's request (charged to the budget); for the
 * session server, which passes its arguments rather than a closure made
 * per call.
 */
export function asPeer(rt, fn, a, b, c) {
  const x = entries(rt);
  if (!x) return fn(a, b, c);
  x.WebFFIPeerEnter();
  try {
    return fn(a, b, c);
  } finally {
    x.WebFFIPeerLeave();
  }
}
