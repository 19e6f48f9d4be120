// The core suite in real headless Chromium: from an ES module page, from the
// classic-script bundle, and inside module and classic Workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useChromium } from './harness.mjs';
import { coreTests } from '../support/core_suite.mjs';

const CORE = Object.keys(coreTests({}, null)).length;
const chromium = useChromium();
const slow = { timeout: 120000 };

test('core suite passes in a module page', () =>
  chromium.expectPass('runtime_module.html', CORE + 1, slow));

test('core suite passes with the classic-script bundle', () =>
  chromium.expectPass('runtime_script.html', CORE + 1, slow));

test('core suite passes in a module Worker; the bundle loads in a classic Worker', async () => {
  const result = await chromium.run('runtime_worker.html', slow);
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.module, CORE + 1);
  assert.equal(result.classic, 4);
});
