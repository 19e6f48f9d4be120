// The FinalizationRegistry backstop: a wrapper that is never disposed gives
// its reference back once it is garbage collected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { load } from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

test('a collected wrapper releases its reference', async () => {
  const rt = await loadTesting(await load());
  const useCount = rt.getGlobal('testing.object_use_count');
  const f = rt.toFFI((x) => x);
  (() => {
    const second = rt.getGlobal('testing.echo')(f); // a second wrapper, never disposed
    assert.equal(useCount(second), 2);
  })();
  for (let i = 0; i < 50 && useCount(f) !== 1; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(useCount(f), 1);
  const before = rt.liveJSValues;
  (() => rt.toFFI(() => 0))(); // a JS callback held only by an undisposed handle
  assert.equal(rt.liveJSValues, before + 1);
  for (let i = 0; i < 50 && rt.liveJSValues !== before; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(rt.liveJSValues, before, 'the JS function was released with its handle');
});

// Registration waits for the end of the job that made a handle (or for 256
// waiting): each way a handle can reach the collector is still released.
test('handles dropped before their registration, past the pending list, or escaping a scope are released when collected', async () => {
  const rt = await loadTesting(await load({ autoloadBackends: false }));
  const useCount = rt.getGlobal('testing.object_use_count');
  const echo = rt.getGlobal('testing.echo');
  const root = rt.toFFI([1, 2]);
  const settled = async (want) => {
    for (let i = 0; i < 50 && useCount(root) !== want; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return useCount(root);
  };
  (() => {
    echo(root); // dropped in the job that made it: registered at the job's end
    for (let i = 0; i < 700; i++) echo(root); // past the pending list: registered in batches
  })();
  assert.equal(useCount(root), 702, 'nothing released while the job runs');
  assert.equal(await settled(1), 1);
  let kept = rt.scope(() => rt.scope(() => echo(root))); // escapes two scopes
  const inScope = [];
  rt.scope(() => inScope.push(echo(root), echo(root)));
  assert.ok(inScope.every((h) => h.disposed), 'the scope disposed what it made');
  assert.equal(useCount(root), 2);
  await settled(1);
  assert.equal(useCount(root), 2, 'the escaped result is held');
  assert.equal(kept.length, 2);
  kept = null;
  assert.equal(await settled(1), 1, 'the escaped result, dropped, was released');
  // a tensor viewed in a scope: the scope disposes it, the view keeps its memory until collected
  let view = rt.scope(() => {
    const t = rt.empty([4], 'float32');
    t.set(new Float32Array([5, 6, 7, 8]));
    return t.view();
  });
  rt.empty([4], 'float32').set(new Float32Array(4).fill(-1)); // reuse would land here
  assert.deepEqual(Array.from(view), [5, 6, 7, 8]);
  view = null;
  gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
  root.dispose();
});
