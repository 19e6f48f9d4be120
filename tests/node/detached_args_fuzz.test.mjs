// Typed arrays, DataViews and ArrayBuffers whose buffer was transferred
// away (detached), generated and passed everywhere a caller can hand bytes
// over (docs/security.md, "strings and typed arrays as arguments"): calls
// on webffi's core and on a model library's, nested in arrays and maps,
// rt.tensor, Tensor.set, the by-value codec, a worker session, and a TVM RPC
// client (call arguments, RPCSession.tensor, RPCTensor.set). Each is
// webffi's FFITypeError (a TypeError) saying it is detached, never the
// engine's "Cannot perform Construct on a detached ArrayBuffer", and the
// next call works.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';
import { modelPath, ARCTIC_S } from '../support/model_fixture.mjs';
import { check } from '../support/seeded.mjs';

const quiet = { log() {}, warn() {} };
const core = await loadTesting(await webffi.load({ autoloadBackends: false, logger: quiet }));
const library = await webffi.load({ wasm: fs.readFileSync(modelPath(ARCTIC_S)), autoloadBackends: false, logger: quiet });
const { port1, port2 } = new MessageChannel();
webffi.serve(core, port1, { expose: ['testing.nop'] });
const remote = await webffi.connect(port2);
const server = await webffi.listenRPC(core, { port: 0, key: 'detached', expose: ['testing.nop'] });
const rpc = await webffi.connectRPC(`127.0.0.1:${server.port}`, 'detached');
const rpcNop = await rpc.getGlobal('testing.nop');
after(async () => {
  await rpc.close();
  await server.close();
  remote.close?.();
  port1.close();
  port2.close();
});

const KINDS = [Uint8Array, Int8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array, DataView, ArrayBuffer];

/** A view of kind K over a buffer that is then detached, as told. */
function detached(K, length, how) {
  const buffer = new ArrayBuffer(64);
  const v = K === ArrayBuffer ? buffer : K === DataView ? new DataView(buffer, 0, length) : new K(buffer, 0, Math.min(length, 64 / K.BYTES_PER_ELEMENT));
  if (how === 'structuredClone') structuredClone(buffer, { transfer: [buffer] });
  else if (how === 'transfer' && typeof buffer.transfer === 'function') buffer.transfer();
  else new MessageChannel().port1.postMessage(buffer, [buffer]);
  return v;
}

const wrap = {
  bare: (v) => v,
  array: (v) => [1, [v]],
  map: (v) => new Map([['k', v]]),
};

const PATHS = {
  'core call': (v) => core.getGlobal('testing.nop')(v),
  'library call': (v) => library.getGlobal('testing.echo')(v),
  'core toFFI': (v) => core.toFFI(v),
  'rt.tensor': (v) => core.tensor(v),
  'Tensor.set': (v) => core.empty([2], 'float32').set(v),
  encodeValue: (v) => webffi.encodeValue(v),
  'session call': (v) => remote.getGlobal('testing.nop')(v),
  'rpc call': (v) => rpcNop(v),
  'rpc tensor': (v) => rpc.tensor(v),
  'rpc set': async (v) => {
    const t = await rpc.tensor(new Uint8Array(16));
    try {
      return await t.set(v);
    } finally {
      t.dispose();
    }
  },
};
const VIEW_ONLY = new Set(['rt.tensor', 'Tensor.set', 'rpc tensor', 'rpc set']); // these take one view, not containers

test('property: a detached buffer anywhere bytes are passed is webffi\'s TypeError, and the next call works', { timeout: 120000 }, async (t) => {
  const seen = new Map();
  await check(t, import.meta.url, fc.asyncProperty(
    fc.constantFrom(...KINDS), fc.integer({ min: 0, max: 16 }), fc.constantFrom('structuredClone', 'transfer', 'postMessage'),
    fc.constantFrom(...Object.keys(wrap)), fc.constantFrom(...Object.keys(PATHS)),
    async (K, length, how, wrapping, where) => {
      const v = wrap[VIEW_ONLY.has(where) ? 'bare' : wrapping](detached(K, length, how));
      let outcome;
      try {
        const r = await PATHS[where](v);
        outcome = r;
      } catch (e) {
        outcome = e;
      }
      // Refused as detached by webffi, or refused as a value the path does
      // not take (a DataView, a Map over RPC) with webffi's own error: never
      // the engine's plain TypeError, never accepted.
      const e = outcome;
      assert.ok(e instanceof webffi.FFIError && (e instanceof TypeError || e.kind === 'ValueError'),
        `${where} of ${wrapping} ${K.name}: ${e?.constructor?.name}: ${e?.message ?? String(e)}`);
      assert.doesNotMatch(e.message, /Cannot perform|detached ArrayBuffer$/);
      if (/detached/.test(e.message)) seen.set(where, (seen.get(where) ?? 0) + 1);
      assert.equal(core.getGlobal('testing.add_one')(1), 2);
      assert.equal(library.getGlobal('testing.add_one')(1), 2);
    }), 150);
  t.diagnostic(`refused as detached: ${[...seen].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  // Every path refused a detached buffer by name at least once (for the fixed seed's share of the runs).
  assert.ok(seen.size >= 8, [...seen.keys()].join(', '));
  assert.equal(await rpcNop(new Uint8Array([1, 2])), null, 'the RPC session works');
  assert.equal(await remote.getGlobal('testing.nop')(new Float32Array(2)), null, 'the worker session works');
});
