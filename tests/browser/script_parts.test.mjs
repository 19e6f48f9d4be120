// The script bundle's parts (scripts/bundle.mjs): dist/webffi.iife.js holds
// what every page uses; TVM RPC (dist/webffi.rpc.js) loads on first use and
// the WebGPU backend (dist/webffi.webgpu.js) at load() where the host has
// WebGPU, and the core of a library TVM compiled (dist/webffi.models.js)
// when load() is given one, each from the file next to the bundle (no network beyond it). A
// page that uses neither fetches neither; a missing part fails only what
// needs it, with a message naming the file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from './harness.mjs';
import { startProxy } from '../support/rpc_proxy.mjs';
import { connectRPC, RPCTensor } from '../../js/index.js';
import { MODELS_DIR, ARCTIC_S } from '../support/model_fixture.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
let browser;
let proxy;
before(async () => {
  browser = await launchChromium({ webgpu: true });
  proxy = await startProxy({ root });
});
after(async () => {
  await proxy?.close();
  await browser?.close();
});

/** The script files a page fetched, by name. */
function scriptsOf(page) {
  const got = [];
  page.on('request', (r) => {
    const m = /\/(webffi[^/]*\.js)$/.exec(new URL(r.url()).pathname);
    if (m) got.push(m[1]);
  });
  return got;
}

test('a script-tag page serves TVM RPC and WebGPU from the parts it loads on first use', async () => {
  const page = await browser.context.newPage();
  const logs = [];
  page.on('pageerror', (e) => logs.push(e.message));
  const scripts = scriptsOf(page);
  try {
    await page.goto(proxy.webUrl(`tests/browser/pages/rpc_device_script.html?proxy=${encodeURIComponent(proxy.wsUrl)}&key=script`));
    await page.waitForFunction(() => window.__rpc?.ready || window.__rpc?.errors.length, null, { timeout: 120000 });
    assert.deepEqual(await page.evaluate(() => window.__rpc.errors), [], logs.join('\n'));
    const { before: b, after: a, closes } = await page.evaluate(() => ({ before: window.__rpc.before, after: window.__rpc.after, closes: window.__rpc.closes }));
    assert.equal(b.standIn, true);
    assert.deepEqual(b.endpoint, ['open', false, true]);
    assert.equal(b.limits, 65536);
    assert.deepEqual(a, { realClass: true, endpoint: 'function', earlyClosed: true });
    assert.deepEqual(closes, {
      noSend: 'TypeError: RPC endpoint: send is a function (bytes) => void',
      garbage: 'RPCError: RPC: closing the connection: RPC handshake: 0x4030201 is not TVM RPC\'s magic 0xff271 (not a TVM RPC client?)',
    });
    for (let i = 0; i < 100 && !proxy.waiting().includes('script'); i++) await new Promise((r) => setTimeout(r, 20));
    const s = await connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'script', { timeout: 60000 });
    try {
      assert.equal(await s.call('page.describe', [7]), 'script:7');
      const x = await s.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2], device: 'webgpu' });
      const y = await s.call('webgpu.matmul', [x, x]);
      assert.ok(y instanceof RPCTensor);
      assert.deepEqual(await y.data(), new Float32Array([7, 10, 15, 22]));
      x.dispose();
      y.dispose();
    } finally {
      await s.close();
    }
    assert.deepEqual(scripts.sort(), ['webffi.iife.js', 'webffi.rpc.js', 'webffi.webgpu.js']);
  } finally {
    await page.close();
  }
});

