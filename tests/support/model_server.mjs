// A local HTTP server with a model's layout (HuggingFace's
// OWNER/NAME/resolve/main/FILE, or any path), for `webffi model fetch`:
// routes set per test, Range requests answered with 206, and the ways a
// download goes wrong: a connection cut after some bytes, a server that
// ignores ranges, a body longer or shorter than its Content-Length says.
import http from 'node:http';

/**
 * @returns {Promise<{ url: string, routes: Map<string, object>, log: { path: string, range: string|null }[], close(): Promise<void> }>}
 * A route: { body: Uint8Array, mode?: 'normal' | 'cut' | 'no-range' | 'chunked' | 'status', cutAt?: number,
 * holdMs?: number (how long a cut connection stays open after its bytes), status?: number }.
 */
export async function startModelServer() {
  const routes = new Map();
  const log = [];
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const range = req.headers.range ?? null;
    log.push({ path, range });
    const route = routes.get(path);
    if (!route) {
      res.writeHead(404).end('not found');
      return;
    }
    if (route.mode === 'status') {
      res.writeHead(route.status).end('no');
      return;
    }
    const body = Buffer.from(route.body);
    let start = 0;
    const m = range && route.mode !== 'no-range' ? /^bytes=(\d+)-$/.exec(range) : null;
    if (m) {
      start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
        return;
      }
    }
    const part = body.subarray(start);
    const headers = m ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {};
    if (route.mode !== 'chunked') headers['content-length'] = String(part.length);
    res.writeHead(m ? 206 : 200, headers);
    if (route.mode === 'cut') {
      // the connection drops after cutAt bytes of what was promised
      res.write(part.subarray(0, route.cutAt ?? part.length >> 1), () => setTimeout(() => res.socket?.destroy(), route.holdMs ?? 100));
      return;
    }
    res.end(part);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    routes,
    log,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}
