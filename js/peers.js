// The runtime-wide budget of peers (src/peer_budget.c): every peer of a
// runtime (TVM RPC clients through listenRPC or an endpoint, worker-session
// peers through serve) is charged against it together, whatever each one's
// own limits allow, and what is left is the owner's. The TVM RPC endpoint
// enters it by itself; a worker session enters it around the synchronous
// part of each call it runs for its peer (js/session.js).
import { FFITypeError } from './errors.js';

const MEMORY = 0;
const DEVICE = 1;
const DEVICE_HELD = 2;
const TIMER = 3;
const DEPTH = 4;

/** The budget's exports, or null for a core without them. */
function entries(rt) {
  const x = rt?.exports;
  return typeof x?.WebFFIPeerBudgetGet === 'function' ? x : null;
}

/**
 * The runtime's peer budget: { memoryBytes (how far wasm memory may grow
 * while a peer's request runs), deviceBytes (device memory all RPC sessions
 * may hold together), deviceHeld (held now), timerMs (how long one
 * runtime.RPCTimeEvaluator evaluation may run synchronously), active (peer
 * requests running now) }; null when the core has no budget.
 */
export function peerBudget(rt) {
  const x = entries(rt);
  if (!x) return null;
  const get = (what) => Number(x.WebFFIPeerBudgetGet(what));
  return {
    memoryBytes: get(MEMORY), deviceBytes: get(DEVICE), deviceHeld: get(DEVICE_HELD),
    timerMs: get(TIMER), active: get(DEPTH),
  };
}

/** Changes the runtime's peer budget ({ memoryBytes?, deviceBytes?, timerMs? }, each a positive integer); returns it. */
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
  x.WebFFIPeerBudgetSet(BigInt(memory), BigInt(device), timer);
  return peerBudget(rt);
}

/** Runs fn() as a peer's request (charged to the budget); for the session server. */
export function asPeer(rt, fn) {
  const x = entries(rt);
  if (!x) return fn();
  x.WebFFIPeerEnter();
  try {
    return fn();
  } finally {
    x.WebFFIPeerLeave();
  }
}
