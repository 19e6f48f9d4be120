// Loading the runtime every way Node offers, and from the packed package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, RuntimeError } from '../../js/index.js';
import { startServer, launchChromium, runPage } from '../browser/harness.mjs';
import { loadTesting } from '../support/testing_module.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('CommonJS require finds the wasm next to the bundle', async () => {
  const webffi = createRequire(import.meta.url)('../../dist/webffi.cjs');
  const rt = await loadTesting(await webffi.load());
  assert.equal(rt.getGlobal('testing.add_one')(1), 2);
  assert.throws(() => rt.getGlobal('testing.add_one')('x'), webffi.FFITypeError);
});

test('load accepts a URL and a URL string', async () => {
  const url = new URL('../../dist/webffi.wasm', import.meta.url);
  for (const wasm of [url, url.href]) {
    assert.equal((await loadTesting(await load({ wasm }))).getGlobal('testing.add_one')(2), 3);
  }
});

test('a wasm that cannot be fetched says where it looked and, at the default place, how a bundle passes it', async () => {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => res.writeHead(404).end());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${server.address().port}/app/webffi.wasm`;
    await assert.rejects(load({ wasm: url }), (e) => e instanceof RuntimeError &&
      e.message === `webffi: cannot fetch ${url}: HTTP 404 (the \`wasm\` given to load())`);
  } finally {
    server.close();
  }
  // Bundled by esbuild, webffi's JS no longer sits next to dist/: the default URL misses.
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'webffi-bundled-'));
  try {
    writeFileSync(join(dir, 'main.mjs'), `import { load } from ${JSON.stringify(`${root}js/index.js`)};
load().then(() => console.log('loaded'), (e) => console.log(e.name, e.message));\n`);
    await build({ entryPoints: [join(dir, 'main.mjs')], bundle: true, platform: 'node', format: 'esm',
      outfile: join(dir, 'out/app.mjs'), logLevel: 'silent' });
    const out = execFileSync(process.execPath, [join(dir, 'out/app.mjs')], { encoding: 'utf8' });
    assert.match(out, /^RuntimeError webffi: cannot fetch file:\/\/.*\/dist\/webffi\.wasm: ENOENT \(the default: .*import wasm from 'webffi\/webffi\.wasm'.* and `load\(\{ wasm \}\)`\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a backend that fails to initialise is one warning, not a failed load', async () => {
  const warnings = [];
  const logger = { log() {}, warn: (m) => warnings.push(m) };
  const rt = await loadTesting(await load({ logger, backends: [{ name: 'broken', init() { throw new Error('no device'); } }] }));
  assert.deepEqual(warnings, ['webffi: backend broken is unavailable: no device']);
  assert.equal(rt.getGlobal('testing.add_one')(1), 2);
});

test('the runtime loads and calls inside worker_threads', async () => {
  const code = `
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(`${root}js/index.js`)}).then(async ({ load }) => {
      const rt = await load();
      await rt.loadModule(${JSON.stringify(`${root}dist/webffi_testing.wasm`)});
      parentPort.postMessage(rt.getGlobal('testing.apply')((a) => a * 2, 21));
    });`;
  const result = await new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true });
    w.once('message', resolve);
    w.once('error', reject);
  });
  assert.equal(result, 42);
});

test('npm pack yields a package that works from import, require and a script tag', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-pack-'));
  try {
    const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, encoding: 'utf8' });
    const tarball = join(dir, out.trim().split('\n').pop());
    const app = join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), '{"name":"app","private":true}');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: app, stdio: 'pipe' });
    // the package ships the test fixtures as a module of their own
    const esm = `import { load } from 'webffi'; const rt = await load();
      await rt.loadModule(new URL(import.meta.resolve('webffi/webffi_testing.wasm')));
      console.log(rt.getGlobal('testing.add_one')(41));`;
    assert.equal(execFileSync('node', ['--input-type=module', '-e', esm], { cwd: app, encoding: 'utf8' }).trim(), '42');
    const dylink = `import { loadModule } from 'webffi/js/dylink.js'; console.log(typeof loadModule);`;
    assert.equal(execFileSync('node', ['--input-type=module', '-e', dylink], { cwd: app, encoding: 'utf8' }).trim(), 'function');
    const cjs = `require('webffi').load().then(async (rt) => {
      await rt.loadModule(require.resolve('webffi/webffi_testing.wasm'));
      console.log(rt.getGlobal('testing.echo')('from cjs'));
    });`;
    assert.equal(execFileSync('node', ['-e', cjs], { cwd: app, encoding: 'utf8' }).trim(), 'from cjs');
    writeFileSync(join(app, 'index.html'), `<!doctype html>
      <script src="node_modules/webffi/dist/webffi.iife.js"></script>
      <script>
        webffi.load().then(async (rt) => {
          await rt.loadModule('node_modules/webffi/dist/webffi_testing.wasm');
          // the bundle's TVM RPC part, from the file the package put next to it
          await webffi.loadRPC();
          const ep = webffi.createRPCEndpoint(rt, { send() {} });
          const ok = rt.getGlobal('testing.add_one')(1) === 2 && typeof ep.feed === 'function';
          window.__webffiResult = { passed: ok ? 1 : 0, failed: ok ? 0 : 1, failures: ok ? [] : ['add_one'] };
        }, (e) => { window.__webffiResult = { passed: 0, failed: 1, failures: [String(e)] }; });
      </script>`);
    const server = await startServer({ root: app });
    const browser = await launchChromium();
    try {
      const result = await runPage(browser.context, server.url('index.html'));
      assert.deepEqual(result.failures, [], result.logs.join('\n'));
      assert.equal(result.passed, 1);
    } finally {
      await browser.close();
      await server.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
