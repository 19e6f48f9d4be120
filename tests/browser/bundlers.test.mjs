// A browser app that imports 'webffi', built by esbuild, Vite and webpack as
// their users run them (and served with no build at all, through an import
// map onto a CDN-like copy of the packed package), then run in headless
// Chromium: each must load the wasm through the bundler and call into C.
// The app is tests/bundlers/app; builds go to build/bundlers/ (git-ignored).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchChromium } from './harness.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = join(root, 'build/bundlers');
const appDir = join(work, 'app'); // the app, with node_modules/webffi -> this repository
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const shippedWasm = readFileSync(join(root, 'dist/webffi.wasm'));
// the app loads the test fixtures module too (js/testing.js)
const shippedTesting = readFileSync(join(root, 'dist/webffi_testing.wasm'));

let browser;
before(async () => {
  rmSync(work, { recursive: true, force: true });
  cpSync(join(root, 'tests/bundlers/app'), appDir, { recursive: true });
  mkdirSync(join(appDir, 'node_modules'));
  symlinkSync(root, join(appDir, 'node_modules/webffi'), 'dir');
  browser = await launchChromium();
});
// Servers close after the browser: while it runs, a socket it opened ahead
// of need would hold a server's close() until Node's header timeout.
const servers = [];
after(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => s.close()));
});

/** Every file under dir, relative to it. */
const filesUnder = (dir) => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1));

/** Serves dir (until the end), opens page, returns the app's result and every failed request. */
async function runApp(dir, page = 'index.html') {
  const server = await startServer({ root: dir });
  servers.push(server);
  const tab = await browser.context.newPage();
  const failed = [];
  const wasm = [];
  const errors = [];
  tab.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    if (r.url().endsWith('.wasm')) wasm.push(r.url());
  });
  tab.on('pageerror', (e) => errors.push(e.message));
  try {
    await tab.goto(server.url(page));
    const out = await tab.waitForSelector('#result[data-state]', { timeout: 30000 });
    return { state: await out.getAttribute('data-state'), value: JSON.parse(await out.textContent()), failed, wasm, errors };
  } finally {
    await tab.close();
  }
}

/** The app's own result: C added one and a C ValueError arrived as webffi's class. */
function assertAppWorked(run) {
  assert.deepEqual(run.failed, [], 'no request failed');
  assert.deepEqual(run.errors, []);
  assert.equal(run.state, 'done', JSON.stringify(run.value));
  assert.deepEqual(run.value, {
    sum: 42,
    error: { kind: 'ValueError', message: 'raised in C', isValueError: true, isFFIError: true },
  });
  assert.equal(run.wasm.length, 2, `two wasm fetched (the runtime, then the fixtures module): ${run.wasm}`);
}

/**
 * The bundler emitted the wasm itself: the shipped runtime and fixtures
 * module bytes, and where it follows every `new URL(..., import.meta.url)`
 * (`threaded`: Vite, webpack) their threaded builds too, which load({ threads })
 * and loadTesting name (a page fetches only what it uses); returns the names
 * of the first two.
 */
function assertEmittedWasm(out, { threaded = false } = {}) {
  const wasm = filesUnder(out).filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, threaded ? 4 : 2, `${threaded ? 'four' : 'two'} wasm in ${out}: ${wasm}`);
  const emitted = (bytes) => wasm.find((f) => bytes.equals(readFileSync(join(out, f))));
  const runtime = emitted(shippedWasm);
  const testing = emitted(shippedTesting);
  assert.ok(runtime !== undefined, `one of ${wasm} is dist/webffi.wasm`);
  assert.ok(testing !== undefined, `one of ${wasm} is dist/webffi_testing.wasm`);
  for (const file of threaded ? ['dist/webffi-mt.wasm', 'dist/webffi_testing-mt.wasm'] : []) {
    assert.ok(emitted(readFileSync(join(root, file))) !== undefined, `one of ${wasm} is ${file}`);
  }
  return { runtime, testing };
}

/** The runtime was fetched first, then the fixtures module, both as the bundler emitted them. */
function assertFetched(run, { runtime, testing }) {
  assert.ok(run.wasm[0].endsWith(`/${runtime}`), run.wasm[0]);
  assert.ok(run.wasm[1].endsWith(`/${testing}`), run.wasm[1]);
}

