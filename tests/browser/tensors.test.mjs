// Tensors on real WebGPU in headless Chromium (SwiftShader), through load():
// the cases shared with Node (tests/support/tensor_cases.mjs) and backends
// registered from navigator.gpu and the global queue.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { tensorCases } from '../support/tensor_cases.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.close());

test('tensor cases and backend registration pass in Chromium (SwiftShader)', async () => {
  const browser = await launchChromium({ webgpu: true });
  try {
    const result = await runPage(browser.context, server.url('tests/browser/pages/tensors.html'), { timeout: 240000 });
    assert.deepEqual(result.failures, [], result.logs.join('\n'));
    assert.equal(result.passed, Object.keys(tensorCases(null, {})).length + 1);
  } finally {
    await browser.close();
  }
});
