// Runs webffi command programs (`webffi build --command`) in headless
// Chromium, as `webffi run` runs them under Node: each run is a fresh page
// that imports js/command.js and runs the program's bytes with runCommand.
// Its output is streamed back as it is written, so a run that hangs or
// traps still shows what it printed. Pages load from an origin that exists
// only inside the browser (context.route): /repo/ is the repository,
// /work/ the folder the programs are in. Chromium is launched as
// tests/browser/harness.mjs launches it (playwright-core, Debian's
// chromium or WEBFFI_CHROMIUM).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, extname, relative, resolve, sep } from 'node:path';

const ORIGIN = 'http://webffi-command.invalid';
const MIME = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json' };

/**
 * Starts Chromium. run(program, args, { timeout, log }) resolves to
 * { code, out } like a child process: code is the exit code, 'trap' when
 * the program trapped (the error is in out), 'timeout' after timeout
 * seconds (the page is closed), or 'error' when the page failed.
 */
export async function startCommandBrowser({ root, work }) {
  const { launchChromium } = await import('../browser/harness.mjs');
  const browser = await launchChromium();
  const folders = { repo: resolve(root), work: resolve(work) };
  await browser.context.route(`${ORIGIN}/**`, async (route) => {
    const path = decodeURIComponent(new URL(route.request().url()).pathname);
    if (path === '/') {
      await route.fulfill({ contentType: 'text/html', body: '<!doctype html><meta charset="utf-8"><title>command</title>' });
      return;
    }
    const m = /^\/(repo|work)\/(.+)$/.exec(path);
    const file = m ? resolve(folders[m[1]], m[2]) : null;
    if (!file || !file.startsWith(folders[m[1]] + sep) || !existsSync(file)) {
      await route.fulfill({ status: 404, body: '' });
      return;
    }
    await route.fulfill({ contentType: MIME[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) });
  });

  async function run(program, args = [], { timeout = 300, log = null } = {}) {
    const page = await browser.context.newPage();
    const chunks = [];
    let code;
    let timer;
    try {
      await page.exposeFunction('__webffiWrite', (fd, text) => { chunks.push(text); });
      await page.goto(`${ORIGIN}/`);
      const url = `/work/${relative(folders.work, resolve(program)).split(sep).join('/')}`;
      const running = page.evaluate(async ({ url, argv }) => {
        const { runCommand } = await import('/repo/js/command.js');
        const response = await fetch(url);
        if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
        const bytes = new Uint8Array(await response.arrayBuffer());
        try {
          return await runCommand(bytes, {
            args: argv,
            write: (fd, text) => { window.__webffiWrite(fd, text); },
            readFileSync: (path) => { throw new Error(`no file system in the browser: ${path}`); },
          });
        } catch (e) {
          window.__webffiWrite(2, `\n${e?.stack ?? e}\n`);
          return 'trap';
        }
      }, { url, argv: [basename(program, '.wasm'), ...args] });
      const timedOut = new Promise((done) => { timer = setTimeout(() => done('timeout'), timeout * 1000); });
      code = await Promise.race([running, timedOut]);
      // a round trip, so that every write sent before the result has arrived
      if (code !== 'timeout') await page.evaluate(() => 0);
    } catch (e) {
      chunks.push(`\n${e?.stack ?? e}\n`);
      code ??= 'error';
    } finally {
      clearTimeout(timer);
      await page.close().catch(() => {});
    }
    const out = chunks.join('');
    if (log) writeFileSync(log, `$ chromium: runCommand ${program} ${args.join(' ')}\n${out}`);
    return { code, out };
  }

  return { run, close: () => browser.close() };
}
