// The FinalizationRegistry backstop for remote handles: handles that are
// never disposed release their objects in the worker once they are garbage
// collected here, and the worker's live count returns to its baseline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { connectRuntime, RemoteTensor } from '../../js/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

test('collected remote handles release their objects in the worker', { timeout: 120000 }, async () => {
  const w = new Worker(new URL('../support/remote_worker.mjs', import.meta.url), { workerData: { role: 'server' } });
  const remote = await connectRuntime(w, { timeout: 60000 });
  try {
    const base = await remote.remoteCount();
    await (async () => {
      for (let i = 0; i < 20; i++) {
        const t = await remote.tensor(new Float32Array([i, i + 1])); // never disposed
        assert.ok(t instanceof RemoteTensor);
      }
      await remote.session.call('test.function');
    })();
    assert.equal(await remote.remoteCount(), base + 21);
    let live = base + 21;
    for (let i = 0; i < 100 && live !== base; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
      live = await remote.remoteCount();
    }
    assert.equal(live, base, 'every collected handle was released in the worker');
  } finally {
    remote.close();
    await w.terminate();
  }
});
