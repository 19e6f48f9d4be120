// The WebGPU backend on real WebGPU in Node: Dawn (npm `webgpu`) on its
// OpenGL ES backend over Mesa llvmpipe. The shared cases run in Chromium too
// (tests/browser/webgpu_backend.test.mjs).
import { test, after } from 'node:test';
import { nodeGPU } from '../support/webgpu_node.mjs';
import { webgpuCases, assertThrows } from '../support/webgpu_cases.mjs';
import { createWebGPUBackend } from '../../js/backends/webgpu/index.js';
import assert from 'node:assert/strict';

const { cases, backend } = webgpuCases(nodeGPU());
after(() => backend.dispose());
for (const [name, fn] of Object.entries(cases)) test(name, fn);

test('no adapter: init() rejects with a helpful RuntimeError, and remembers it', async () => {
  // Dawn's Vulkan backend finds no Vulkan driver here, so requestAdapter() is null.
  const be = createWebGPUBackend({ gpu: nodeGPU('vulkan'), logger: { warn() {} } });
  const first = await assertThrows(() => be.init(), 'RuntimeError', /No WebGPU adapter found: requestAdapter\(\) returned null at feature level core and compatibility\..*backend=opengles/);
  const second = await assertThrows(() => be.init(), 'RuntimeError', /No WebGPU adapter found/);
  assert.equal(second, first, 'the same error object is reported again');
  assert.equal(be.info(), null);
});

test('before init(), device operations say to await init()', async () => {
  const be = createWebGPUBackend({ gpu: nodeGPU() });
  assert.equal(be.info(), null);
  await assertThrows(() => be.allocate(4), 'RuntimeError', /^allocate: the WebGPU backend is not initialised; await init\(\) first$/);
  await be.sync(); // nothing to wait for
});

test('no GPU object: init() explains how to get WebGPU', async () => {
  const be = createWebGPUBackend({ gpu: undefined });
  await assertThrows(() => be.init(), 'RuntimeError', /WebGPU is not available: no GPU object \(navigator\.gpu is undefined\)/);
});

test('makeError builds the runtime error values', async () => {
  class RuntimeErr extends Error {}
  const be = createWebGPUBackend({ gpu: null, makeError: (kind, message) => Object.assign(new RuntimeErr(message), { kind }) });
  await assert.rejects(() => be.init(), (e) => e instanceof RuntimeErr && e.kind === 'RuntimeError');
});

test('float16 kernels pass WebGPU validation on an adapter with shader-f16 (Dawn null backend)', async () => {
  // llvmpipe and SwiftShader lack shader-f16; Dawn's null backend has it but
  // computes nothing, so this checks the f16 WGSL and dispatch, not the values.
  const be = createWebGPUBackend({ gpu: nodeGPU('null') });
  const info = await be.init();
  assert.ok(info.dtypes.includes('float16'), JSON.stringify(info.features));
  const t = (shape) => ({ data: be.allocate(2 * shape.reduce((x, y) => x * y, 1)), shape, dtype: 'float16' });
  const a = t([40, 70]);
  const b = t([70, 33]);
  be.add(a, a, t([40, 70]));
  be.add(a, t([70]), t([40, 70])); // broadcasting
  be.div(t([40, 1]), t([1, 70]), t([40, 70]));
  be.mulScalar(a, 0.5, t([40, 70]));
  be.matmul(a, b, t([40, 33]));
  be.sum(a, 1, t([40]));
  be.max(t([2, 9000]), null, t([]));
  be.softmax(a, t([40, 70]));
  await be.sync();
  be.dispose();
});