/** A folder holding the bundle and the wasm, and `parts` of the bundle's parts, as a site would copy them. */
function site(parts, { nonce = null } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-script-parts-'));
  mkdirSync(join(dir, 'lib'));
  for (const f of ['webffi.iife.js', 'webffi.wasm', ...parts]) copyFileSync(join(root, 'dist', f), join(dir, 'lib', f));
  // with a nonce: a CSP that runs only the scripts carrying it (the parts' tags get the bundle's)
  const csp = nonce ? `<meta http-equiv="Content-Security-Policy" content="script-src 'nonce-${nonce}' 'wasm-unsafe-eval'">` : '';
  const n = nonce ? ` nonce="${nonce}"` : '';
  writeFileSync(join(dir, 'index.html'), `<!doctype html>${csp}
<script src="lib/webffi.iife.js"${n}></script>
<script${n}>
  const warnings = [];
  const auto = new URL(location.href).searchParams.get('auto') !== '0';
  webffi.load({ autoloadBackends: auto, logger: { log() {}, warn: (m) => warnings.push(m) } }).then(async (rt) => {
    const out = { sum: rt.getGlobal('ffi.ArraySize')([1, 2, 3]), backends: rt.backends.list().map((b) => b.name), warnings };
    try {
      await webffi.connectRPC('127.0.0.1:1', 'x', { timeout: 2000 });
    } catch (e) {
      out.rpc = \`\${e.constructor.name} \${e.message}\`;
    }
    window.__out = out;
  }, (e) => { window.__out = { error: String(e) }; });
</script>`);
  return dir;
}

test('a page that uses neither part fetches neither; a missing part fails only what needs it, naming its file', async (t) => {
  const none = site([]);
  t.after(() => rmSync(none, { recursive: true, force: true }));
  const server = await startServer({ root: none });
  t.after(() => server.close());
  for (const auto of ['0', '1']) {
    const page = await browser.context.newPage();
    const scripts = scriptsOf(page);
    try {
      await page.goto(server.url(`index.html?auto=${auto}`));
      await page.waitForFunction(() => window.__out, null, { timeout: 60000 });
      const out = await page.evaluate(() => window.__out);
      assert.equal(out.error, undefined);
      assert.equal(out.sum, 3);
      // the RPC part is missing: connectRPC is the RuntimeError that names it
      assert.match(out.rpc, /^RuntimeError webffi: cannot load http:\/\/127\.0\.0\.1:\d+\/lib\/webffi\.rpc\.js, the script bundle's rpc part \(dist\/webffi\.rpc\.js, which belongs next to dist\/webffi\.iife\.js\): the file could not be loaded/);
      if (auto === '0') {
        // no backend discovery: the page fetched the bundle and tried RPC, nothing else
        assert.deepEqual(out.backends, ['cpu']);
        assert.deepEqual(out.warnings, []);
        assert.deepEqual(scripts.sort(), ['webffi.iife.js', 'webffi.rpc.js']);
      } else {
        // a host with WebGPU and no WebGPU part: load() works, one warning names the file
        assert.ok(!out.backends.includes('webgpu'));
        assert.equal(out.warnings.length, 1, out.warnings.join('\n'));
        assert.match(out.warnings[0], /^webffi: backend webgpu could not be registered: webffi: cannot load .*\/lib\/webffi\.webgpu\.js/);
      }
    } finally {
      await page.close();
    }
  }
});

test('a script-tag page loads a model library TVM compiled, its core from the models part', async (t) => {
  const server = await startServer({ mounts: { '/models/': MODELS_DIR } });
  t.after(() => server.close());
  const page = await browser.context.newPage();
  const scripts = scriptsOf(page);
  try {
    await page.goto(server.url(`tests/browser/pages/model_script.html?library=${encodeURIComponent(ARCTIC_S)}`));
    await page.waitForFunction(() => window.__out, null, { timeout: 120000 });
    assert.deepEqual(await page.evaluate(() => window.__out), { kind: 'tvm-ffi', shape: '2,3' });
    assert.deepEqual(scripts.sort(), ['webffi.iife.js', 'webffi.models.js']);
  } finally {
    await page.close();
  }
});

test('on a page whose CSP runs scripts by nonce, a part\'s tag carries the bundle\'s nonce', async (t) => {
  const dir = site(['webffi.webgpu.js'], { nonce: 'n0nce' });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const server = await startServer({ root: dir });
  t.after(() => server.close());
  const page = await browser.context.newPage();
  try {
    await page.goto(server.url('index.html'));
    await page.waitForFunction(() => window.__out, null, { timeout: 60000 });
    const out = await page.evaluate(() => window.__out);
    assert.equal(out.error, undefined);
    assert.deepEqual(out.warnings, []);
    assert.ok(out.backends.includes('webgpu'), out.backends.join());
  } finally {
    await page.close();
  }
});
