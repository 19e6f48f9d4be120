// GPUBuffers that lie, handed to rt.tensorFromGPUBuffer (docs/security.md,
// "GPU buffers from other libraries"), generated: a real buffer whose own
// size, usage or mapState properties say something else (fixed or changing
// at each read), a Proxy of one, an object made from one
// (Object.create(buffer)), a plain copy of its fields. Each import is either
// a tensor that lies inside the buffer as the engine has it (and works) or
// webffi's TypeError/ValueError, never the engine's plain Error; on webffi's
// core and on a model library's alike.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fc from 'fast-check';
import { load, FFIError } from '../../js/index.js';
import { webgpuRuntimeBackend } from '../../js/backends/webgpu_runtime.js';
import { nodeGPU } from '../support/webgpu_node.mjs';
import { modelPath, ARCTIC_S } from '../support/model_fixture.mjs';
import { check } from '../support/seeded.mjs';

const gpu = nodeGPU();
const quiet = { log() {}, warn() {} };
const runtimes = {
  webffi: await load({ logger: quiet }),
  library: await load({ wasm: fs.readFileSync(modelPath(ARCTIC_S)), autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet }),
};
for (const rt of Object.values(runtimes)) await rt.backends.ensure('webgpu');
after(() => { for (const rt of Object.values(runtimes)) rt.dispose(); });

const STORAGE = 0x80;
const COPY = 0x4 | 0x8;
const REAL = 64;

const disguiseArb = fc.oneof(
  fc.constant({ kind: 'real' }),
  fc.record({ kind: fc.constant('own'), field: fc.constantFrom('size', 'usage', 'mapState'), value: fc.constantFrom(1 << 20, 4096, 256, 0, 3, 0xffff, 'unmapped', 'mapped', -1) }),
  fc.record({ kind: fc.constant('changing'), field: fc.constantFrom('size', 'usage'), after: fc.nat(2), value: fc.constantFrom(1 << 20, 4096, 0x80 | COPY) }),
  fc.constant({ kind: 'proxy' }),
  fc.constant({ kind: 'proxy-lying' }),
  fc.constant({ kind: 'create' }),
  fc.constant({ kind: 'copy' }),
);

/** The object handed over for `buffer`, disguised as told. */
function disguise(buffer, d) {
  switch (d.kind) {
    case 'real': return buffer;
    case 'own': return Object.defineProperty(buffer, d.field, { value: d.value, configurable: true });
    case 'changing': {
      let reads = 0;
      const proto = Object.getPrototypeOf(buffer);
      const truth = Object.getOwnPropertyDescriptor(proto, d.field).get;
      return Object.defineProperty(buffer, d.field, { get() { return reads++ < d.after ? truth.call(buffer) : d.value; }, configurable: true });
    }
    case 'proxy': return new Proxy(buffer, {});
    case 'proxy-lying': return new Proxy(buffer, { get: (t, k) => (k === 'size' ? 1 << 20 : Reflect.get(t, k, t)) });
    case 'create': return Object.create(buffer);
    default: {
      const copy = { size: buffer.size, usage: buffer.usage, mapState: buffer.mapState };
      for (const k of ['mapAsync', 'destroy', 'getMappedRange', 'unmap']) copy[k] = buffer[k].bind(buffer);
      return copy;
    }
  }
}

test('property: a GPUBuffer that lies about itself is refused with webffi\'s error or imported as the engine has it', { timeout: 120000 }, async (t) => {
  const seen = { imported: 0, refused: 0 };
  await check(t, import.meta.url, fc.asyncProperty(
    fc.constantFrom('webffi', 'library'), disguiseArb, fc.integer({ min: 1, max: 20 }), fc.constantFrom(0, 16, 48),
    async (which, d, count, byteOffset) => {
      const rt = runtimes[which];
      const device = rt.gpuDevice;
      const buffer = device.createBuffer({ size: REAL, usage: STORAGE | COPY });
      const given = disguise(buffer, d);
      let tensor;
      try {
        tensor = await rt.tensorFromGPUBuffer(given, { shape: [count], dtype: 'float32', byteOffset });
      } catch (e) {
        assert.ok(e instanceof FFIError && (e.kind === 'TypeError' || e.kind === 'ValueError'), `${JSON.stringify(d)}: ${e?.constructor?.name}: ${e?.message}`);
        if (['proxy', 'proxy-lying', 'create', 'copy'].includes(d.kind)) assert.match(e.message, /expected a GPUBuffer/);
        seen.refused++;
        return;
      } finally {
        if (!tensor) buffer.destroy();
      }
      try {
        assert.ok(!['proxy', 'proxy-lying', 'create', 'copy'].includes(d.kind), `${d.kind} was imported`);
        assert.ok(byteOffset + 4 * count <= REAL, `a tensor of bytes [${byteOffset}, ${byteOffset + 4 * count}) over a ${REAL}-byte buffer`);
        // It works: written and read back through the GPU.
        const bytes = Float32Array.from({ length: count }, (_, i) => i * 7 + 1);
        tensor.set(bytes);
        assert.deepEqual(await tensor.data(), bytes);
        seen.imported++;
      } finally {
        tensor.dispose();
        buffer.destroy();
      }
    }), 60);
  t.diagnostic(`${seen.imported} imported and used, ${seen.refused} refused`);
  assert.ok(seen.imported > 0 && seen.refused > 0, JSON.stringify(seen));
  for (const rt of Object.values(runtimes)) {
    const x = rt.tensor(new Float32Array([1, 2, 3, 4]));
    const g = await x.toDevice('webgpu');
    assert.deepEqual([...(await g.data())], [1, 2, 3, 4], 'the device still works');
    x.dispose();
    g.dispose();
  }
});
