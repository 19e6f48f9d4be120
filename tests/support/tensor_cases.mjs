// Tensor tests shared by Node (Dawn on llvmpipe) and headless Chromium
// (SwiftShader): tensorCases(rt, env) returns { name: async fn } for a
// runtime from load() whose WebGPU backend was discovered at load.
// env: { addOneModule: a path or URL of tests/modules/add_one.wasm }
import { assert, assertEqual, assertThrows } from '../browser/harness_page.mjs';
import { assertClose, broadcastRef, randomFloats } from './numeric.mjs';

const same = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

/** One typed array per dtype, with values that exercise the whole range. */
function dtypeSamples() {
  return {
    int8: new Int8Array([-128, -1, 0, 1, 127]),
    int16: new Int16Array([-32768, -1, 0, 1, 32767]),
    int32: new Int32Array([-(2 ** 31), -1, 0, 1, 2 ** 31 - 1]),
    int64: new BigInt64Array([-(2n ** 63n), -1n, 0n, 1n, 2n ** 63n - 1n]),
    uint8: new Uint8Array([0, 1, 127, 128, 255]),
    uint16: new Uint16Array([0, 1, 32768, 65535, 7]),
    uint32: new Uint32Array([0, 1, 2 ** 31, 2 ** 32 - 1, 7]),
    uint64: new BigUint64Array([0n, 1n, 2n ** 63n, 2n ** 64n - 1n, 7n]),
    float16: new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x7e00]), // 1, -2, max, tiny, NaN (bits)
    bfloat16: new Uint16Array([0x3f80, 0xc000, 0x7f7f, 0x0001, 0x7fc0]),
    float32: new Float32Array([-0, 1.5, -3.25, 3.4e38, NaN]),
    float64: new Float64Array([-0, 1e-300, -2.5, 1.7976931348623157e308, NaN]),
    bool: new Uint8Array([1, 0, 1, 1, 0]),
  };
}

