// The WebGPU backend on real WebGPU in headless Chromium (SwiftShader): the
// cases shared with Node (tests/support/webgpu_cases.mjs), and the error a
// page gets when the browser offers no WebGPU adapter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { webgpuCases } from '../support/webgpu_cases.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.close());

async function runIn(webgpu, page) {
  const browser = await launchChromium({ webgpu });
  try {
    return await runPage(browser.context, server.url(`tests/browser/pages/${page}`), { timeout: 240000 });
  } finally {
    await browser.close();
  }
}

test('WebGPU backend cases pass in Chromium (SwiftShader)', async () => {
  const result = await runIn(true, 'webgpu_backend.html');
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, Object.keys(webgpuCases(null).cases).length);
});

test('without WebGPU (no adapter, or no navigator.gpu) the errors and the warning give browser advice', async () => {
  const result = await runIn(false, 'webgpu_unavailable.html');
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, 3);
});
