// Property-based fuzzing (fast-check) of a worker as the middle hop: random
// and mutated raw messages posted to a worker that serves its TVM RPC
// session to a device (serve(connectRPC(...), parentPort)). After every
// batch the worker must answer a known call from the device, still run, and
// the device must go on serving its own clients. Fixed seed and a random
// one (printed); WEBFFI_FUZZ_RUNS=N runs longer.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { runs, seeds, jsValue, mutations, mutate, garbage } from '../support/fuzz_values.mjs';
import { BAD_CALLS } from '../support/peer_corpus.mjs';

const rt = await webffi.load({ logger: { log() {}, warn() {} } });
rt.registerGlobal('demo.echo', (x) => x);
rt.registerGlobal('demo.iota', (n) => rt.tensor(new Float32Array(Math.min(Math.max(Number(n) | 0, 0), 64))));
rt.registerGlobal('demo.adder', (k) => (x) => x + k);
rt.registerGlobal('demo.fail', (msg) => {
  throw new RangeError(String(msg));
});
const device = await webffi.listenRPC(rt, { port: 0, key: 'dev', expose: ['demo.*', 'ffi.Array*', 'ffi.String'] });
after(() => device.close());

const GLOBALS = ['demo.echo', 'demo.iota', 'demo.adder', 'demo.fail', 'ffi.Array', 'ffi.ArraySize', 'ffi.ArrayGetItem', 'testing.add_one', 'no.such'];
const OPS = ['call', 'fetch', 'tensor', 'getFunction', 'loadModule', 'info'];
const BATCH = 8;
const refArb = fc.oneof(
  fc.integer({ min: 1, max: 40 }).map((id) => ['R', id]),
  fc.tuple(fc.constant('R'), fc.oneof(fc.integer(), fc.double(), fc.anything({ maxDepth: 1 })), fc.anything({ maxDepth: 1 })),
);
const argsArb = fc.oneof(
  fc.array(jsValue, { maxLength: 3 }).map((a) => webffi.encodeValue(a)),
  fc.array(fc.oneof(refArb, jsValue.map((v) => webffi.encodeValue(v))), { maxLength: 3 }).map((a) => ['a', ...a]),
  fc.tuple(fc.array(jsValue, { maxLength: 3 }), mutations).map(([a, m]) => mutate(webffi.encodeValue(a), m)),
  garbage,
);
const callArb = fc.record({
  wrpc: fc.constantFrom('call', 'call', 'call', 'cancel', 'release', 'close', 'hello', 'nope'),
  id: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constantFrom(0, -1, 1.5, 2 ** 60, '7', null)),
  name: fc.oneof(fc.constantFrom(...GLOBALS), fc.string({ maxLength: 20 }), garbage),
  op: fc.oneof(fc.constantFrom(...OPS), fc.anything({ maxDepth: 1 })),
  result: fc.oneof(fc.constantFrom('auto', 'remote', 'value'), fc.anything({ maxDepth: 1 })),
  args: argsArb,
  refs: fc.oneof(fc.array(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.anything({ maxDepth: 1 })), { maxLength: 8 }), fc.anything({ maxDepth: 1 })),
}, { requiredKeys: ['wrpc'] });
const messageArb = fc.oneof({ weight: 8, arbitrary: callArb }, { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom(...BAD_CALLS.map(([, m]) => m)) });

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

test('random and mutated messages to a worker hop: it answers from the device and keeps running', { timeout: 300000 }, async () => {
  const w = new Worker(new URL('../support/rpc_worker_hop.mjs', import.meta.url), { workerData: { target: `127.0.0.1:${device.port}`, key: 'dev' } });
  let exited = null;
  w.on('exit', (code) => { exited = code; });
  w.on('error', () => {});
  let known = 1_000_000;
  let posted = 0;
  const knownCall = async () => {
    const id = ++known;
    const reply = replyTo(w, id);
    w.postMessage({ wrpc: 'call', id, name: 'demo.echo', args: ['a', `ping ${id}`] });
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
      for (const m of batch) {
        try {
          w.postMessage(m);
          posted++;
        } catch {
          // not cloneable: never sent
        }
      }
      await knownCall();
      assert.equal(exited, null, 'the worker is running');
      return true;
    }), { seed, numRuns, endOnFailure: true });
    console.log(`# rpc hop fuzz: seed ${seed}, ${numRuns} batches, ${posted - before} raw messages posted, ${(performance.now() - t0).toFixed(0)} ms, worker alive`);
  }
  // a real client through the worker still works, remote objects included
  const s = await webffi.connect(w, { timeout: 30000 });
  const f = await s.call('demo.adder', [2]);
  assert.ok(f instanceof webffi.RemoteFunction);
  assert.equal(await f.call([40]), 42);
  const live = await s.remoteCount();
  f.dispose();
  assert.equal(await s.remoteCount(), live - 1);
  s.close();
  await w.terminate();
  // and the device serves its own clients
  const direct = await webffi.connectRPC(`127.0.0.1:${device.port}`, 'dev');
  assert.equal(await direct.call('demo.echo', ['direct']), 'direct');
  await direct.close();
});
