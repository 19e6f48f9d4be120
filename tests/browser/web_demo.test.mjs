// The browser demo (web/index.html: the classic-script bundle, a C kernel
// loaded as a module, the same C on all threads, WebGPU and a worker
// session) runs to the end in headless Chromium, computes what it shows
// correctly, and stays readable at a phone's width. It is served as
// scripts/serve.mjs serves it (cross-origin isolated: threads on) and by a
// plain static server (threads off, and the page says which headers are
// missing). Screenshots go to build/test-output/web_demo/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from './harness.mjs';
import { startDemoServer } from '../../scripts/serve.mjs';
import { buildKernels, buildThreadedKernels } from '../../web/build_kernels.mjs';

const outDir = fileURLToPath(new URL('../../build/test-output/web_demo/', import.meta.url));

let server; // the demo's own server: with the headers threads need
let plain; // a static server without them
let browser;
before(async () => {
  buildKernels();
  buildThreadedKernels();
  mkdirSync(outDir, { recursive: true });
  server = await startDemoServer({ port: 0 });
  plain = await startServer();
  browser = await launchChromium({ webgpu: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
  await plain?.close();
});

/** Opens the demo at a width and waits until it has run to the end. */
async function openDemo(context, { width, query = '', from = server }) {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 900 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
  });
  await page.goto(from.url(`web/index.html${query}`));
  await page.waitForFunction(() => /^(done|failed)$/.test(window.webffiDemo?.state), null, { timeout: 180000 });
  const state = await page.evaluate(() => ({ state: window.webffiDemo.state, failure: window.webffiDemo.failure }));
  assert.equal(state.state, 'done', state.failure);
  return { page, errors };
}

/** C = A B in float64, from the inputs the page used. */
function reference(a, b, n) {
  const c = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < n; p++) {
      const s = a[i * n + p];
      for (let j = 0; j < n; j++) c[i * n + j] += s * b[p * n + j];
    }
  }
  return c;
}

const maxAbsDiff = (x, y) => x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i])), 0);

/** Elements wider than the viewport, or whose content overflows them sideways. */
const overflowing = (page) => page.evaluate(() => {
  const vw = document.documentElement.clientWidth;
  const bad = [];
  if (document.documentElement.scrollWidth > vw) bad.push(`document: ${document.documentElement.scrollWidth} > ${vw}`);
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0) continue;
    const clipped = getComputedStyle(e).overflowX !== 'visible' && e.scrollWidth > e.clientWidth + 1;
    if (r.right > vw + 0.5 || clipped) bad.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className}: right ${r.right}, scrollWidth ${e.scrollWidth}`);
  }
  return bad;
});

/** Asserts the PNG is not one flat colour: enough distinct pixel values. */
async function assertNotBlank(page, png) {
  const distinct = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = new OffscreenCanvas(img.width, img.height);
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0);
    const data = g.getImageData(0, 0, img.width, img.height).data;
    const seen = new Set();
    for (let i = 0; i < data.length; i += 4 * 97) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return seen.size;
  }, png.toString('base64'));
  assert.ok(distinct > 20, `screenshot looks blank (${distinct} distinct colours)`);
}

test('the demo runs every engine, and their results agree with a JS reference', async () => {
  const { page, errors } = await openDemo(browser.context, { width: 1280, query: '?n=64' });
  try {
    const last = await page.evaluate(() => {
      const { n, a, b, outputs } = window.webffiDemo.last;
      const plain = (x) => (x ? Array.from(x) : null);
      return { n, a: plain(a), b: plain(b), outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, plain(v)])) };
    });
    assert.equal(last.n, 64);
    const want = reference(last.a, last.b, last.n);
    for (const engine of ['js', 'c', 'threads', 'webgpu', 'worker']) {
      assert.ok(last.outputs[engine], `no ${engine} result`);
      assert.equal(last.outputs[engine].length, 64 * 64);
      assert.ok(maxAbsDiff(last.outputs[engine], want) < 1e-3, `${engine} differs from the reference`);
    }
    // What the cards say: each engine ran and matched, with a time.
    for (const engine of ['c', 'threads', 'webgpu', 'worker']) {
      assert.equal(await page.getAttribute(`#card-${engine}`, 'data-state'), 'ok');
      assert.match(await page.textContent(`#card-${engine} .check`), /^matches JS/);
      assert.match(await page.textContent(`#card-${engine} .time`), /^\d+(\.\d+)? ms$/);
    }
    assert.equal(await page.locator('#chart svg rect[data-engine]').count(), 5);
    assert.match(await page.textContent('#chip-webgpu .value'), /\S/);
    assert.notEqual(await page.getAttribute('#chip-webgpu', 'data-state'), 'off');

    // Threads: the page is isolated, the kernel ran on every thread the
    // browser reports (at least 2) and gave the bits it gives on one.
    const threads = await page.evaluate(() => ({ isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency,
      demo: window.webffiDemo.threads, run: window.webffiDemo.runs[0].results.threads.threads }));
    assert.equal(threads.isolated, true);
    const count = Math.max(2, Math.min(16, threads.cores));
    assert.deepEqual(threads.demo, { available: true, threads: count, isolated: true });
    assert.equal(threads.run.threads, count);
    assert.equal(threads.run.sameBits, true);
    // (speedup: 1 thread's time over all threads', null when too fast to time)
    assert.ok(threads.run.oneMs >= 0 && (threads.run.speedup === null || threads.run.speedup > 0), JSON.stringify(threads.run));
    assert.equal(await page.getAttribute('#chip-threads', 'data-state'), 'ok');
    assert.equal(await page.textContent('#chip-threads .value'), `${count} threads`);
    assert.match(await page.textContent('#card-threads .detail'),
      new RegExp(`· ${count} threads · 1 thread [\\d.]+ ms · (speedup [\\d.]+× · )?the same bits as on 1 thread ·`));
    assert.match(await page.textContent('#chart svg'), new RegExp(`C on ${count} threads`));
    assert.equal(await page.locator('#threads-missing').count(), 0);

    // Interactive: another size, run from the page's own controls.
    await page.selectOption('#size', '128');
    await page.click('#run');
    await page.waitForFunction(() => window.webffiDemo.runs.length === 2 && !document.getElementById('run').disabled,
      null, { timeout: 120000 });
    const second = await page.evaluate(() => window.webffiDemo.runs[1]);
    assert.equal(second.n, 128);
    for (const engine of ['js', 'c', 'threads', 'webgpu', 'worker']) assert.equal(second.results[engine].ok, true, engine);
    assert.equal(second.results.threads.threads.sameBits, true);
    assert.equal(await page.locator('#history tbody tr').count(), 2);
  } finally {
    await page.close();
  }
  assert.deepEqual(errors, []);
});