export function tensorCases(rt, env) {
  const cpuRef = {
    add: (x, y) => x + y, sub: (x, y) => x - y, mul: (x, y) => x * y, div: (x, y) => x / y,
  };
  const f32 = (a) => Array.from(a, Math.fround);
  const gpu = async (data, shape) => {
    const c = rt.tensor(data, { shape });
    const g = await c.toDevice('webgpu');
    c.dispose();
    return g;
  };

  return {
    async 'every dtype round-trips: CPU view and copy, to WebGPU and back'() {
      for (const [dtype, data] of Object.entries(dtypeSamples())) {
        const t = rt.tensor(data, { dtype });
        assertEqual([String(t.dtype), t.location, t.shape, t.nbytes], [dtype, 'cpu', [5], data.byteLength], dtype);
        assertEqual(t.dataPtr % 64, 0, `${dtype} data is 64-byte aligned:`);
        assert(same(t.view(), data), `${dtype} view`);
        assert(t.toTypedArray().constructor === data.constructor && same(t.toTypedArray(), data), `${dtype} copy`);
        const g = await t.toDevice('webgpu');
        assertEqual([String(g.device), g.location, String(g.dtype)], ['webgpu:0', 'webgpu', dtype], dtype);
        assert(same(await g.data(), data), `${dtype} downloaded from WebGPU`);
        const back = await g.toDevice('cpu');
        assert(same(back.view(), data), `${dtype} back on the CPU`);
        for (const x of [t, g, back]) x.dispose();
      }
    },

    async 'a typed array of the wrong kind or size is refused clearly'() {
      await assertThrows(() => rt.tensor(new Float32Array(2), { dtype: 'int32' }), 'TypeError', /^tensor\(\): dtype int32 needs a Int32Array, got a Float32Array$/);
      await assertThrows(() => rt.tensor(new Float32Array(6), { shape: [4, 2] }), 'ValueError', /shape \[4,2\] has 8 elements, the data 6/);
      await assertThrows(() => rt.tensor([1, 2]), 'TypeError', /must be a typed array, got Array/);
      await assertThrows(() => rt.empty([2, -1]), 'ValueError', /invalid extent -1/);
    },

    async 'a view survives memory growth when asked for again; the old one detaches (shared memory: stays)'() {
      const data = randomFloats(1000);
      const t = rt.tensor(data, { shape: [10, 100] });
      const before = t.view();
      const pages = rt.exports.memory.buffer.byteLength;
      const big = rt.empty([16 << 20], 'float32'); // 64 MiB: the heap must grow
      assert(rt.exports.memory.buffer.byteLength > pages, 'memory grew');
      // a plain memory moves when it grows; the threaded core's shared memory never does
      assertEqual(before.length, rt.threads > 1 ? 1000 : 0, 'the borrowed view over the old buffer:');
      assert(same(t.view(), data), 'a new view reads the same data');
      t.view()[3] = 42;
      assertEqual((await t.data())[3], 42, 'views write through to the tensor:');
      big.dispose();
      t.dispose();
    },

    async 'shape, strides, byte offset and repr'() {
      const t = rt.empty([2, 3, 4], 'float32');
      assertEqual([t.ndim, t.shape, t.strides, t.byteOffset, t.size, t.nbytes], [3, [2, 3, 4], [12, 4, 1], 0, 24, 96]);
      assertEqual(String(t), 'float32[2, 3, 4]@cpu:0');
      assertEqual(t.typeKey, 'ffi.Tensor');
      t.dispose();
      await assertThrows(() => t.shape, 'ValueError', /Cannot use a disposed `ffi.Tensor`/);
    },

    async 'reading GPU data synchronously is a clear error; asynchronously it downloads'() {
      const g = await gpu(new Float32Array([1, 2, 3]));
      await assertThrows(() => g.view(), 'RuntimeError', /data lives on webgpu:0; reading it synchronously is not possible, use `await tensor.data\(\)`/);
      await assertThrows(() => g.toTypedArray(), 'RuntimeError', /webgpu:0/);
      assertEqual(Array.from(await g.data()), [1, 2, 3]);
      g.dispose();
    },

    async 'copies both ways and on the device, through the C core'() {
      const data = randomFloats(257);
      const g = await gpu(data);
      const g2 = await g.toDevice('webgpu'); // device to device (WebFFITensorCopy)
      const c = await g2.toDevice('cpu');
      assert(same(c.view(), data), 'cpu -> webgpu -> webgpu -> cpu');
      const empty = await rt.empty([0], 'float32').toDevice('webgpu');
      assertEqual((await empty.data()).length, 0);
      for (const x of [g, g2, c, empty]) x.dispose();
    },

    async 'every kernel through the runtime matches a CPU reference'() {
      const shapes = [[1], [7], [65], [3, 5, 7], [1000]];
      for (const op of Object.keys(cpuRef)) {
        for (const shape of shapes) {
          const n = shape.reduce((p, q) => p * q, 1);
          const x = randomFloats(n, 3);
          const y = randomFloats(n, 4).map((v) => (op === 'div' && Math.abs(v) < 0.1 ? 0.5 : v));
          const [a, b] = [await gpu(x, shape), await gpu(y, shape)];
          const out = rt.getGlobal(`webgpu.${op}`)(a, b);
          assertEqual([out.shape, String(out.device)], [shape, 'webgpu:0'], `${op} ${shape}`);
          assertClose(await out.data(), f32(x.map((v, i) => cpuRef[op](v, y[i]))), `webgpu.${op} ${shape}`, { rtol: 1e-5, atol: 1e-5 });
          const s = rt.getGlobal(`webgpu.${op}_scalar`)(a, 2.5);
          assertClose(await s.data(), f32(x.map((v) => cpuRef[op](v, 2.5))), `webgpu.${op}_scalar ${shape}`, { rtol: 1e-5, atol: 1e-5 });
          for (const t of [a, b, out, s]) t.dispose();
        }
      }
      for (const [M, K, N] of [[1, 1, 1], [5, 7, 3], [33, 65, 17], [64, 64, 64]]) {
        const x = randomFloats(M * K, 5);
        const y = randomFloats(K * N, 6);
        const ref = new Float32Array(M * N);
        for (let i = 0; i < M; i++) {
          for (let j = 0; j < N; j++) {
            let acc = 0;
            for (let k = 0; k < K; k++) acc += x[i * K + k] * y[k * N + j];
            ref[i * N + j] = acc;
          }
        }
        const out = rt.getGlobal('webgpu.matmul')(await gpu(x, [M, K]), await gpu(y, [K, N]));
        assertEqual(out.shape, [M, N]);
        assertClose(await out.data(), ref, `matmul ${M}x${K}x${N}`, { rtol: 1e-4, atol: 1e-4 });
      }
      const [R, C] = [6, 300];
      const x = randomFloats(R * C, 7);
      const a = await gpu(x, [R, C]);
      const rows = Array.from({ length: R }, (_, i) => Array.from(x.subarray(i * C, (i + 1) * C)));
      const sumRef = rows.map((r) => r.reduce((p, q) => p + q, 0));
      const maxRef = rows.map((r) => Math.max(...r));
      assertClose(await rt.getGlobal('webgpu.sum')(a, 1).data(), sumRef, 'sum axis 1', { rtol: 1e-4, atol: 1e-4 });
      assertClose(await rt.getGlobal('webgpu.sum')(a, null).data(), [sumRef.reduce((p, q) => p + q, 0)], 'sum all', { rtol: 1e-4, atol: 1e-3 });
      assertClose(await rt.getGlobal('webgpu.max')(a, -1).data(), maxRef, 'max axis -1', { rtol: 1e-5, atol: 1e-5 });
      const colMax = Array.from({ length: C }, (_, j) => Math.max(...rows.map((r) => r[j])));
      assertClose(await rt.getGlobal('webgpu.max')(a, 0).data(), colMax, 'max axis 0', { rtol: 1e-5, atol: 1e-5 });
      const softRef = rows.flatMap((r) => {
        const m = Math.max(...r);
        const e = r.map((v) => Math.exp(v - m));
        const s = e.reduce((p, q) => p + q, 0);
        return e.map((v) => v / s);
      });
      assertClose(await rt.getGlobal('webgpu.softmax')(a).data(), softRef, 'softmax', { rtol: 1e-4, atol: 1e-6 });
    },

    async 'binary kernels through the runtime broadcast and allocate the broadcast shape'() {
      const pairs = [[[3, 4], [4]], [[3, 1], [1, 5]], [[1], [6]], [[2, 3, 4], [3, 1]], [[2, 3, 4, 5, 6], [5, 6]]];
      for (const op of Object.keys(cpuRef)) {
        for (const [sx, sy] of pairs) {
          const x = randomFloats(sx.reduce((p, q) => p * q, 1), 8);
          const y = randomFloats(sy.reduce((p, q) => p * q, 1), 9).map((v) => (op === 'div' ? v + 3 : v));
          const [a, b] = [await gpu(x, sx), await gpu(y, sy)];
          const out = rt.getGlobal(`webgpu.${op}`)(a, b);
          const ref = broadcastRef(cpuRef[op], x, sx, y, sy);
          assertEqual([out.shape, String(out.device)], [ref.shape, 'webgpu:0'], `${op} ${sx} ${sy}`);
          assertClose(await out.data(), f32(ref.data), `webgpu.${op} ${sx} with ${sy}`, { rtol: 1e-5, atol: 1e-5 });
          for (const t of [a, b, out]) t.dispose();
        }
      }
    },

    async 'kernels check shapes, dtypes and devices with the runtime error classes'() {
      const a = await gpu(new Float32Array(6), [2, 3]);
      const b = await gpu(new Float32Array(6), [3, 2]);
      const add = rt.getGlobal('webgpu.add');
      const e = await assertThrows(() => add(a, b), 'ValueError', /^webgpu\.add: shapes \[2, 3\] and \[3, 2\] cannot be broadcast \(dimension -1: 3 vs 2\)$/);
      const five = await gpu(new Float32Array(24), [2, 1, 3, 1, 4]);
      const other = await gpu(new Float32Array(120), [1, 5, 1, 6, 4]);
      await assertThrows(() => add(five, other), 'ValueError', /^webgpu\.add: broadcasting \[2, 1, 3, 1, 4\] with \[1, 5, 1, 6, 4\] needs 5 dimensions/);
      assert(e instanceof Error && e.constructor.name === 'ValueError', 'a ValueError instance');
      await assertThrows(() => rt.getGlobal('webgpu.matmul')(a, a), 'ValueError', /inner dimensions differ/);
      const d = await gpu(new Float64Array(6), [2, 3]);
      const te = await assertThrows(() => add(d, d), 'TypeError', /unsupported dtype float64/);
      assert(te instanceof TypeError, 'a TypeError instance');
      const six = await gpu(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
      const fromC = rt.getGlobal('testing.apply')(rt.getGlobal('webgpu.mul_scalar'), six, 2); // C calls the kernel
      assertEqual([String(fromC), Array.from(await fromC.data())], ['float32[2, 3]@webgpu:0', [2, 4, 6, 8, 10, 12]]);
      const cpu = rt.tensor(new Float32Array(6), { shape: [2, 3] });
      await assertThrows(() => add(cpu, a), 'ValueError', /^webgpu\.add: argument a is on cpu:0, not webgpu:0; move it with `await tensor.toDevice\('webgpu'\)`$/);
      await assertThrows(() => rt.getGlobal('webgpu.sum')(a, 5), 'ValueError', /axis 5 is out of range/);
      assertEqual(Array.from(await add(a, a).data()), [0, 0, 0, 0, 0, 0], 'the runtime keeps working:');
    },

    async 'a disposed kernel result frees its GPU buffer at once, for reuse'() {
      const a = await gpu(new Float32Array(300));
      const add = rt.getGlobal('webgpu.add');
      const engine = rt.backends.get('webgpu').engine;
      add(a, a).dispose();
      const held = engine.info().bytesAllocated;
      for (let i = 0; i < 50; i++) add(a, a).dispose(); // synchronous: no task boundary in between
      assertEqual(engine.info().bytesAllocated, held, 'GPU bytes held after 50 more calls:');
      a.dispose();
    },

    async 'a chain of kernels through the runtime matches the CPU and reuses its buffers'() {
      const n = 1000;
      const x0 = randomFloats(n, 7);
      const y = randomFloats(n, 8);
      const [x, b] = [await gpu(x0), await gpu(y)];
      const add = rt.getGlobal('webgpu.add');
      const half = rt.getGlobal('webgpu.mul_scalar');
      const engine = rt.backends.get('webgpu').engine;
      const chain = () => {
        let t = add(x, b);
        for (let i = 1; i < 400; i++) {
          const next = i % 2 ? half(t, 0.5) : add(t, b);
          t.dispose();
          t = next;
        }
        return t;
      };
      const ref = Float32Array.from(x0);
      for (let j = 0; j < n; j++) ref[j] = Math.fround(ref[j] + y[j]);
      for (let i = 1; i < 400; i++) {
        for (let j = 0; j < n; j++) ref[j] = i % 2 ? Math.fround(ref[j] * 0.5) : Math.fround(ref[j] + y[j]);
      }
      const first = chain();
      assertClose(await first.data(), ref, 'after 400 kernels', { rtol: 0, atol: 0 });
      first.dispose();
      const held = engine.info().bytesAllocated;
      const second = chain();
      assertClose(await second.data(), ref, 'the same chain again', { rtol: 0, atol: 0 });
      second.dispose();
      assertEqual(engine.info().bytesAllocated, held, 'GPU bytes held after the second chain:');
      for (const t of [x, b]) t.dispose();
    },

    async 'inputs disposed while their kernel is pending leave its result intact'() {
      const x = await gpu(new Float32Array([1, 2, 3, 4]));
      const b = await gpu(new Float32Array([10, 20, 30, 40]));
      const out = rt.getGlobal('webgpu.add')(x, b);
      x.dispose();
      b.dispose();
      assertEqual(Array.from(await out.data()), [11, 22, 33, 44]);
      out.dispose();
    },

    async 'a failing call inside a chain raises its error; the calls around it complete'() {
      const a = await gpu(new Float32Array([1, 2, 3]));
      const wrong = await gpu(new Float32Array([1, 2]));
      const add = rt.getGlobal('webgpu.add');
      const first = add(a, a);
      await assertThrows(() => add(first, wrong), 'ValueError', /^webgpu\.add: shapes \[3\] and \[2\] cannot be broadcast/);
      await assertThrows(() => add(first, a, a), 'TypeError', /^webgpu\.add\(a: Tensor, b: Tensor\) takes 2 arguments, got 3$/);
      await assertThrows(() => rt.getGlobal('webgpu.softmax')(), 'TypeError', /^webgpu\.softmax\(a: Tensor\) takes 1 argument, got 0$/);
      await assertThrows(() => rt.getGlobal('webgpu.sum')(a, 0, 1), 'TypeError', /^webgpu\.sum\(a: Tensor, axis: Optional\[int\]\) takes 1 or 2 arguments, got 3$/);
      const second = add(first, a);
      assertEqual(Array.from(await second.data()), [3, 6, 9]);
      assertEqual(Array.from(await rt.getGlobal('webgpu.sum')(second).data()), [18], 'sum with the axis left out:');
      for (const t of [a, wrong, first, second]) t.dispose();
    },

    async 'C reads tensors as ffi.Tensor and as DLTensor* (tests/modules/add_one.c)'() {
      const mod = await rt.loadModule(env.addOneModule);
      const addOne = mod.getFunction('add_one');
      mod.dispose(); // the function keeps its module alive
      const x = rt.tensor(new Float32Array([1, 2.5, -3]));
      const y = rt.empty([3], 'float32');
      addOne(x, y);
      assertEqual(Array.from(y.view()), [2, 3.5, -2]);
      addOne(y.asDLTensorPtr(), x.asDLTensorPtr());
      assertEqual(Array.from(x.view()), [3, 4.5, -1]);
      const g = await x.toDevice('webgpu');
      await assertThrows(() => addOne(g, y), 'TypeError', /add_one expects 1-D float32 CPU tensors/);
      for (const t of [x, y, g]) t.dispose();
    },

    async 'a DLTensor* from C reaches a JS callback as a TensorView borrowed for the call'() {
      let kept = null;
      const seen = [];
      const f = rt.toFFI((v) => {
        kept = v;
        seen.push(v instanceof rt.TensorView, v instanceof rt.Tensor, v.shape, v.strides, String(v.dtype), String(v.device));
        seen.push(Array.from(v.toTypedArray()), Array.from(v.view()));
        v.set(new Float32Array([10, 20, 30, 40])); // C owns the memory; it sees the write
        return null;
      });
      // C calls f with a DLTensor* over a float32[2, 2] on its own frame, then sums it.
      assertEqual(rt.getGlobal('testing.call_with_dltensor')(f), 100);
      assertEqual(seen, [true, false, [2, 2], [2, 1], 'float32', 'cpu:0', [1, 2, 3, 4], [1, 2, 3, 4]]);
      await assertThrows(() => kept.shape, 'ValueError',
        /^Cannot use a `DLTensor\*` view after the callback it was passed to has returned; copy what you need during the call/);
      await assertThrows(() => kept.toTypedArray(), 'ValueError', /after the callback it was passed to has returned/);
      assertEqual(String(kept), 'TensorView(released)');
      f.dispose();
    },

    async 'a TensorView goes back to C as the same DLTensor*; toTensor() and encodeValue() keep copies'() {
      const { encodeValue, decodeValue } = await import('../../js/index.js');
      const t = rt.tensor(new Float32Array([1, 2, 3]));
      let copy = null;
      let encoded = null;
      const f = rt.toFFI((v) => {
        assertEqual(String(v), 'TensorView(float32[3]@cpu:0)');
        copy = v.toTensor();
        encoded = encodeValue([v]);
        return v; // a DLTensor* result: the same pointer
      });
      const r = rt.getGlobal('testing.apply')(f, t.asDLTensorPtr());
      assert(r instanceof rt.TensorView, 'a DLTensor* result reads as a TensorView');
      assertEqual([r.dataPtr, Array.from(r.view())], [t.dataPtr, [1, 2, 3]]);
      assert(copy instanceof rt.Tensor && copy.dataPtr !== t.dataPtr, 'toTensor() copies');
      t.set(new Float32Array([7, 8, 9]));
      assertEqual([Array.from(copy.view()), Array.from(r.view())], [[1, 2, 3], [7, 8, 9]]);
      const back = decodeValue(structuredClone(encoded), { runtime: rt })[0];
      assertEqual([back instanceof rt.Tensor, back.shape, Array.from(back.view())], [true, [3], [1, 2, 3]]);
      let cloneError = null;
      try {
        structuredClone(r);
      } catch (e) {
        cloneError = e;
      }
      assertEqual(cloneError?.name, 'DataCloneError', 'posting a view directly:');
      for (const x of [t, copy, back, f]) x.dispose();
    },

    async 'a DLTensor* pointing outside wasm memory is a ValueError, and the runtime keeps working'() {
      const { AS_POD, RUNTIME, stampRuntime } = await import('../../js/objects.js');
      const echo = rt.getGlobal('testing.echo');
      const end = rt.exports.memory.buffer.byteLength;
      // kTVMFFIDLTensorPtr, made as the runtime's own (an unstamped one is refused)
      const bogus = (p) => stampRuntime({ [AS_POD]: () => [p, 7] }, rt[RUNTIME]);
      await assertThrows(() => echo(bogus(end - 8)), 'ValueError',
        new RegExp(`^DLTensor\\* 0x${(end - 8).toString(16)}: the DLTensor lies outside wasm memory$`));
      assertEqual(echo(bogus(0)), null, 'a NULL DLTensor* reads as null:');
      const t = rt.tensor(new Float32Array([1, 2]));
      assertEqual(Array.from(echo(t.asDLTensorPtr()).view()), [1, 2]);
      t.dispose();
    },

    async 'a DLTensor* view of GPU data reads asynchronously, started during the call'() {
      const g = await gpu(new Float32Array([5, 6]), [2]);
      let pending = null;
      const f = rt.toFFI((v) => {
        assertEqual([String(v.device), v.location], ['webgpu:0', 'webgpu']);
        pending = v.data();
        return null;
      });
      rt.getGlobal('testing.apply')(f, g.asDLTensorPtr());
      assertEqual(Array.from(await pending), [5, 6]);
      const sync = rt.toFFI((v) => v.toTypedArray());
      await assertThrows(() => rt.getGlobal('testing.apply')(sync, g.asDLTensorPtr()), 'RuntimeError',
        /the data lives on webgpu:0; reading it synchronously is not possible/);
      for (const x of [g, f, sync]) x.dispose();
    },

    async 'a GPU tensor refuses to travel by value; its CPU copy travels'() {
      const { encodeValue } = await import('../../js/index.js');
      const g = await rt.tensor(new Float32Array([1, 2])).toDevice('webgpu');
      await assertThrows(() => encodeValue([g]), 'TypeError',
        /^cannot clone `ffi\.Tensor` object contained in `Array`: its data lives on webgpu:0, in memory of this runtime instance/);
      const c = await g.toDevice('cpu');
      assertEqual(encodeValue(c)[2].shape.join(','), '2');
      g.dispose();
      c.dispose();
    },

    async 'out of memory is a MemoryError and leaves the runtime working'() {
      await assertThrows(() => rt.empty([3 << 28], 'float32'), 'MemoryError', /^Failed to allocate 3221225472 bytes$/);
      await assertThrows(() => rt.empty([1 << 30, 8], 'float32'), 'MemoryError', /^Failed to allocate \d+ bytes$/);
      const limit = rt.backends.get('webgpu').engine.info().limits.maxBufferSize;
      await assertThrows(() => rt.empty([limit + 4], 'uint8', 'webgpu'), 'MemoryError', /WebGPU out of memory: cannot allocate \d+ bytes, the device's maxBufferSize is \d+ bytes/);
      const t = rt.tensor(new Int32Array([1, 2]));
      assertEqual(Array.from(await (await t.toDevice('webgpu')).data()), [1, 2]);
    },

    async 'device loss: tensors on the lost device fail naming the cause; the backend comes back'() {
      const g = await gpu(new Float32Array([1, 2]));
      const engine = rt.backends.get('webgpu').engine;
      engine.dispose();
      await engine.sync().catch(() => {});
      await assertThrows(() => g.data(), 'RuntimeError', /the WebGPU device was lost \(reason "destroyed"/);
      await assertThrows(() => rt.getGlobal('webgpu.add')(g, g), 'RuntimeError', /device was lost \(reason "destroyed"/);
      assertEqual(rt.backends.list().find((b) => b.name === 'webgpu').status, 'lost');
      const again = await gpu(new Float32Array([5, 6]));
      assertEqual(Array.from(await rt.getGlobal('webgpu.add')(again, again).data()), [10, 12]);
      g.dispose();
    },
  };
}
