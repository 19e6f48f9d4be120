// The browser demo (web/index.html: the classic-script bundle, a C kernel
// loaded as a module, WebGPU and a worker session) runs to the end in
// headless Chromium, computes what it shows correctly, and stays readable
// at a phone's width. Screenshots go to build/test-output/web_demo/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from './harness.mjs';
import { buildKernels } from '../../web/build_kernels.mjs';

const outDir = fileURLToPath(new URL('../../build/test-output/web_demo/', import.meta.url));

let server;
let browser;
before(async () => {
  buildKernels();
  mkdirSync(outDir, { recursive: true });
  server = await startServer();
  browser = await launchChromium({ webgpu: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** Opens the demo at a width and waits until it has run to the end. */
async function openDemo(context, { width, query = '' }) {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 900 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
  });
  await page.goto(server.url(`web/index.html${query}`));
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
    for (const engine of ['js', 'c', 'webgpu', 'worker']) {
      assert.ok(last.outputs[engine], `no ${engine} result`);
      assert.equal(last.outputs[engine].length, 64 * 64);
      assert.ok(maxAbsDiff(last.outputs[engine], want) < 1e-3, `${engine} differs from the reference`);
    }
    // What the cards say: each engine ran and matched, with a time.
    for (const engine of ['c', 'webgpu', 'worker']) {
      assert.equal(await page.getAttribute(`#card-${engine}`, 'data-state'), 'ok');
      assert.match(await page.textContent(`#card-${engine} .check`), /^matches JS/);
      assert.match(await page.textContent(`#card-${engine} .time`), /^\d+(\.\d+)? ms$/);
    }
    assert.equal(await page.locator('#chart svg rect[data-engine]').count(), 4);
    assert.match(await page.textContent('#chip-webgpu .value'), /\S/);
    assert.notEqual(await page.getAttribute('#chip-webgpu', 'data-state'), 'off');

    // Interactive: another size, run from the page's own controls.
    await page.selectOption('#size', '128');
    await page.click('#run');
    await page.waitForFunction(() => window.webffiDemo.runs.length === 2 && !document.getElementById('run').disabled,
      null, { timeout: 120000 });
    const second = await page.evaluate(() => window.webffiDemo.runs[1]);
    assert.equal(second.n, 128);
    for (const engine of ['js', 'c', 'webgpu', 'worker']) assert.equal(second.results[engine].ok, true, engine);
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
