// Runs a benchmark page (bench/NAME.html) in headless Chromium with WebGPU
// (SwiftShader without a GPU) and returns the result the page posts; and a
// server for pages that need threads (serveIsolated).
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

/**
 * The repository over http://127.0.0.1 with the two headers that make a
 * page cross-origin isolated (SharedArrayBuffer, so load({ threads })) on
 * every response, its workers' scripts included: the browser tests' server.
 */
export const serveIsolated = () => startServer({ isolated: true });
