// runtime.loadModule through the JS API in real headless Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { moduleTests } from '../support/runtime_module_suite.mjs';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('runtime.loadModule suite passes in Chromium', async () => {
  const result = await runPage(browser.context, server.url('tests/browser/pages/runtime_modules.html'));
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, Object.keys(moduleTests).length);
});
