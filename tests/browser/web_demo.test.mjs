// The browser demo (web/index.html: the classic-script bundle, a worker
// session and WebGPU) runs to the end in headless Chromium and shows what
// it promises.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchChromium({ webgpu: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('web/index.html runs to the end', async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url('web/index.html'));
  await page.waitForFunction(() => /^(done|failed)/m.test(document.getElementById('out').textContent),
    null, { timeout: 120000 });
  const text = await page.textContent('#out');
  await page.close();
  assert.deepEqual(errors, []);
  assert.doesNotMatch(text, /^failed/m, text);
  assert.match(text, /^testing\.add_one\(41\) = 42$/m);
  assert.match(text, /^testing\.apply\(\(a, b\) => a \* b, 6, 7\) = 42$/m);
  assert.match(text, /^caught ValueError \(instanceof webffi\.FFIError: true\): raised in C$/m);
  assert.match(text, /in testing_raise_error\nValueError: raised in C$/m);
  assert.match(text, /^webgpu\.matmul on webgpu:0: \[4,5,10,11\]$/m);
  assert.match(text, /^in a worker: testing\.add_one\(1\) = 2$/m);
  assert.match(text, /^from the worker: KeyError \(instanceof webffi\.KeyError: true\): raised in the worker$/m);
});