test('esbuild --bundle --platform=browser, the wasm through the file loader', async () => {
  const { build } = await import('esbuild');
  const out = join(work, 'esbuild');
  const result = await build({
    absWorkingDir: appDir,
    entryPoints: { main: 'main_esbuild.js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    loader: { '.wasm': 'file' },
    outdir: out,
    logLevel: 'silent',
    metafile: true,
  });
  assert.deepEqual(result.warnings, []);
  const inputs = Object.values(result.metafile.inputs).flatMap((i) => i.imports.map((x) => x.path));
  assert.deepEqual(inputs.filter((p) => p.startsWith('node:')), [], 'the browser graph imports nothing from Node');
  cpSync(join(appDir, 'index.html'), join(out, 'index.html'));
  const wasm = assertEmittedWasm(out);
  const run = await runApp(out);
  assertAppWorked(run);
  assertFetched(run, wasm);
});

/** A page that runs one of the app's entry points (a module). */
const pageFor = (script) => `<!doctype html>
<meta charset="utf-8">
<pre id="result">loading</pre>
<script type="module" src="./${script}"></script>
`;

/** The worker app's page: C called in the worker, a C error caught on the page. */
function assertWorkerAppWorked(run) {
  assert.deepEqual(run.failed, [], 'no request failed');
  assert.deepEqual(run.errors, []);
  assert.equal(run.state, 'done', JSON.stringify(run.value));
  assert.deepEqual(run.value, {
    sum: 42,
    error: { kind: 'ValueError', message: 'raised in C', isValueError: true, isFFIError: true },
  });
}

test('esbuild: a page of webffi/client, and a worker that hands load() the wasm\'s URL', async () => {
  const { build } = await import('esbuild');
  const out = join(work, 'esbuild-worker');
  const pages = ['main_worker_esbuild.js', 'main_worker_esbuild_no_url.js'];
  const result = await build({
    absWorkingDir: appDir,
    entryPoints: [...pages, 'worker_esbuild.js', 'worker_esbuild_no_url.js'],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    loader: { '.wasm': 'file' },
    outdir: out,
    logLevel: 'silent',
    metafile: true,
  });
  assert.deepEqual(result.warnings, []);
  // The page loads no wasm: nothing of the runtime is in its bundle.
  for (const page of pages) {
    const [, output] = Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint === page);
    const inputs = Object.keys(output.inputs);
    assert.ok(inputs.some((i) => i.endsWith('js/client.js')), inputs.join(' '));
    assert.deepEqual(inputs.filter((i) => /js\/(loader|dylink|tensor\.js|runtime\/|rpc\/|backends\/)/.test(i) || i.endsWith('.wasm')), [], page);
  }
  writeFileSync(join(out, 'worker.html'), pageFor('main_worker_esbuild.js'));
  writeFileSync(join(out, 'worker_no_url.html'), pageFor('main_worker_esbuild_no_url.js'));
  assertWorkerAppWorked(await runApp(out, 'worker.html'));
  // Without load({ wasm }) the worker's runtime is not found, and the call says how to fix it.
  const bad = await runApp(out, 'worker_no_url.html');
  assert.equal(bad.state, 'failed', JSON.stringify(bad.value));
  assert.match(bad.value.failure, /^RuntimeError: webffi: cannot fetch http:\/\/127\.0\.0\.1:\d+\/dist\/webffi\.wasm: HTTP 404 \(the default: .*`import wasm from 'webffi\/webffi\.wasm'` \(esbuild: --loader:\.wasm=file\) and `load\(\{ wasm \}\)`$/);
});

test('vite build, the wasm through new URL(..., import.meta.url)', async () => {
  const { build, createLogger } = await import('vite');
  const out = join(work, 'vite');
  const warnings = [];
  const logger = createLogger('warn');
  logger.warn = (m) => warnings.push(m);
  logger.warnOnce = (m) => warnings.push(m);
  logger.error = (m) => warnings.push(m);
  await build({
    root: appDir,
    configFile: false,
    logLevel: 'warn',
    customLogger: logger,
    build: { outDir: out, emptyOutDir: true },
  });
  assert.deepEqual(warnings, []);
  const wasm = assertEmittedWasm(out, { threaded: true });
  const run = await runApp(out);
  assertAppWorked(run);
  assertFetched(run, wasm);
});

test('webpack (production), the wasm through new URL(..., import.meta.url)', async () => {
  const { default: webpack } = await import('webpack');
  const out = join(work, 'webpack');
  const stats = await new Promise((resolve, reject) => {
    webpack({
      mode: 'production',
      context: appDir,
      entry: './main.js',
      output: { path: out, filename: 'main.js', clean: true },
      // Its size hints (the wasm is over 244 KiB's advice) are no fault of the library.
      performance: { hints: false },
    }, (err, s) => (err ? reject(err) : resolve(s)));
  });
  const info = stats.toJson({ all: false, errors: true, warnings: true });
  assert.deepEqual(info.errors.map((e) => e.message), []);
  assert.deepEqual(info.warnings.map((e) => e.message), []);
  // webpack's default output is a classic script (its runtime finds its URL from document.currentScript).
  writeFileSync(join(out, 'index.html'), readFileSync(join(appDir, 'index.html'), 'utf8')
    .replace('<script type="module" src="./main.js">', '<script defer src="./main.js">'));
  const wasm = assertEmittedWasm(out, { threaded: true });
  const run = await runApp(out);
  assertAppWorked(run);
  assertFetched(run, wasm);
});

/** The packed package (npm pack), unpacked once into build/bundlers/package. */
let unpacked;
function packedPackage() {
  if (unpacked) return unpacked;
  const tar = join(work, 'pack');
  mkdirSync(tar, { recursive: true });
  const [{ filename }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tar],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  unpacked = join(work, 'package');
  mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', join(tar, filename), '-C', unpacked, '--strip-components=1']);
  return unpacked;
}

test('vite dev serves the app with webffi installed from its tarball', async () => {
  const { createServer } = await import('vite');
  const dev = join(work, 'vite-dev');
  cpSync(join(root, 'tests/bundlers/app'), dev, { recursive: true });
  cpSync(packedPackage(), join(dev, 'node_modules/webffi'), { recursive: true });
  const server = await createServer({
    root: dev,
    configFile: false,
    logLevel: 'silent',
    server: { host: '127.0.0.1', port: 0 },
  });
  try {
    await server.listen();
    const tab = await browser.context.newPage();
    const failed = [];
    const wasm = [];
    tab.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      if (r.url().endsWith('.wasm')) wasm.push(r.url());
    });
    await tab.goto(server.resolvedUrls.local[0]);
    const out = await tab.waitForSelector('#result[data-state]', { timeout: 30000 });
    const run = { state: await out.getAttribute('data-state'), value: JSON.parse(await out.textContent()), failed, wasm, errors: [] };
    await tab.close();
    assertAppWorked(run);
    assert.ok(run.wasm[0].endsWith('/node_modules/webffi/dist/webffi.wasm'), run.wasm[0]);
    assert.ok(run.wasm[1].endsWith('/node_modules/webffi/dist/webffi_testing.wasm'), run.wasm[1]);
  } finally {
    await server.close();
  }
});

