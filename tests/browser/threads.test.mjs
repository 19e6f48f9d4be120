// The threaded core (load({ threads })) in real headless Chromium. On a page
// served with Cross-Origin-Opener-Policy: same-origin and
// Cross-Origin-Embedder-Policy: require-corp: two threads, the parallel
// kernels (bit-identical sums, a task's error, a JS callback refused on a
// worker), long and UTF-8 strings through the shared memory (Chromium
// refuses TextDecoder and encodeInto on shared views), a trapping task,
// and the core, error, tensor (WebGPU included) and session suites on the
// threaded core, the session workers' runtimes threaded too (pools started
// inside module Workers). On a page without the headers: a
// RuntimeError naming them for threads: n, and the single-threaded core
// with one warning for threads: 'auto'.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { coreTests } from '../support/core_suite.mjs';
import { errorTests } from '../support/errors_suite.mjs';
import { tensorCases } from '../support/tensor_cases.mjs';
import { sessionTests } from '../support/session_suite.mjs';

const OWN = 7; // the page's own tests, before the suites
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

test('on a page without the headers: threads: 2 is a RuntimeError naming them, threads: \'auto\' one thread and one warning', async () => {
  const result = await runPage(browser.context, page(plain, 'threads_plain.html'), { timeout: 60000 });
  assert.deepEqual(result.failures, [], result.logs.join('\n'));
  assert.equal(result.passed, 4);
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
