// Property-based fuzzing of the session protocol (fast-check) against real
// workers (worker_threads): random and mutated raw messages posted straight
// to a worker serving a runtime, and garbage posted from a worker to a
// client. After every batch the server must answer a known call correctly,
// the worker must still run, and the client's session must keep working.
// Fixed seed and a random one (printed); WEBFFI_FUZZ_RUNS=N runs longer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { runs, seeds, jsValue, mutations, mutate, garbage } from '../support/fuzz_values.mjs';
import { BAD_CALLS, BAD_REPLIES } from '../support/peer_corpus.mjs';
import { loadTesting } from '../support/testing_module.mjs';

const workerUrl = new URL('../support/session_worker.mjs', import.meta.url);
const rt = await loadTesting(await webffi.load());
const GLOBALS = [...rt.listGlobals(), 'test.bytes_sum', 'test.js_error', 'test.with_cause', 'test.function'];
const BATCH = 8;

function spawn() {
  const w = new Worker(workerUrl, { workerData: { role: 'default' } });
  w.exited = null;
  w.on('exit', (code) => { w.exited = code; });
  w.on('error', () => {});
  return w;
}

// Remote references: well-formed, to ids that may or may not exist, and malformed.
const refArb = fc.oneof(
  fc.integer({ min: 1, max: 40 }).map((id) => ['R', id]),
  fc.tuple(fc.constant('R'), fc.oneof(fc.integer(), fc.double(), fc.anything({ maxDepth: 1 })), fc.anything({ maxDepth: 1 })),
  fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 4 }).map((a) => ['R', ...a]),
);
const argsArb = fc.oneof(
  fc.array(jsValue, { maxLength: 3 }).map((a) => webffi.encodeValue(a)),
  fc.array(fc.oneof(refArb, jsValue.map((v) => webffi.encodeValue(v))), { maxLength: 3 }).map((a) => ['a', ...a]),
  fc.tuple(fc.array(jsValue, { maxLength: 3 }), mutations).map(([a, m]) => mutate(webffi.encodeValue(a), m)),
  garbage,
  fc.anything({ maxDepth: 2 }),
);
const idArb = fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constantFrom(0, -1, 1.5, NaN, 2 ** 53, 2 ** 60, '7', null), fc.anything({ maxDepth: 1 }));
const nameArb = fc.oneof(fc.constantFrom(...GLOBALS), fc.string({ maxLength: 20 }), garbage);
const OPS = ['call', 'fetch', 'tensor', 'getFunction', 'loadModule', 'info'];
const callArb = fc.record({
  wrpc: fc.constantFrom('call', 'call', 'call', 'cancel', 'hello', 'ok', 'err', 'nope', 'release', 'close'),
  id: idArb,
  name: nameArb,
  op: fc.oneof(fc.constantFrom(...OPS), fc.anything({ maxDepth: 1 })),
  result: fc.oneof(fc.constantFrom('auto', 'remote', 'value'), fc.anything({ maxDepth: 1 })),
  args: argsArb,
  refs: fc.oneof(fc.array(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.anything({ maxDepth: 1 })), { maxLength: 8 }), fc.anything({ maxDepth: 1 })),
}, { requiredKeys: ['wrpc'] });
const messageArb = fc.oneof({ weight: 8, arbitrary: callArb }, { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom(...BAD_CALLS.map(([, m]) => m)) });

/** Posts what structured clone can carry; returns whether it was posted. */
function postRaw(port, m) {
  try {
    port.postMessage(m);
    return true;
  } catch {
    return false;
  }
}

/** Resolves with the reply to `id` on worker w, or rejects after ms. */
function replyTo(w, id, ms = 30000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { w.off('message', on); reject(new Error(`no reply to call ${id} within ${ms} ms`)); }, ms);
    const on = (m) => {
      if (m?.id === id && (m.wrpc === 'ok' || m.wrpc === 'err')) {
        clearTimeout(timer);
        w.off('message', on);
        resolve(m);
      }
    };
    w.on('message', on);
  });
}

