// User C modules, linked in and loaded at run time, in real headless
// Chromium (the scenarios are shared with tests/node/modules.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { scenarios } from '../support/module_scenarios.mjs';

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

test('C module scenarios pass in Chromium', async () => {
  const result = await runPage(browser.context, server.url('tests/browser/pages/modules.html'));
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, Object.keys(scenarios).length);
});