test('the error panel shows errors from C with their C and JS frames', async () => {
  const { page, errors } = await openDemo(browser.context, { width: 1280, query: '?n=64' });
  try {
    const c = page.locator('#error-c');
    assert.match(await c.locator('.err-head').textContent(), /^ValueError: matmul: a is 3x4 and b is 5x2/);
    const cFrames = await c.locator('.frame.c .fn').allTextContents();
    // (the kernel is built with -gline-tables-only: file and line in each C frame)
    assert.ok(cFrames.includes('matmul_check_shapes'), cFrames.join(', '));
    assert.ok(cFrames.includes('__tvm_ffi_matmul'), cFrames.join(', '));
    const where = await c.locator('.frame.c .where').allTextContents();
    assert.ok(where.length >= 2 && where.every((w) => /matmul\.c:\d+$/.test(w)), where.join(', '));
    const jsFrames = await c.locator('.frame.js .fn').allTextContents();
    assert.ok(jsFrames.includes('multiplyMismatched'), jsFrames.join(', '));
    assert.match(await c.textContent(), /instanceof webffi\.ValueError: true/);

    // A JS error thrown through C: both kinds of frame in one backtrace.
    const js = page.locator('#error-js');
    assert.match(await js.locator('.err-head').textContent(), /^RangeError: row 3 has a NaN$/);
    assert.match(await js.textContent(), /the very same object came back: true/);
    assert.ok((await js.locator('.frame.c .fn').allTextContents()).includes('webffi_testing.testing_apply'));
    assert.ok((await js.locator('.frame.js .fn').allTextContents()).includes('checkRow'));

    // From the worker: the same class, with the worker's C frame.
    const w = page.locator('#error-worker');
    assert.match(await w.locator('.err-head').textContent(), /^ValueError: matmul: a is 2x3 and b is 2x3/);
    assert.match(await w.textContent(), /instanceof webffi\.ValueError: true/);
    assert.ok((await w.locator('.frame.c .fn').allTextContents()).includes('__tvm_ffi_matmul'));
  } finally {
    await page.close();
  }
  assert.deepEqual(errors, []);
});

