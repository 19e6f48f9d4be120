// The threaded core (load({ threads })) in real headless Chromium.
//
// On a page served with Cross-Origin-Opener-Policy: same-origin and
// Cross-Origin-Embedder-Policy: require-corp: two threads, or every core
// for 'auto'; the parallel kernels (bit-identical sums, a task's error, a JS
// callback refused on a worker, a trapping task); long and UTF-8 strings
// through the shared memory (Chromium refuses TextDecoder and encodeInto
// on shared views); the core, error, tensor (WebGPU included) and session
// suites on the threaded core, the session workers' runtimes threaded too
// (pools started inside module Workers); a tab on the threaded core serving
// TVM RPC through a proxy; the classic-script bundle, which cannot start
// the pool; a worker script served without the headers.
//
// On a page without the headers: threads: n is a RuntimeError naming them,
// threads: 'auto' the single-threaded core with one warning.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { startProxy } from '../support/rpc_proxy.mjs';
import { connectRPC, RPCTensor } from '../../js/index.js';
import { coreTests } from '../support/core_suite.mjs';
import { errorTests } from '../support/errors_suite.mjs';
import { tensorCases } from '../support/tensor_cases.mjs';
import { sessionTests } from '../support/session_suite.mjs';

const OWN = 8; // the page's own tests, before the suites
const SUITES = Object.keys(coreTests({}, null)).length + Object.keys(errorTests({})).length;
const MORE_SUITES = Object.keys(tensorCases(null, {})).length + Object.keys(sessionTests({}, {})).length;

let isolated;
let plain;
let browser;
before(async () => {
  isolated = await startServer({ isolated: true });
  plain = await startServer();
  browser = await launchChromium({ webgpu: true });
});
after(async () => {
  await browser?.close();
  await isolated?.close();
  await plain?.close();
});

const page = (server, name) => server.url(`tests/browser/pages/${name}`);

test('on an isolated page: two threads, the parallel kernels, strings, the core and error suites', async () => {
  const result = await runPage(browser.context, page(isolated, 'threads.html'), { timeout: 300000 });
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, OWN + SUITES);
}, { timeout: 360000 });

test('on an isolated page: the tensor cases (WebGPU included) and worker sessions, with threads in the workers too', async () => {
  const result = await runPage(browser.context, page(isolated, 'threads_suites.html'), { timeout: 300000 });
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, 1 + MORE_SUITES);
}, { timeout: 360000 });

test('on an isolated page, the classic-script bundle: threads: 2 says to import webffi as an ES module, \'auto\' falls back with a warning', async () => {
  const result = await runPage(browser.context, page(isolated, 'threads_bundle.html'), { timeout: 60000 });
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, 3);
});

test('an isolated tab on the threaded core serves TVM RPC through a proxy: calls, CPU and WebGPU tensors', async () => {
  const proxy = await startProxy({ root: fileURLToPath(new URL('../../', import.meta.url)), isolated: true });
  const tab = await browser.context.newPage();
  const logs = [];
  tab.on('pageerror', (e) => logs.push(e.message));
  try {
    await tab.goto(proxy.webUrl(`tests/browser/pages/rpc_device.html?proxy=${encodeURIComponent(proxy.wsUrl)}&key=mt&threads=2`));
    await tab.waitForFunction(() => window.__rpc?.ready || window.__rpc?.errors.length, null, { timeout: 120000 });
    assert.deepEqual(await tab.evaluate(() => window.__rpc.errors), [], logs.join('\n'));
    for (let i = 0; i < 100 && !proxy.waiting().includes('mt'); i++) await new Promise((r) => setTimeout(r, 20));
    const s = await connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'mt', { timeout: 60000 });
    try {
      assert.equal(await s.call('page.threads', []), 2);
      assert.equal(await s.call('page.describe', ['ü'.repeat(40)]), `chromium:${'ü'.repeat(40)}`);
      const big = new Float32Array(1 << 20).map((_, i) => Math.sin(i));
      const onCpu = await s.tensor(big);
      assert.deepEqual(await onCpu.data(), big);
      const a = await s.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3], device: 'webgpu' });
      const b = await s.tensor(new Float32Array([1, 0, 0, 1, 1, 1]), { shape: [3, 2], device: 'webgpu' });
      const y = await s.call('webgpu.matmul', [a, b]);
      assert.ok(y instanceof RPCTensor);
      assert.deepEqual(await y.data(), new Float32Array([4, 5, 10, 11]));
      for (const x of [onCpu, a, b, y]) x.dispose();
    } finally {
      await s.close();
    }
    assert.deepEqual(await tab.evaluate(() => window.__rpc.errors), []);
  } finally {
    await tab.close();
    await proxy.close();
  }
});

test('on a page without the headers: threads: 2 is a RuntimeError naming them, threads: \'auto\' one thread and one warning', async () => {
  const result = await runPage(browser.context, page(plain, 'threads_plain.html'), { timeout: 60000 });
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, 4);
});

test('an isolated page whose worker script comes without the headers: load({ threads: 2 }) rejects at once saying what to check', async () => {
  const partial = await startServer({ isolated: (path) => !path.endsWith('/js/threads/worker.js') });
  const tab = await browser.context.newPage();
  try {
    await tab.goto(partial.url('tests/browser/pages/blank.html'));
    const outcome = await tab.evaluate(async () => {
      const webffi = await import('/js/index.js');
      const t0 = performance.now();
      try {
        await webffi.load({ threads: 2, logger: { log() {}, warn() {} } });
        return { loaded: true };
      } catch (e) {
        return { name: e.constructor.name, message: e.message, ms: performance.now() - t0, isolated: crossOriginIsolated };
      }
    });
    assert.equal(outcome.isolated, true);
    assert.equal(outcome.name, 'RuntimeError', JSON.stringify(outcome));
    assert.match(outcome.message, /^webffi: a worker of the thread pool failed: the worker script http:\/\/127\.0\.0\.1:\d+\/js\/threads\/worker\.js failed to load \(is it there, and served with the same Cross-Origin-Embedder-Policy header as the page\?\)$/);
    assert.ok(outcome.ms < 20000, `took ${outcome.ms} ms`);
  } finally {
    await tab.close();
    await partial.close();
  }
});

test('the isolated server sends both headers on every file; the plain one neither', async () => {
  for (const path of ['tests/browser/pages/threads.html', 'js/threads/worker.js', 'dist/webffi-mt.wasm']) {
    const headers = (await fetch(isolated.url(path))).headers;
    assert.equal(headers.get('cross-origin-opener-policy'), 'same-origin', path);
    assert.equal(headers.get('cross-origin-embedder-policy'), 'require-corp', path);
    const none = (await fetch(plain.url(path))).headers;
    assert.equal(none.get('cross-origin-opener-policy'), null, path);
    assert.equal(none.get('cross-origin-embedder-policy'), null, path);
  }
});
