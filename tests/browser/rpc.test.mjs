// A Chromium page as a TVM RPC device: it joins a TVM-style proxy over
// WebSocket (the browser's own WebSocket) and serves its globals and its
// WebGPU memory (SwiftShader); our client reaches it through the proxy. As
// with TVM's proxy, the page comes from the proxy's own web server: one
// from another origin is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from './harness.mjs';
import { startProxy } from '../support/rpc_proxy.mjs';
import { connectRPC, RPCTensor } from '../../js/index.js';

let server;
let browser;
let proxy;
before(async () => {
  server = await startServer();
  browser = await launchChromium({ webgpu: true });
  proxy = await startProxy({ root: fileURLToPath(new URL('../../', import.meta.url)) });
});
after(async () => {
  await proxy?.close();
  await browser?.close();
  await server?.close();
});

test('a page joins the proxy and serves calls and WebGPU tensors to a client', async () => {
  const page = await browser.context.newPage();
  const logs = [];
  page.on('pageerror', (e) => logs.push(e.message));
  try {
    await page.goto(proxy.webUrl(`tests/browser/pages/rpc_device.html?proxy=${encodeURIComponent(proxy.wsUrl)}&key=tab`));
    await page.waitForFunction(() => window.__rpc?.ready || window.__rpc?.errors.length, null, { timeout: 120000 });
    assert.deepEqual(await page.evaluate(() => window.__rpc.errors), [], logs.join('\n'));
    for (let i = 0; i < 100 && !proxy.waiting().includes('tab'); i++) await new Promise((r) => setTimeout(r, 20));

    const s = await connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'tab', { timeout: 60000 });
    try {
      assert.equal(await s.call('page.describe', [7]), 'chromium:7');
      assert.equal(await s.lookupGlobal('testing.add_one'), null);
      assert.equal(await s.deviceExists('webgpu'), true);
      const a = await s.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3], device: 'webgpu' });
      const b = await s.tensor(new Float32Array([1, 0, 0, 1, 1, 1]), { shape: [3, 2], device: 'webgpu' });
      const y = await s.call('webgpu.matmul', [a, b]);
      assert.ok(y instanceof RPCTensor);
      assert.equal(String(y.device), 'webgpu:0');
      assert.deepEqual(await y.data(), new Float32Array([4, 5, 10, 11]));
      const big = new Float32Array(1 << 18).map((_, i) => i);
      const t = await s.tensor(big, { device: 'webgpu' });
      assert.deepEqual(await t.data(), big);
      const times = await s.timeEvaluator('webgpu.matmul', 'webgpu', { number: 2, repeat: 2 })(a, b);
      assert.equal(times.length, 2);
      for (const x of [a, b, y, t]) x.dispose();
    } finally {
      await s.close();
    }
    // after the session the tab registers again for the next client
    for (let i = 0; i < 100 && !proxy.waiting().includes('tab'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(proxy.waiting().includes('tab'));
    assert.equal(await page.evaluate(() => window.__rpc.device.sessions), 1);
    assert.deepEqual(await page.evaluate(() => window.__rpc.errors), []);
  } finally {
    await page.close();
  }
});

test('a page of another origin cannot join the proxy (as TVM\'s proxy refuses it)', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(server.url(`tests/browser/pages/rpc_device.html?proxy=${encodeURIComponent(proxy.wsUrl)}&key=elsewhere`));
    await page.waitForFunction(() => window.__rpc?.errors.length, null, { timeout: 120000 });
    const errors = await page.evaluate(() => window.__rpc.errors);
    assert.match(errors[0], /proxy: RPC: cannot open ws:\/\/127\.0\.0\.1:\d+\/ws/);
    assert.equal(proxy.waiting().includes('elsewhere'), false);
  } finally {
    await page.close();
  }
});
