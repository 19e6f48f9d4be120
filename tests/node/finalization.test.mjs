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
