// WebGPU tensors on a served device, in Node (Dawn from npm `webgpu` on Mesa
// llvmpipe): remote allocation on device type 15, copies in and out (the
// download is asynchronous: the reply is deferred until it lands), a WebGPU
// kernel called remotely, stream sync waiting for the GPU, device attributes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { load, connectRPC, listenRPC, RPCTensor } from '../../js/index.js';

process.env.EGL_PLATFORM ??= 'surfaceless';
const rt = await load({ logger: { log() {}, warn() {} } });
await rt.backends.ensure('webgpu');
after(() => rt.backends.get('webgpu')?.engine?.dispose());
const server = await listenRPC(rt, { port: 0, expose: ['webgpu.*'] });
after(() => server.close());

test('a remote WebGPU tensor: allocate, copy in, run a kernel, copy out', async () => {
  const s = await connectRPC(`127.0.0.1:${server.port}`, 'webffi');
  try {
    assert.equal(await s.deviceExists('webgpu'), true);
    const a = await s.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3], device: 'webgpu' });
    const b = await s.tensor(new Float32Array([1, 0, 0, 1, 1, 1]), { shape: [3, 2], device: 'webgpu' });
    assert.equal(String(a.device), 'webgpu:0');
    assert.deepEqual(await a.data(), new Float32Array([1, 2, 3, 4, 5, 6]));
    const y = await s.call('webgpu.matmul', [a, b]);
    assert.ok(y instanceof RPCTensor);
    assert.equal(y.device.deviceType, 15);
    assert.deepEqual(y.shape, [2, 2]);
    await s.sync('webgpu');
    assert.deepEqual(await y.data(), new Float32Array([4, 5, 10, 11]));
    // a bigger tensor, read back in one deferred copy
    const big = new Float32Array(1 << 18).map((_, i) => i % 1000);
    const t = await s.tensor(big, { device: 'webgpu' });
    assert.deepEqual(await t.data(), big);
    // attributes TVM asks a WebGPU device for
    const threads = await s.deviceAttr('webgpu', 1);
    assert.ok(Number.isInteger(threads) && threads >= 64, String(threads));
    assert.equal(await s.deviceAttr('webgpu', 2), 1);
    assert.equal(typeof (await s.deviceAttr('webgpu', 5)), 'string');
    assert.deepEqual(JSON.parse(await s.deviceAttr('webgpu', 8)).length, 3);
    // a timer on the GPU waits for the device after each run (the reply is deferred meanwhile)
    const timer = s.timeEvaluator('webgpu.matmul', 'webgpu', { number: 3, repeat: 2 });
    const times = await timer(a, b);
    assert.equal(times.length, 2);
    assert.ok(times.every((x) => x > 0 && x < 5), String(times));
    timer.dispose();
    for (const x of [a, b, y, t]) x.dispose();
    // the session goes on after the deferred replies
    assert.equal(await s.deviceExists('cpu'), true);
  } finally {
    await s.close();
  }
});
