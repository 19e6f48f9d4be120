// WebGPU tensors of a remote device reached through a worker (this thread
// -> worker_threads Worker serving its TVM RPC session -> a device with
// WebGPU on Dawn): made there, a kernel run there, copied back here.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { load, listenRPC, connectRuntime, RemoteTensor } from '../../js/index.js';

process.env.EGL_PLATFORM ??= 'surfaceless';
const rt = await load({ logger: { log() {}, warn() {} } });
await rt.backends.ensure('webgpu');
after(() => rt.backends.get('webgpu')?.engine?.dispose());
const device = await listenRPC(rt, { port: 0, key: 'gpu', expose: ['webgpu.*'] });
after(() => device.close());

test('a WebGPU tensor on the device, through a worker: a kernel there, the data copied back', async () => {
  const worker = new Worker(new URL('../support/rpc_worker_hop.mjs', import.meta.url), {
    workerData: { target: `127.0.0.1:${device.port}`, key: 'gpu' },
  });
  try {
    const remote = await connectRuntime(worker, { timeout: 60000 });
    const a = await remote.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3], device: 'webgpu' });
    const b = await remote.tensor(new Float32Array([1, 0, 0, 1, 1, 1]), { shape: [3, 2], device: 'webgpu' });
    assert.equal(a.device, 'webgpu:0');
    const y = await remote.getGlobal('webgpu.matmul')(a, b);
    assert.ok(y instanceof RemoteTensor);
    assert.deepEqual([y.device, y.shape, y.dtype], ['webgpu:0', [2, 2], 'float32']);
    assert.deepEqual(await y.data(), new Float32Array([4, 5, 10, 11]));
    // by value: downloaded from the GPU on the device, sent through the worker
    const v = await remote.session.call('webgpu.matmul', [a, b], { result: 'value' });
    assert.deepEqual([v.shape, v.dtype, v.data], [[2, 2], 'float32', new Float32Array([4, 5, 10, 11])]);
    const big = new Float32Array(1 << 18).map((_, i) => i % 1013);
    const g = await remote.tensor(big, { device: 'webgpu' });
    assert.deepEqual(await g.data(), big);
    for (const t of [a, b, y, g]) t.dispose();
    assert.equal(await remote.remoteCount(), 0);
    remote.close();
  } finally {
    await worker.terminate();
  }
});
