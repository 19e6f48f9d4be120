// The core suite in real headless Chromium: from an ES module page, from the
// classic-script bundle, and inside module and classic Workers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { coreTests } from '../support/core_suite.mjs';

const CORE = Object.keys(coreTests({}, null)).length;

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

const run = (page) => runPage(browser.context, server.url(`tests/browser/pages/${page}`), { timeout: 120000 });

test('core suite passes in a module page', async () => {
  const result = await run('runtime_module.html');
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, CORE + 1);
});

test('core suite passes with the classic-script bundle', async () => {
  const result = await run('runtime_script.html');
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, CORE + 1);
});

test('core suite passes in a module Worker; the bundle loads in a classic Worker', async () => {
  const result = await run('runtime_worker.html');
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.module, CORE + 1);
  assert.equal(result.classic, 4);
});