test('no build step: an import map onto the package as a CDN serves it', async () => {
  // The packed package, laid out as jsDelivr serves it (/npm/NAME@VERSION/FILE).
  const site = join(work, 'cdn');
  const at = `npm/${pkg.name}@${pkg.version}`;
  cpSync(packedPackage(), join(site, at), { recursive: true });
  cpSync(join(appDir, 'app.js'), join(site, 'app.js'));
  writeFileSync(join(site, 'index.html'), `<!doctype html>
<meta charset="utf-8">
<script type="importmap">
{ "imports": { "webffi": "/${at}/js/index.js", "webffi/": "/${at}/" } }
</script>
<pre id="result">loading</pre>
<script type="module">
  import { main } from './app.js';
  main();
</script>
`);
  const run = await runApp(site);
  assertAppWorked(run);
  assert.ok(run.wasm[0].endsWith(`/${at}/dist/webffi.wasm`), run.wasm[0]);
  assert.ok(run.wasm[1].endsWith(`/${at}/dist/webffi_testing.wasm`), run.wasm[1]);

  // In a module Worker, which does not see the page's import map: imported by
  // URL it works; a bare `from 'webffi'` fails to load, and the page is told so.
  cpSync(join(appDir, 'worker_app.js'), join(site, 'worker_app.js'));
  writeFileSync(join(site, 'worker_by_url.js'), `import { load, serve } from '/${at}/js/index.js';
import { loadTesting } from '/${at}/js/testing.js';
serve(load().then(loadTesting), self, { expose: ['testing.add_one', 'testing.test_raise_error'] });
`);
  writeFileSync(join(site, 'worker_bare.js'), `import { load, serve } from 'webffi';
serve(load(), self);
`);
  for (const [page, worker] of [['worker.html', 'worker_by_url.js'], ['worker_bare.html', 'worker_bare.js']]) {
    writeFileSync(join(site, page), `<!doctype html>
<meta charset="utf-8">
<script type="importmap">
{ "imports": { "webffi/client": "/${at}/js/client.js", "webffi": "/${at}/js/index.js", "webffi/": "/${at}/" } }
</script>
<pre id="result">loading</pre>
<script type="module">
  import { mainWorker } from './worker_app.js';
  mainWorker(new Worker('./${worker}', { type: 'module' }));
</script>
`);
  }
  assertWorkerAppWorked(await runApp(site, 'worker.html'));
  const bare = await runApp(site, 'worker_bare.html');
  assert.equal(bare.state, 'failed', JSON.stringify(bare.value));
  assert.match(bare.value.failure, /^RPCError: webffi session: the worker failed to load its imports .*A module Worker does not see the page's import map/);
});
