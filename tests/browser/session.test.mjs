// Values and errors by value, and worker sessions, in real headless Chromium
// with module Workers (the cases in tests/support/session_suite.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { sessionTests } from '../support/session_suite.mjs';

const CASES = Object.keys(sessionTests({}, {})).length;

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

test('session suite passes in Chromium with module Workers', async () => {
  const result = await runPage(browser.context, server.url('tests/browser/pages/session.html'), { timeout: 120000 });
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, CASES);
});
