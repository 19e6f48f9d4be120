// WebGPU backend tests shared by Node (Dawn on llvmpipe) and headless
// Chromium (SwiftShader): webgpuCases(gpu) returns { name: async fn }.
// Every kernel is checked against a CPU reference on real WebGPU.
import { createWebGPUBackend, KERNELS } from '../../js/backends/webgpu/index.js';
import { assert, assertEqual, assertThrows } from '../browser/harness_page.mjs';
import { assertClose, broadcastRef, randomFloats } from './numeric.mjs';

export { assertThrows };




const numel = (shape) => shape.reduce((x, y) => x * y, 1);

export function webgpuCases(gpu) {
  const be = createWebGPUBackend({ gpu, logger: { warn() {} } });
  const handles = [];

  /** Uploads data as a float32 tensor of the given shape. */
  function tensor(shape, data = randomFloats(numel(shape), handles.length + 1)) {
    const h = be.allocate(data.byteLength);
    handles.push(h);
    be.upload(h, 0, data);
    return { data: h, shape, dtype: 'float32', host: data };
  }
  function empty(shape) {
    const h = be.allocate(numel(shape) * 4);
    handles.push(h);
    return { data: h, shape, dtype: 'float32' };
  }
  async function read(t) {
    const bytes = await be.download(t.data, t.byteOffset ?? 0, numel(t.shape) * 4);
    return new Float32Array(bytes.buffer, 0, numel(t.shape));
  }
  /** Runs kernel `method` through the KERNELS table (as the runtime will) and reads the result. */
  async function run(method, ...args) {
    const spec = KERNELS.find((k) => k.method === method).output(...args);
    const out = empty(spec.shape);
    be[method](...args, out);
    return { out: await read(out), shape: spec.shape };
  }
  function freeAll() {
    for (const h of handles.splice(0)) if (!h.freed) be.free(h);
  }

  const binaryRef = { add: (x, y) => x + y, sub: (x, y) => x - y, mul: (x, y) => x * y, div: (x, y) => x / y };
  const shapes = [[0], [1], [7], [64], [65], [3, 5, 7], [1000]];

  function matmulRef(a, b, M, K, N) {
    const out = new Float64Array(M * N);
    for (let i = 0; i < M; i++) {
      for (let k = 0; k < K; k++) {
        const x = a[i * K + k];
        for (let j = 0; j < N; j++) out[i * N + j] += x * b[k * N + j];
      }
    }
    return out;
  }

  function reduceRef(kind, data, shape, axis) {
    const ax = axis === null ? null : (axis + shape.length) % shape.length;
    const outer = ax === null ? 1 : numel(shape.slice(0, ax));
    const r = ax === null ? numel(shape) : shape[ax];
    const inner = ax === null ? 1 : numel(shape.slice(ax + 1));
    const out = new Float64Array(outer * inner).fill(kind === 'sum' ? 0 : -Infinity);
    for (let o = 0; o < outer; o++) {
      for (let k = 0; k < r; k++) {
        for (let i = 0; i < inner; i++) {
          const v = data[(o * r + k) * inner + i];
          const j = o * inner + i;
          out[j] = kind === 'sum' ? out[j] + v : Math.max(out[j], v);
        }
      }
    }
    return out;
  }

  function softmaxRef(data, shape) {
    const cols = shape[shape.length - 1];
    const out = new Float64Array(data.length);
    for (let r = 0; r < data.length / cols; r++) {
      const row = data.subarray(r * cols, (r + 1) * cols);
      const m = Math.max(...row);
      let s = 0;
      for (const v of row) s += Math.exp(v - m);
      for (let c = 0; c < cols; c++) out[r * cols + c] = Math.exp(row[c] - m) / s;
    }
    return out;
  }

  const cases = {
    async 'init acquires an adapter and device once and describes them'() {
      const first = be.init();
      assert(first === be.init(), 'concurrent init() calls share one attempt');
      const info = await first;
      assertEqual(info.deviceType, 15);
      assertEqual(be.deviceType, 15);
      assertEqual(be.name, 'webgpu');
      assert(info.limits.maxBufferSize >= 256 * 1024 * 1024, `maxBufferSize ${info.limits.maxBufferSize}`);
      assert(info.dtypes.includes('float32'), 'float32 is supported');
      assertEqual(info.dtypes.includes('float16'), info.features.includes('shader-f16'), 'float16 follows shader-f16:');
      assert(typeof info.adapter.description === 'string', 'adapter description');
    },

    async 'upload and download round-trip bytes at any offset'() {
      const bytes = new Uint8Array(1030).map((_, i) => (i * 7 + 3) & 255);
      const h = be.allocate(bytes.length);
      handles.push(h);
      be.upload(h, 0, bytes);
      assertEqual([...(await be.download(h, 0, bytes.length))], [...bytes], 'whole');
      assertEqual([...(await be.download(h, 5, 11))], [...bytes.subarray(5, 16)], 'unaligned slice');
      const out = new Uint8Array(3);
      assert((await be.download(h, 1029, 1, out)) === out, 'download fills the given array');
      assertEqual(out[0], bytes[1029]);
      be.upload(h, 8, new Uint8Array([1, 2, 3, 4]));
      assertEqual([...(await be.download(h, 6, 8))], [bytes[6], bytes[7], 1, 2, 3, 4, bytes[12], bytes[13]], 'patch');
      assertEqual((await be.download(h, 0, 0)).length, 0, 'empty read');
    },

    async 'a write whose size is not a multiple of 4 may end the allocation'() {
      const h = be.allocate(6);
      handles.push(h);
      be.upload(h, 0, new Uint8Array([9, 8, 7, 6, 5, 4]));
      be.upload(h, 4, new Uint16Array([0x0201]));
      assertEqual([...(await be.download(h, 0, 6))], [9, 8, 7, 6, 1, 2]);
    },

    async 'copy moves bytes between allocations on the device'() {
      const src = tensor([300]);
      const dst = empty([300]);
      be.copy(src.data, 0, dst.data, 0, 1200);
      be.copy(src.data, 400, dst.data, 0, 8);
      const got = await read(dst);
      assertEqual([...got.subarray(0, 2)], [...src.host.subarray(100, 102)], 'second copy lands after the first');
      assertEqual([...got.subarray(2)], [...src.host.subarray(2)]);
    },

    async 'recorded kernels see the data as it was when they were called'() {
      const a = tensor([3], new Float32Array([1, 2, 3]));
      const b = tensor([3], new Float32Array([10, 20, 30]));
      const out = empty([3]);
      be.add(a, b, out);
      be.upload(a.data, 0, new Float32Array([100, 200, 300])); // after the add, before its submit
      const later = empty([3]);
      be.add(a, b, later);
      assertEqual([...(await read(out))], [11, 22, 33], 'first add');
      assertEqual([...(await read(later))], [110, 220, 330], 'second add');
      freeAll();
    },

    async 'concurrent reads each get their own bytes'() {
      const t = tensor([4096]);
      const parts = await Promise.all([0, 1, 2, 3].map((i) => be.download(t.data, i * 4096, 4096)));
      parts.forEach((bytes, i) => assertEqual([...new Float32Array(bytes.buffer)], [...t.host.subarray(i * 1024, (i + 1) * 1024)], `part ${i}`));
      freeAll();
    },

    async 'out-of-range and misaligned transfers are ValueErrors and change nothing'() {
      const h = be.allocate(16);
      handles.push(h);
      be.upload(h, 0, new Uint32Array([1, 2, 3, 4]));
      await assertThrows(() => be.upload(h, 8, new Uint8Array(12)), 'ValueError', /range \[8, 20\) is outside the allocation of 16 bytes/);
      await assertThrows(() => be.upload(h, 2, new Uint8Array(4)), 'ValueError', /offset 2 is not a multiple of 4/);
      await assertThrows(() => be.upload(h, 0, new Uint8Array(3)), 'ValueError', /must end at the end of the allocation/);
      await assertThrows(() => be.upload(h, 0, [1, 2]), 'TypeError', /ArrayBuffer or a typed array/);
      await assertThrows(() => be.download(h, 12, 8), 'ValueError', /outside the allocation/);
      await assertThrows(() => be.copy(h, 0, h, 4, 16), 'ValueError', /outside the allocation/);
      await assertThrows(() => be.download({}, 0, 4), 'TypeError', /expected a WebGPU allocation handle, got Object/);
      await assertThrows(() => be.allocate(-1), 'ValueError', /non-negative integer/);
      assertEqual([...new Uint32Array((await be.download(h, 0, 16)).buffer)], [1, 2, 3, 4]);
    },

    async 'freed allocations refuse further use'() {
      const h = be.allocate(8);
      be.free(h);
      await assertThrows(() => be.upload(h, 0, new Uint8Array(8)), 'ValueError', /already freed/);
      await assertThrows(() => be.free(h), 'ValueError', /already freed/);
    },

    async 'a buffer larger than maxBufferSize is a MemoryError and the backend keeps working'() {
      const max = be.info().limits.maxBufferSize;
      await assertThrows(() => be.allocate(max + 4), 'MemoryError', new RegExp(`cannot allocate ${max + 4} bytes.*maxBufferSize is ${max}`));
      await be.sync();
      const t = tensor([4], new Float32Array([1, 2, 3, 4]));
      assertEqual([...(await read(t))], [1, 2, 3, 4]);
    },

    async 'GPU validation errors surface as ValueErrors from sync() and the backend keeps working'() {
      const device = be.device;
      const bad = device.createBuffer({ size: 16, usage: 0x80 | 0x1 }); // STORAGE | MAP_READ is invalid
      await assertThrows(() => be.sync(), 'ValueError', /WebGPU validation error: .*usage/i);
      bad.destroy();
      await be.sync();
      const t = tensor([2], new Float32Array([5, 6]));
      assertEqual([...(await read(t))], [5, 6]);
    },

    async 'elementwise add, sub, mul and div match the CPU'() {
      for (const op of Object.keys(binaryRef)) {
        for (const shape of shapes) {
          const a = tensor(shape);
          const b = tensor(shape, randomFloats(numel(shape), 99).map((v) => (op === 'div' ? v + 3 : v)));
          const { out, shape: s } = await run(op, a, b);
          assertEqual(s, shape, `${op} shape`);
          assertClose(out, a.host.map((x, i) => binaryRef[op](x, b.host[i])), `${op} ${JSON.stringify(shape)}`);
        }
        freeAll();
      }
    },

    async 'add, sub, mul and div broadcast shapes as NumPy does'() {
      const pairs = [
        [[4, 5], [5]], [[5], [4, 5]], [[4, 1], [1, 6]], [[1], [7]], [[7], [1]], [[], [7]], [[3, 2], []], [[1], [1, 1]],
        [[2, 3, 4], [3, 1]], [[2, 1, 4], [1, 3, 1]], [[65, 3], [65, 1]], [[130, 1], [1, 70]],
        [[2, 3, 4, 5, 6], [5, 6]], // 5-D, two dimensions once merged
        [[2, 1, 1, 3, 4], [1, 5, 6, 3, 4]], // three once merged
        [[2, 1, 3, 1], [1, 4, 1, 5]], // four: which input repeats alternates every dimension
        [[0, 3], [3]], [[2, 0], [1]],
      ];
      for (const op of Object.keys(binaryRef)) {
        for (const [sa, sb] of pairs) {
          const a = tensor(sa);
          const b = tensor(sb, randomFloats(numel(sb), 7).map((v) => (op === 'div' ? v + 3 : v)));
          const ref = broadcastRef(binaryRef[op], a.host, sa, b.host, sb);
          const { out, shape } = await run(op, a, b);
          assertEqual(shape, ref.shape, `${op} ${JSON.stringify(sa)} ${JSON.stringify(sb)} shape`);
          assertClose(out, ref.data, `${op} ${JSON.stringify(sa)} ${JSON.stringify(sb)}`);
        }
        freeAll();
      }
    },

    async 'a broadcast may write over an input of the output shape'() {
      const x = new Float32Array([1, 2, 3, 4, 5, 6]);
      const bias = new Float32Array([10, 20, 30]);
      const a = tensor([2, 3], x);
      be.add(a, tensor([3], bias), a);
      assertEqual([...(await read(a))], [11, 22, 33, 14, 25, 36], 'out is a');
      const b = tensor([2, 3], x);
      be.sub(tensor([2, 1], new Float32Array([100, 200])), b, b);
      assertEqual([...(await read(b))], [99, 98, 97, 196, 195, 194], 'out is b');
      freeAll();
    },

    async 'float16 broadcasts where the adapter has shader-f16'() {
      // Small integers and halves are exact in float16: 1.5 = 0x3e00, -2 = 0xc000, 4 = 0x4400, 0.5 = 0x3800.
      const half = (bits, shape) => {
        const h = be.allocate(Math.ceil(bits.length * 2 / 4) * 4);
        handles.push(h);
        be.upload(h, 0, new Uint16Array([...bits, ...(bits.length % 2 ? [0] : [])]));
        return { data: h, shape, dtype: 'float16' };
      };
      const a = half([0x3e00, 0xc000], [2, 1]);
      const b = half([0x4400, 0x3800, 0xc000], [1, 3]);
      const out = { data: be.allocate(12), shape: [2, 3], dtype: 'float16' };
      handles.push(out.data);
      if (be.info().dtypes.includes('float16')) {
        be.mul(a, b, out);
        // [1.5, -2] x [4, 0.5, -2] = [6, 0.75, -3, -8, -1, 4]
        const bits = new Uint16Array((await be.download(out.data, 0, 12)).buffer, 0, 6);
        assertEqual([...bits], [0x4600, 0x3a00, 0xc200, 0xc800, 0xbc00, 0x4400]);
      } else {
        await assertThrows(() => be.mul(a, b, out), 'TypeError', /^webgpu\.mul: float16 needs the shader-f16 feature, which this WebGPU adapter lacks$/);
      }
      freeAll();
    },

    async 'shapes that do not broadcast are ValueErrors naming both shapes and the dimension'() {
      const cases = [
        ['add', [2, 3], [4], /^webgpu\.add: shapes \[2, 3\] and \[4\] cannot be broadcast \(dimension -1: 3 vs 4\)$/],
        ['sub', [5, 3], [4, 3], /^webgpu\.sub: shapes \[5, 3\] and \[4, 3\] cannot be broadcast \(dimension -2: 5 vs 4\)$/],
        ['mul', [2, 3, 4], [2, 1], /^webgpu\.mul: shapes \[2, 3, 4\] and \[2, 1\] cannot be broadcast \(dimension -2: 3 vs 2\)$/],
        ['div', [0], [2], /^webgpu\.div: shapes \[0\] and \[2\] cannot be broadcast \(dimension -1: 0 vs 2\)$/],
        ['add', [2, 1, 3, 1, 4], [1, 5, 1, 6, 4],
          /^webgpu\.add: broadcasting \[2, 1, 3, 1, 4\] with \[1, 5, 1, 6, 4\] needs 5 dimensions after merging neighbours that broadcast alike; the kernel supports 4$/],
      ];
      for (const [op, sa, sb, message] of cases) {
        const a = tensor(sa);
        const b = tensor(sb);
        const k = KERNELS.find((e) => e.method === op);
        await assertThrows(() => k.output(a, b), 'ValueError', message); // before the runtime allocates
        await assertThrows(() => be[op](a, b, empty([1])), 'ValueError', message);
      }
      const a = tensor([4, 1]);
      const b = tensor([1, 6]);
      await assertThrows(() => be.add(a, b, empty([4, 1])), 'ValueError', /^webgpu\.add: out has shape \[4, 1\], expected \[4, 6\]$/);
      const out = empty([4, 6]);
      be.add(a, b, out); // the backend keeps working
      assertClose(await read(out), broadcastRef(binaryRef.add, a.host, [4, 1], b.host, [1, 6]).data, 'add after errors');
      freeAll();
    },

    async 'scalar forms match the CPU'() {
      for (const op of Object.keys(binaryRef)) {
        for (const shape of [[0], [1], [65], [4, 33]]) {
          const a = tensor(shape);
          const { out } = await run(`${op}Scalar`, a, 1.5);
          assertClose(out, a.host.map((x) => binaryRef[op](x, 1.5)), `${op}Scalar ${JSON.stringify(shape)}`);
        }
      }
      freeAll();
    },

    async 'elementwise work beyond 65535 workgroups spreads over a 2-D grid'() {
      const n = 65535 * 64 + 5;
      const a = tensor([n]);
      const b = tensor([n], new Float32Array(n).fill(1));
      const { out } = await run('add', a, b);
      for (const i of [0, 1, 65535 * 64 - 1, 65535 * 64, n - 1]) assertEqual(out[i], Math.fround(a.host[i] + 1), `element ${i}`);
      freeAll();
    },

    async 'kernels write in place when out is an input'() {
      const a = tensor([5], new Float32Array([1, 2, 3, 4, 5]));
      be.mulScalar(a, 2, a);
      be.add(a, a, a);
      assertEqual([...(await read(a))], [4, 8, 12, 16, 20]);
      freeAll();
    },

    async 'tensors at a byte offset inside a larger allocation'() {
      const h = be.allocate(4096);
      handles.push(h);
      const host = randomFloats(1024, 5);
      be.upload(h, 0, host);
      const a = { data: h, shape: [3, 4], dtype: 'float32', byteOffset: 300 * 4 };
      const b = { data: h, shape: [4, 2], dtype: 'float32', byteOffset: 4 };
      const out = { data: h, shape: [3, 2], dtype: 'float32', byteOffset: 900 * 4 };
      be.matmul(a, b, out);
      const ref = matmulRef(host.subarray(300, 312), host.subarray(1, 9), 3, 4, 2);
      assertClose(await read(out), ref, 'matmul at offsets', { rtol: 1e-5, atol: 1e-5 });
      freeAll();
    },

    async 'matmul matches the CPU for shapes on and off the 32x32 tile'() {
      for (const [M, K, N] of [[1, 1, 1], [5, 7, 3], [32, 32, 32], [33, 31, 65], [64, 100, 17], [0, 3, 2], [2, 0, 3], [1, 300, 1]]) {
        const a = tensor([M, K]);
        const b = tensor([K, N]);
        const { out, shape } = await run('matmul', a, b);
        assertEqual(shape, [M, N]);
        assertClose(out, matmulRef(a.host, b.host, M, K, N), `matmul ${M}x${K}x${N}`, { rtol: 1e-4, atol: 1e-4 * Math.max(K, 1) });
        freeAll();
      }
    },

    async 'sum and max match the CPU over every axis and over all elements'() {
      for (const kind of ['sum', 'max']) {
        for (const [shape, axes] of [[[1], [null, 0]], [[3, 5, 7], [null, 0, 1, 2, -1]], [[2, 9000], [null, 1, 0]], [[20001], [null]], [[130, 3], [0, 1]]]) {
          const a = tensor(shape);
          for (const axis of axes) {
            const { out, shape: s } = await run(kind, a, axis);
            const ref = reduceRef(kind, a.host, shape, axis);
            assertEqual(numel(s), ref.length, `${kind} output size`);
            const r = axis === null ? numel(shape) : shape[(axis + shape.length) % shape.length];
            assertClose(out, ref, `${kind} ${JSON.stringify(shape)} axis ${axis}`, { rtol: 1e-5, atol: 1e-6 * r });
          }
        }
        freeAll();
      }
    },

    async 'sum of an empty axis is zero; max of one is a ValueError'() {
      const a = empty([3, 0]);
      const { out } = await run('sum', a, 1);
      assertEqual([...out], [0, 0, 0]);
      const { out: whole } = await run('sum', empty([0]), null);
      assertEqual([...whole], [0]);
      await assertThrows(() => be.max(a, 1, empty([3])), 'ValueError', /cannot reduce an empty axis 1 \(shape \[3, 0\]\); max has no identity/);
      freeAll();
    },

    async 'softmax over the last axis matches the CPU'() {
      for (const shape of [[1], [1, 1], [4, 7], [3, 130], [2, 3, 65], [0, 5]]) {
        const a = tensor(shape, randomFloats(numel(shape), 3).map((v) => v * 10));
        const { out } = await run('softmax', a);
        assertClose(out, softmaxRef(a.host, shape), `softmax ${JSON.stringify(shape)}`, { rtol: 1e-4, atol: 1e-6 });
      }
      freeAll();
    },

    async 'shape and dtype errors name the kernel and the problem'() {
      const a = tensor([2, 3]);
      const b = tensor([3, 2]);
      await assertThrows(() => be.add(a, b, empty([2, 3])), 'ValueError', /^webgpu\.add: shapes \[2, 3\] and \[3, 2\] cannot be broadcast \(dimension -1: 3 vs 2\)$/);
      await assertThrows(() => be.matmul(a, a, empty([2, 3])), 'ValueError', /webgpu\.matmul: inner dimensions differ: a is \[2, 3\], b is \[2, 3\] \(3 != 2\)/);
      await assertThrows(() => be.matmul(tensor([2, 3, 1]), b, empty([2, 2])), 'ValueError', /expects 2-D tensors/);
      await assertThrows(() => be.matmul(a, b, empty([3, 3])), 'ValueError', /out has shape \[3, 3\], expected \[2, 2\]/);
      await assertThrows(() => be.sub({ ...a, dtype: 'int32' }, a, empty([2, 3])), 'TypeError', /unsupported dtype int32/);
      await assertThrows(() => be.mul(a, { ...a, dtype: { code: 2, bits: 64, lanes: 1 } }, empty([2, 3])), 'TypeError', /unsupported dtype float64/);
      await assertThrows(() => be.divScalar(a, '2', empty([2, 3])), 'TypeError', /scalar must be a number/);
      await assertThrows(() => be.sum(a, 2, empty([2])), 'ValueError', /axis 2 is out of range for a 2-D tensor/);
      await assertThrows(() => be.softmax({ ...a, shape: [] }, empty([])), 'ValueError', /needs at least one dimension/);
      await assertThrows(() => be.add({ ...a, shape: [2, 4] }, { ...a, shape: [2, 4] }, empty([2, 4])), 'ValueError', /needs bytes \[0, 32\) but its allocation has 24/);
      await assertThrows(() => be.add(a, { ...a, strides: [1, 2] }, empty([2, 3])), 'ValueError', /not contiguous/);
      if (!be.info().dtypes.includes('float16')) {
        await assertThrows(() => be.add({ ...a, dtype: 'float16' }, { ...a, dtype: 'float16' }, { ...empty([2, 3]), dtype: 'float16' }),
          'TypeError', /float16 needs the shader-f16 feature/);
      }
      freeAll();
    },

    async 'the kernel table describes every kernel method'() {
      const names = KERNELS.map((k) => k.name);
      for (const n of ['webgpu.add', 'webgpu.sub', 'webgpu.mul', 'webgpu.div', 'webgpu.add_scalar', 'webgpu.matmul', 'webgpu.sum', 'webgpu.max', 'webgpu.softmax']) {
        assert(names.includes(n), `${n} is in KERNELS`);
      }
      for (const k of KERNELS) assertEqual(typeof be[k.method], 'function', `${k.name} -> backend.${k.method}`);
      assertEqual(KERNELS.find((k) => k.name === 'webgpu.sum').output({ shape: [2, 3, 4], dtype: 'float32' }, -2), { shape: [2, 4], dtype: 'float32' });
    },

    async 'a chain longer than one submit, mixing kernels, matches the CPU'() {
      // 600 dependent kernels in one task: the batch is submitted in pieces
      // and each kernel reads the result of the one before.
      const rows = 4;
      const cols = 64;
      const n = rows * cols;
      const b = tensor([rows, cols]);
      const perm = new Float32Array(cols * cols); // a permutation: matmul by it is exact
      for (let i = 0; i < cols; i++) perm[i * cols + ((i * 5 + 3) % cols)] = 1;
      const p = tensor([cols, cols], perm);
      const ping = [empty([rows, cols]), empty([rows, cols])];
      let x = tensor([rows, cols]);
      const ref = Float32Array.from(x.host);
      const tmp = new Float32Array(n);
      for (let i = 0; i < 600; i++) {
        const out = ping[i & 1];
        if (i % 3 === 0) {
          be.add(x, b, out);
          for (let j = 0; j < n; j++) ref[j] = Math.fround(ref[j] + b.host[j]);
        } else if (i % 3 === 1) {
          be.mulScalar(x, 0.5, out);
          for (let j = 0; j < n; j++) ref[j] = Math.fround(ref[j] * 0.5);
        } else {
          be.matmul(x, p, out);
          for (let r = 0; r < rows; r++) {
            for (let c = 0; c < cols; c++) tmp[r * cols + ((c * 5 + 3) % cols)] = ref[r * cols + c];
          }
          ref.set(tmp);
        }
        x = out;
      }
      const last = ping[0] === x ? ping[1] : ping[0];
      be.softmax(x, last);
      assertClose(await read(x), ref, 'after 600 kernels', { rtol: 0, atol: 0 });
      assertClose(await read(last), softmaxRef(ref, [rows, cols]), 'softmax at the end', { rtol: 1e-4, atol: 1e-6 });
      freeAll();
    },

    async 'a read submits the kernels before it; kernels after it batch on and see its data'() {
      const a = tensor([1000]);
      const b = tensor([1000]);
      const first = empty([1000]);
      const second = empty([1000]);
      be.add(a, b, first);
      const reading = read(first); // submits the add, leaves the read pending
      be.mul(first, b, second); // recorded after the read started
      const f = await reading;
      const s = await read(second);
      for (let i = 0; i < 1000; i++) {
        assertEqual(f[i], Math.fround(a.host[i] + b.host[i]), `first[${i}]`);
        assertEqual(s[i], Math.fround(f[i] * b.host[i]), `second[${i}]`);
      }
      freeAll();
    },

    async 'a bad call inside a batch throws on that call; the kernels around it still run'() {
      const a = tensor([8]);
      const b = tensor([8]);
      const sum = empty([8]);
      const prod = empty([8]);
      be.add(a, b, sum);
      await assertThrows(() => be.add(a, tensor([3]), empty([8])), 'ValueError', /webgpu\.add: shapes \[8\] and \[3\] cannot be broadcast/);
      await assertThrows(() => be.matmul(a, b, empty([8])), 'ValueError', /webgpu\.matmul: expects 2-D tensors/);
      be.mul(sum, b, prod);
      const got = await read(prod);
      for (let i = 0; i < 8; i++) assertEqual(got[i], Math.fround(Math.fround(a.host[i] + b.host[i]) * b.host[i]), `prod[${i}]`);
      freeAll();
    },

    async 'freeing inputs while their kernel is pending leaves its result intact'() {
      const a = tensor([4096]);
      const b = tensor([4096]);
      const out = empty([4096]);
      be.add(a, b, out);
      be.free(a.data);
      be.free(b.data);
      const got = await read(out);
      for (let i = 0; i < 4096; i++) assertEqual(got[i], Math.fround(a.host[i] + b.host[i]), `out[${i}]`);
      await assertThrows(() => be.add(a, out, empty([4096])), 'ValueError', /webgpu\.add: the WebGPU allocation was already freed/);
      freeAll();
    },

    async 'a GPU error raised while kernels are pending is reported by the read that submits them, or the sync() after'() {
      const a = tensor([16]);
      const out = empty([16]);
      be.addScalar(a, 1, out);
      const bad = be.device.createBuffer({ size: 16, usage: 0x80 | 0x1 }); // invalid: STORAGE | MAP_READ
      // Dawn in Node has the error by the time the read's map settles;
      // Chromium's GPU process may send it after the map, for the next sync().
      await assertThrows(async () => {
        await read(out);
        await be.sync();
      }, 'ValueError', /WebGPU validation error: .*usage/i);
      bad.destroy();
      const got = await read(out); // the kernel ran; only the error was reported
      for (let i = 0; i < 16; i++) assertEqual(got[i], Math.fround(a.host[i] + 1), `out[${i}]`);
      freeAll();
    },

    async 'a device lost with kernels pending fails the read naming the loss'() {
      const a = tensor([64]);
      const out = empty([64]);
      for (let i = 0; i < 10; i++) be.addScalar(a, i, out);
      be.device.destroy();
      await assertThrows(() => read(out), 'RuntimeError', /the WebGPU device was lost \(reason "destroyed"/);
      await be.init();
      handles.length = 0;
    },

    async 'a read in flight when the device is lost fails naming the loss'() {
      const t = tensor([256]);
      const pending = be.download(t.data, 0, 1024);
      be.dispose();
      await assertThrows(() => pending, 'RuntimeError', /download: the WebGPU device was lost \(reason "destroyed"/);
      await be.init();
      handles.length = 0;
    },

    async 'device loss invalidates allocations with the cause, and init() acquires a new device'() {
      const t = tensor([2], new Float32Array([1, 2]));
      const generation = t.data.generation;
      const device = be.device;
      device.destroy();
      const info = await device.lost;
      assertEqual(info.reason, 'destroyed');
      assertEqual(be.ready, false, 'ready after loss');
      await assertThrows(() => be.download(t.data, 0, 8), 'RuntimeError', /WebGPU device was lost \(reason "destroyed".*call init\(\)/);
      await assertThrows(() => be.add(t, t, t), 'RuntimeError', /device was lost/);
      await assertThrows(() => be.allocate(4), 'RuntimeError', /allocate: the WebGPU device was lost \(reason "destroyed"/);
      await assertThrows(() => be.sync(), 'RuntimeError', /sync: the WebGPU device was lost/);
      be.free(t.data); // freeing a lost allocation is allowed
      const again = await be.init();
      assertEqual(again.generation, generation + 1, 'new generation');
      const u = tensor([2], new Float32Array([3, 4]));
      be.addScalar(u, 1, u);
      assertEqual([...(await read(u))], [4, 5]);
      handles.length = 0;
    },
  };
  return { cases, backend: be };
}
