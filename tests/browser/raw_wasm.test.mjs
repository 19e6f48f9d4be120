// The runtime wasm loads and reports C backtraces in real headless Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';

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

test('raw wasm page passes in Chromium', async () => {
  const result = await runPage(browser.context, server.url('tests/browser/pages/raw_wasm.html'));
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, 2);
});
