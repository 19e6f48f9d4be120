// Docs are code, in the browser: every block of README.md and docs/*.md
// marked `browser` runs in headless Chromium (html as a page, js as a module
// script), and an `output` block after it must be exactly what it logged
// (console.log, one line each). The package's CDN URLs are served from this
// repository, and jsdelivr URLs of other packages (onnxruntime-web,
// TensorFlow.js, transformers.js) from node_modules when the version in the
// URL is the one installed. tests/node/docs.test.mjs runs all the other blocks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { launchChromium } from './harness.mjs';
import { blocksOf, documents, repoRoot, roleOf, where } from '../support/doc_blocks.mjs';

// The CDNs the docs name, as they serve the npm package.
const CDN = [/^https:\/\/cdn\.jsdelivr\.net\/npm\/webffi(?:@[^/]+)?\//, /^https:\/\/unpkg\.com\/webffi(?:@[^/]+)?\//];
// localhost: a secure context (WebGPU needs one); nothing listens there, every request is routed below.
const ORIGIN = 'http://localhost:8787/';
// https://cdn.jsdelivr.net/npm/NAME@VERSION/PATH, NAME possibly scoped.
const NPM_CDN = /^https:\/\/cdn\.jsdelivr\.net\/npm\/((?:@[^/@]+\/)?[^/@]+)@([^/]+)\/(.*)$/;

/** node_modules/NAME/PATH when VERSION is the installed version of NAME, else null. */
async function installedFile(url) {
  const m = NPM_CDN.exec(url);
  if (!m) return null;
  const [, name, version, path] = m;
  try {
    const pkg = JSON.parse(await readFile(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8'));
    return pkg.version === version ? join(repoRoot, 'node_modules', name, new URL(path, 'x:/').pathname) : null;
  } catch {
    return null;
  }
}
const MIME = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

let browser;
before(async () => {
  browser = await launchChromium({ webgpu: true });
  await browser.context.route('**/*', async (route) => {
    const url = route.request().url();
    const cdn = CDN.find((re) => re.test(url));
    const path = cdn ? url.replace(cdn, '') : url.startsWith(ORIGIN) ? url.slice(ORIGIN.length) : null;
    if (path === null) {
      const file = await installedFile(url.split(/[?#]/)[0]);
      if (file === null) return route.abort();
      try {
        return route.fulfill({ contentType: MIME[extname(file)] ?? 'application/octet-stream', body: await readFile(file) });
      } catch {
        return route.fulfill({ status: 404, body: 'not found' });
      }
    }
    const page = pages.get(path);
    if (page !== undefined) return route.fulfill({ contentType: MIME[extname(path)] ?? 'text/html', body: page });
    try {
      const body = await readFile(join(repoRoot, new URL(path, 'x:/').pathname));
      return route.fulfill({ contentType: MIME[extname(path)] ?? 'application/octet-stream', body });
    } catch {
      return route.fulfill({ status: 404, body: 'not found' });
    }
  });
});
after(async () => {
  await browser?.close();
});

const pages = new Map(); // path -> html (or a `file=` block: a worker script), served at ORIGIN
/** Where a document's pages and files are served: a page's `./NAME` is the document's file block NAME. */
const folderOf = (doc) => `docs/${doc.replace(/[/.]/g, '_')}`;

/** Opens the block as a page; resolves with its console.log lines once `lines` arrived (or after quiet). */
async function runInPage(block, lines) {
  const path = `${folderOf(block.doc)}/block-${block.line}.html`;
  pages.set(path, block.lang === 'html' ? block.code : `<!doctype html><script type="module">\n${block.code}</script>`);
  const page = await browser.context.newPage();
  const logs = [];
  const errors = [];
  page.on('console', (m) => (m.type() === 'error' ? errors : logs).push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(ORIGIN + path);
    const deadline = Date.now() + 60000;
    while (logs.length < lines && errors.length === 0 && Date.now() < deadline) await page.waitForTimeout(50);
    if (lines === 0) await page.waitForTimeout(1000);
    return { logs, errors };
  } finally {
    await page.close();
  }
}

for (const doc of documents()) {
  const blocks = blocksOf(doc);
  const runnable = blocks.filter((b) => roleOf(b) === 'browser');
  if (runnable.length === 0) continue;
  test(`${doc}: the browser blocks run in Chromium`, async () => {
    for (const b of blocks) if (roleOf(b) === 'file') pages.set(`${folderOf(doc)}/${b.directives.file}`, b.code);
    for (const block of runnable) {
      const next = blocks[blocks.indexOf(block) + 1];
      const expected = next && roleOf(next) === 'output' ? next.code : null;
      const lines = expected === null ? 0 : expected.split('\n').length - 1;
      const { logs, errors } = await runInPage(block, lines);
      assert.deepEqual(errors, [], `${where(block)}: errors in the page`);
      if (expected !== null) assert.equal(logs.map((l) => `${l}\n`).join(''), expected, `${where(block)}: what it logged`);
    }
  });
}
