// Shared browser-test support: a static server for the repository and real
// headless Chromium (Debian's) driven by playwright-core. Pages report back
// by setting `window.__webffiResult` to { passed, failed, failures }.
import { createServer } from 'node:http';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const chromiumPath = process.env.WEBFFI_CHROMIUM ?? '/usr/lib/chromium/chromium';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

/**
 * The response headers that make a page cross-origin isolated
 * (`crossOriginIsolated`, SharedArrayBuffer): what load({ threads }) needs.
 */
export const ISOLATION_HEADERS = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
});

/**
 * Serves the repository over http://127.0.0.1 (browsers cannot fetch wasm
 * from file://); `mounts` serve other folders under a path prefix
 * ({ '/models/': dir }); `isolated` sends ISOLATION_HEADERS with every
 * response (by default none are sent), or, a function, with the responses
 * for the paths it returns true for.
 */
export async function startServer({ root = repoRoot, mounts = {}, isolated = false } = {}) {
  const server = createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const extra = (typeof isolated === 'function' ? isolated(path) : isolated) ? ISOLATION_HEADERS : {};
    let base = root;
    for (const [prefix, dir] of Object.entries(mounts)) {
      if (path.startsWith(prefix)) {
        base = dir;
        path = path.slice(prefix.length - 1);
        break;
      }
    }
    const file = join(base, path);
    if (!file.startsWith(normalize(base)) || file.includes(`${sep}..${sep}`)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { ...extra, 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: (path) => `http://127.0.0.1:${port}/${path.replace(/^\//, '')}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Launches headless Chromium with a fresh profile; WebGPU on request. */
export async function launchChromium({ webgpu = false } = {}) {
  const userDataDir = await mkdtemp(join(tmpdir(), 'webffi-chromium-'));
  const args = [
    '--headless=new',
    '--no-sandbox',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-quic',
  ];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Opens url, waits for the page's result and returns it. Console errors and
 * uncaught page errors are collected into `logs` for failure messages.
 */
export async function runPage(context, url, { timeout = 60000 } = {}) {
  const page = await context.newPage();
  const logs = [];
  page.on('console', (m) => {
    if (m.type() === 'error') logs.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  try {
    await page.goto(url);
    const handle = await page.waitForFunction(() => window.__webffiResult, null, { timeout });
    const result = await handle.jsonValue();
    return { ...result, logs };
  } finally {
    await page.close();
  }
}

/**
 * For a node:test file: starts the server and Chromium before its tests and
 * closes both after them. run(page) opens tests/browser/pages/PAGE and
 * returns its result; expectPass(page, n) asserts n passed and none failed.
 * `isolated`: pages are served cross-origin isolated (ISOLATION_HEADERS).
 */
export function useChromium({ webgpu = false, isolated = false } = {}) {
  let server;
  let browser;
  before(async () => {
    server = await startServer({ isolated });
    browser = await launchChromium({ webgpu });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  const run = (page, options) =>
    runPage(browser.context, server.url(`tests/browser/pages/${page}`), options);
  return {
    run,
    async expectPass(page, count, options) {
      const result = await run(page, options);
      assert.deepEqual(result.failures, [], result.logs.join('\n'));
      assert.equal(result.passed, count);
      return result;
    },
  };
}
