// The runtime-wide budget of peers: every peer of a runtime (TVM RPC
// clients through listenRPC or an endpoint, worker-session peers through
// serve) is charged against it together, whatever each one's own limits
// allow, and what is left is the owner's. It is the runtime's peer guard
// (js/core/peer_guard.js: the C core's budget on webffi's core, one kept in
// JS over a model library). The TVM RPC endpoint enters it by itself; a
// worker session enters it around the synchronous part of each call it runs
// for its peer (js/session.js).
import { FFITypeError, MemoryError } from './errors.js';
import { INTERNALS } from './objects.js';
import { budgetFields } from './core/peer_guard.js';

/** The runtime's peer guard (js/core/peer_guard.js), or null for anything else. */
function guardOf(rt) {
  return rt?.[INTERNALS]?.peers ?? null;
}

/**
 * The runtime's peer budget: { memoryBytes (the heap bytes that may be in
 * use while a peer's request runs; over a model library, whose heap is not
 * counted, the size of wasm memory), deviceBytes (device memory peers may
 * hold together: what their requests allocated and have not freed),
 * deviceHeld (held now), timerMs (how long one runtime.RPCTimeEvaluator
 * evaluation may run synchronously), active (peer requests running now),
 * heapInUse (the heap's live bytes; over a model library, the size of wasm
 * memory), keptBytes (JS data, strings and bytes, the worker sessions of
 * this thread may keep for their peers together), kept (kept now) }; null
 * for what is not a runtime.
 */
export function peerBudget(rt) {
  const g = guardOf(rt);
  if (!g) return null;
  return { ...g.read(), keptBytes: heldLimit, kept: held };
}

/** Changes the runtime's peer budget ({ memoryBytes?, deviceBytes?, timerMs?, keptBytes? }, each a positive integer); returns it. */
export function setPeerBudget(rt, budget = {}) {
  const g = guardOf(rt);
  if (!g) throw new FFITypeError('setPeerBudget: this is not a webffi runtime');
  const [memory, device, timer, kept] = budgetFields(budget);
  g.set(memory, device, timer);
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
  const g = guardOf(rt);
  if (!g) return fn(a, b, c);
  g.enter();
  try {
    return fn(a, b, c);
  } finally {
    g.leave();
  }
}
