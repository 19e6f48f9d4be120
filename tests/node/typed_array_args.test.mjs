// A typed array passed where an FFI value is expected is a 1-D CPU tensor
// holding a copy of it (Uint8Array stays Bytes), for every dtype a typed
// array implies; C sees an ffi.Tensor, and the call owns it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load, isHandle } from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

const CASES = [
  [Int8Array, 'int8', [-1, 2]], [Int16Array, 'int16', [-300, 7]], [Int32Array, 'int32', [-70000, 9]],
  [BigInt64Array, 'int64', [-(2n ** 40n), 3n]], [Uint8ClampedArray, 'uint8', [255, 1]],
  [Uint16Array, 'uint16', [65535, 2]], [Uint32Array, 'uint32', [4000000000, 5]],
  [BigUint64Array, 'uint64', [2n ** 62n, 1n]], [Float32Array, 'float32', [1.5, -2]],
  [Float64Array, 'float64', [Math.PI, 1e300]],
];

test('typed arrays of every dtype arrive in C as 1-D CPU tensors', async () => {
  const rt = await loadTesting(await load({ autoloadBackends: false }));
  const apply = rt.getGlobal('testing.apply');
  for (const [Arr, dtype, values] of CASES) {
    const data = new Arr(values);
    const seen = apply((t) => {
      assert.ok(t instanceof rt.Tensor, `${Arr.name}: a Tensor`);
      return [String(t.dtype), t.shape, String(t.device), Array.from(t.toTypedArray(), String)];
    }, data).toJS();
    assert.deepEqual(seen, [dtype, [values.length], 'cpu:0', values.map(String)], Arr.name);
    assert.deepEqual(Array.from(data), values, `${Arr.name}: the caller's array is untouched`);
  }
  const bytes = apply((b) => b, new Uint8Array([1, 2, 3]));
  assert.ok(bytes instanceof Uint8Array && !isHandle(bytes), 'Uint8Array stays Bytes');
  assert.throws(() => apply((t) => t, new DataView(new ArrayBuffer(4))), { name: 'TypeError', message: /Cannot convert a JS DataView/ });
});

test('the tensor a typed array argument becomes is released with the call', async () => {
  const rt = await loadTesting(await load({ autoloadBackends: false }));
  const apply = rt.getGlobal('testing.apply');
  const nop = rt.getGlobal('testing.nop');
  const kept = [];
  apply((t) => { kept.push(t); return null; }, new Float32Array([1, 2]));
  // The callback's handle is its own reference: it stays valid after the call.
  assert.deepEqual(Array.from(kept[0].toTypedArray()), [1, 2]);
  kept[0].dispose();
  const big = new Float64Array(1 << 16);
  const before = rt.exports.memory.buffer.byteLength;
  for (let i = 0; i < 2000; i++) nop(big); // 1 GiB copied in all: memory must not grow with it
  assert.ok(rt.exports.memory.buffer.byteLength - before < 64 << 20, 'typed array arguments leak');
});