for (const width of [1280, 400]) {
  test(`at ${width} px nothing is clipped sideways; screenshot saved`, async () => {
    const { page, errors } = await openDemo(browser.context, { width, query: '?n=64' });
    try {
      assert.deepEqual(await overflowing(page), []);
      await page.locator('#error-c details').evaluate((d) => { d.open = true; });
      assert.deepEqual(await overflowing(page), []);
      const png = await page.screenshot({ path: `${outDir}demo-${width}.png`, fullPage: true });
      await assertNotBlank(page, png);
    } finally {
      await page.close();
    }
    assert.deepEqual(errors, []);
  });
}

test('without WebGPU the page says why, wrapped on a phone, and runs the rest', async () => {
  const plain = await launchChromium({ webgpu: false });
  try {
    const { page, errors } = await openDemo(plain.context, { width: 400, query: '?n=64' });
    try {
      const box = page.locator('#webgpu-missing');
      assert.ok(await box.isVisible());
      assert.match(await box.textContent(), /No WebGPU in this browser.*The runtime said: .*WebGPU/s);
      assert.equal(await page.getAttribute('#card-webgpu', 'data-state'), 'skipped');
      for (const engine of ['c', 'worker']) assert.equal(await page.getAttribute(`#card-${engine}`, 'data-state'), 'ok');
      assert.deepEqual(await overflowing(page), []);
      await page.screenshot({ path: `${outDir}demo-400-no-webgpu.png`, fullPage: true });
    } finally {
      await page.close();
    }
    assert.deepEqual(errors, []);
  } finally {
    await plain.close();
  }
});

test('served without the two headers, the threads card says which are missing and how to serve them; the rest runs', async () => {
  const { page, errors } = await openDemo(browser.context, { width: 400, query: '?n=64', from: plain });
  try {
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    const box = page.locator('#threads-missing');
    assert.ok(await box.isVisible());
    const text = await box.textContent();
    assert.match(text, /^Threads are off: this page is not cross-origin isolated/);
    assert.match(text, /Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/s);
    assert.match(text, /node scripts\/serve\.mjs/);
    // the runtime's own words: load({ threads }) rejected naming both headers
    assert.match(text, /The runtime said: webffi: load\(\{ threads: \d+ \}\) cannot start threads: .*Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp/s);
    assert.equal(await page.getAttribute('#chip-threads', 'data-state'), 'off');
    assert.equal(await page.getAttribute('#card-threads', 'data-state'), 'skipped');
    assert.match(await page.textContent('#card-threads .detail'), /Threads are off on this page/);
    for (const engine of ['c', 'webgpu', 'worker']) assert.equal(await page.getAttribute(`#card-${engine}`, 'data-state'), 'ok', engine);
    assert.equal(await page.locator('#chart svg rect[data-engine]').count(), 4);
    assert.equal(await page.evaluate(() => window.webffiDemo.threads.available), false);
    // the page's own text says how to serve it
    assert.match(await page.textContent('#threads-how'), /node scripts\/serve\.mjs.*Cross-Origin-Opener-Policy: same-origin\s+Cross-Origin-Embedder-Policy: require-corp|Cross-Origin-Opener-Policy: same-origin\s+Cross-Origin-Embedder-Policy: require-corp.*node scripts\/serve\.mjs/s);
    assert.deepEqual(await overflowing(page), []);
    await page.screenshot({ path: `${outDir}demo-400-not-isolated.png`, fullPage: true });
  } finally {
    await page.close();
  }
  assert.deepEqual(errors, []);
});

test('the demo server sends both headers with every file, and /web redirects to /web/', async () => {
  for (const path of ['web/', 'web/index.html', 'web/demo.js', 'web/threads.mjs', 'web/worker.js', 'web/dist/matmul_mt.wasm',
    'js/threads/worker.js', 'dist/webffi.iife.js']) {
    const response = await fetch(server.url(path));
    assert.equal(response.status, 200, path);
    assert.equal(response.headers.get('cross-origin-opener-policy'), 'same-origin', path);
    assert.equal(response.headers.get('cross-origin-embedder-policy'), 'require-corp', path);
  }
  assert.equal((await fetch(server.url('web/'))).headers.get('content-type'), 'text/html; charset=utf-8');
  const moved = await fetch(server.url('web'), { redirect: 'manual' });
  assert.equal(moved.status, 301);
  assert.equal(moved.headers.get('location'), '/web/');
  assert.equal((await fetch(server.url('../../etc/passwd'))).status, 404);
  assert.equal((await fetch(server.url('no/such/file.js'))).status, 404);
  const unisolated = await startDemoServer({ port: 0, isolated: false });
  try {
    const response = await fetch(unisolated.url('web/'));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cross-origin-opener-policy'), null);
    assert.equal(response.headers.get('cross-origin-embedder-policy'), null);
  } finally {
    await unisolated.close();
  }
});
