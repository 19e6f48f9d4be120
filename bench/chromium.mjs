// Runs a benchmark page (bench/NAME.html) in headless Chromium with WebGPU
// (SwiftShader without a GPU) and returns the result the page posts; and a
// server for pages that need threads (serveIsolated).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium, runPage } from '../tests/browser/harness.mjs';

export async function runBenchPage(page, quick) {
  const server = await startServer();
  const browser = await launchChromium({ webgpu: true });
  try {
    const r = await runPage(browser.context, server.url(`bench/${page}${quick ? '?quick' : ''}`), { timeout: 600000 });
    if (r.error) throw new Error(`benchmark page failed: ${r.error}\n${r.logs.join('\n')}`);
    return r;
  } finally {
    await browser.close();
    await server.close();
  }
}

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

/**
 * Serves the repository over http://127.0.0.1 with the two headers that
 * make a page cross-origin isolated (SharedArrayBuffer, so
 * load({ threads })) on every response, its workers' scripts included.
 * Returns { url(path), close() }, as the browser tests' server does.
 */
export async function serveIsolated() {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(repoRoot, path);
    if (!file.startsWith(normalize(repoRoot)) || file.includes(`${sep}..${sep}`)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, {
        'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
      }).end(body);
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