test('random and mutated messages to a serving worker: it answers the next call and keeps running', { timeout: 300000 }, async () => {
  const w = spawn();
  let known = 1_000_000;
  let posted = 0;
  const knownCall = async () => {
    const id = ++known;
    const reply = replyTo(w, id);
    w.postMessage({ wrpc: 'call', id, name: 'ffi.String', args: ['a', `ping ${id}`] });
    const r = await reply;
    assert.equal(r.wrpc, 'ok', `the known call ${id} answered: ${JSON.stringify(r).slice(0, 300)}`);
    assert.equal(webffi.decodeValue(r.value), `ping ${id}`);
  };
  await knownCall();
  for (const seed of seeds()) {
    const t0 = performance.now();
    const before = posted;
    const numRuns = runs(500);
    await fc.assert(fc.asyncProperty(fc.array(messageArb, { minLength: 1, maxLength: BATCH }), async (batch) => {
      for (const m of batch) if (postRaw(w, m)) posted++;
      await knownCall();
      assert.equal(w.exited, null, 'the worker is running');
      return true;
    }), { seed, numRuns, endOnFailure: true });
    console.log(`# session fuzz (server): seed ${seed}, ${numRuns} batches, ${posted - before} raw messages posted, ${(performance.now() - t0).toFixed(0)} ms, worker alive`);
  }
  // And a real client still works against it.
  const s = await webffi.connect(w, { timeout: 30000 });
  assert.equal(await s.call('ffi.String', ['still serving']), 'still serving');
  // Remote objects still work: a handle made now, called, and released.
  const fn = await s.call('test.function');
  assert.ok(fn instanceof webffi.RemoteFunction);
  assert.equal(await fn.call(['through a handle']), 'through a handle');
  const live = await s.remoteCount();
  fn.dispose();
  assert.equal(await s.remoteCount(), live - 1);
  s.close();
  await w.terminate();
});

test('garbage from a worker to a client: the session keeps its pending calls correct', { timeout: 300000 }, async () => {
  const w = spawn();
  const s = await webffi.connect(w, { timeout: 30000 });
  let calls = 0;
  const replyArb = fc.record({
    wrpc: fc.constantFrom('ok', 'err', 'hello', 'call', 'cancel', 'release', 'close', 'x'),
    id: fc.oneof(fc.integer({ min: 10_000_000, max: 2 ** 40 }), fc.constantFrom(0, -1, 1.5, 2 ** 60, '1', null), fc.anything({ maxDepth: 1 })),
    value: argsArb,
    error: argsArb,
    version: fc.oneof(fc.integer(), fc.anything({ maxDepth: 1 })),
  }, { requiredKeys: ['wrpc'] });
  const sprayArb = fc.array(fc.oneof({ weight: 6, arbitrary: replyArb }, { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
    { weight: 1, arbitrary: fc.constantFrom(...BAD_REPLIES) }), { minLength: 1, maxLength: BATCH });
  let sprayed = 0;
  for (const seed of seeds()) {
    const t0 = performance.now();
    const before = sprayed;
    const numRuns = runs(500);
    await fc.assert(fc.asyncProperty(sprayArb, fc.integer({ min: 0, max: 1000 }), async (spray, k) => {
      // Ids of calls already answered are fair game too: they must be ignored.
      const bad = spray.map((m) => (m && typeof m === 'object' && !Array.isArray(m) && calls > 0 && k % 3 === 0 ? { ...m, id: 1 + (k % calls) } : m));
      let clonable;
      try {
        clonable = structuredClone(bad);
      } catch {
        clonable = bad.filter((m) => { try { structuredClone(m); return true; } catch { return false; } });
      }
      sprayed += clonable.length;
      w.postMessage({ spray: clonable });
      calls++;
      assert.equal(await s.call('test.bytes_sum', [new Uint8Array([k & 255, 1])]), (k & 255) + 1);
      assert.equal(s.closed, false, 'the session is open');
      return true;
    }), { seed, numRuns, endOnFailure: true });
    console.log(`# session fuzz (client): seed ${seed}, ${numRuns} sprays, ${sprayed - before} garbage replies, ${(performance.now() - t0).toFixed(0)} ms, session working`);
  }
  s.close();
  await w.terminate();
});
