// Serves the repository over http for the browser demo (web/), with the two
// response headers that make a page cross-origin isolated, which threads
// need (SharedArrayBuffer; load({ threads })):
//
//   Cross-Origin-Opener-Policy: same-origin
//   Cross-Origin-Embedder-Policy: require-corp
//
//   node scripts/serve.mjs [--port 8000] [--host 127.0.0.1] [--no-isolation]
//
// then open http://127.0.0.1:8000/web/. --no-isolation leaves the headers
// out, as a plain static server (python3 -m http.server) does: the demo
// then runs single-threaded and says why. Any server that sends both
// headers with every file (the page, its scripts, the workers and the wasm)
// serves the demo as well.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/** The headers threads need, as sent with every response. */
export const ISOLATION_HEADERS = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
});

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.c': 'text/plain; charset=utf-8',
  '.h': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Starts the server; resolves to { url(path), port, close() }. `port` 0
 * picks a free one.
 */
export async function startDemoServer({ root = repoRoot, port = 8000, host = '127.0.0.1', isolated = true } = {}) {
  const base = resolve(root);
  const headers = isolated ? ISOLATION_HEADERS : {};
  const server = createServer(async (req, res) => {
    let file;
    try {
      const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
      file = join(base, path);
      if (file !== base && !file.startsWith(base + sep)) throw new Error('outside the root');
      if ((await stat(file)).isDirectory()) {
        if (!req.url.split('?')[0].endsWith('/')) {
          res.writeHead(301, { ...headers, Location: `${req.url.split('?')[0]}/` }).end();
          return;
        }
        file = join(file, 'index.html');
      }
      const body = await readFile(file);
      res.writeHead(200, { ...headers, 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
        'Cache-Control': 'no-cache' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  const actual = server.address().port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
  return {
    port: actual,
    url: (path = '') => `${origin}/${path.replace(/^\//, '')}`,
    close: () => new Promise((ok) => {
      server.close(ok);
      server.closeAllConnections?.();
    }),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const value = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
  };
  const port = Number(value('--port', process.env.PORT ?? 8000));
  const host = value('--host', '127.0.0.1');
  const isolated = !args.includes('--no-isolation');
  try {
    const server = await startDemoServer({ port, host, isolated });
    console.log(`Serving ${repoRoot} at ${server.url()} ` +
      (isolated ? 'with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp'
        : 'without the cross-origin isolation headers (threads off)'));
    console.log(`The demo: ${server.url('web/')}`);
  } catch (e) {
    console.error(`webffi: cannot serve on ${host}:${port}: ${e.message}` +
      (e.code === 'EADDRINUSE' ? ' (pick another with --port)' : ''));
    process.exit(1);
  }
}
