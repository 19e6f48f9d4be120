// The package as npm ships it: its metadata, the files it packs, and the
// prepack check that refuses a dist/ missing or built from other sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { proseOf } from '../support/doc_blocks.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('package.json names the project home, its issues and its repository', () => {
  assert.equal(pkg.homepage, 'https://github.com/webffi/webffi#readme');
  assert.deepEqual(pkg.bugs, { url: 'https://github.com/webffi/webffi/issues' });
  assert.deepEqual(pkg.repository, { type: 'git', url: 'git+https://github.com/webffi/webffi.git' });
  assert.equal(pkg.license, 'Apache-2.0');
});

test('engines: the Node versions whose require() loads ES modules unflagged (require(\'webffi\') does)', () => {
  assert.equal(pkg.engines.node, '^20.19.0 || >=22.12.0');
  const [major, minor] = process.versions.node.split('.').map(Number);
  assert.ok((major === 20 && minor >= 19) || major > 22 || (major === 22 && minor >= 12), `this Node ${process.version} is in range`);
});

/** What `npm pack` would put in the tarball: { files: [{ path, size }], size, unpackedSize }. */
let packList = null;
function pack() {
  packList ??= JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))[0];
  return packList;
}

test('npm pack ships LICENSE, NOTICE and every file the package.json points at', () => {
  const { files } = pack();
  const packed = new Set(files.map((f) => f.path));
  const targets = [pkg.main, pkg.types, ...Object.values(pkg.bin)];
  const walk = (v) => (typeof v === 'string' ? targets.push(v) : Object.values(v).forEach(walk));
  walk(pkg.exports);
  // and the prebuilt runtime `webffi build` links, with its stamp and the modules reading them
  const wanted = ['LICENSE', 'NOTICE', 'dist/libwebffi.a', 'dist/libwebffi-mt.a', 'dist/libwebffi.json', 'bin/prebuilt_runtime.mjs',
    'bin/object_symbols.mjs', ...targets.map((t) => t.replace(/^\.\//, '').replace('*', 'index.js'))];
  assert.deepEqual(wanted.filter((f) => !packed.has(f)), []);
  assert.match(readFileSync(join(root, 'LICENSE'), 'utf8'), /^\s*Apache License\s+Version 2\.0, January 2004/);
  assert.match(readFileSync(join(root, 'NOTICE'), 'utf8'), /^webffi\nCopyright/);
});

test('npm pack ships the reference and the guides (their pages and declarations), and README\'s and their links resolve in the package', () => {
  const { files } = pack();
  const packed = new Set(files.map((f) => f.path));
  // the pages as markdown, and the .d.ts the HTML reference is made from (editors read them too)
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const { entryPoints } = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
  assert.deepEqual([...docs, ...entryPoints].filter((f) => !packed.has(f)), []);
  assert.ok(docs.includes('docs/api.md') && docs.includes('docs/c-api.md') && docs.includes('docs/cli.md'));
  // README links to the reference and to every guide, and every relative link of README and of the
  // pages (in their text, not their code) resolves inside the package (npm shows README from the tarball; an installed package has both)
  const links = (doc) => [...proseOf(doc).matchAll(/\]\(((?!https?:|#)[^)#\s]+)/g)]
    .map((m) => join(dirname(doc), m[1]).replace(/\\/g, '/'));
  assert.deepEqual(docs.filter((d) => !links('README.md').includes(d)), []);
  assert.ok(packed.has('README.md'));
  const broken = ['README.md', ...docs].flatMap((d) => links(d).filter((l) => !packed.has(l)).map((l) => `${d} -> ${l}`));
  assert.deepEqual(broken, []);
  // the generated HTML stays out: the package carries sources, not a site
  assert.deepEqual(files.filter((f) => /\.html$|^build\//.test(f.path)).map((f) => f.path), []);
});

/** A package tree (sources and the built dist/) in a temporary directory. */
function packageCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-prepack-'));
  for (const p of ['CMakeLists.txt', 'bin', 'cmake', 'include', 'js', 'src', 'dist', 'scripts']) {
    cpSync(join(root, p), join(dir, p), { recursive: true });
  }
  return dir;
}
const prepack = (dir) => spawnSync(process.execPath, ['scripts/check_dist.mjs'], { cwd: dir, encoding: 'utf8' });

test('prepack accepts the dist/ built from these sources, whatever their mtimes', (t) => {
  const dir = packageCopy();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fresh = prepack(dir);
  assert.equal(fresh.status, 0, fresh.stderr);
  // A checkout or copy that only touches files is not a change.
  utimesSync(join(dir, 'js/index.js'), new Date(), new Date(Date.now() + 60000));
  assert.equal(prepack(dir).status, 0);
});

test('prepack refuses a dist/ built from older sources, in js/, src/ or include/', (t) => {
  const dir = packageCopy();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['js/loader.js', 'src/error.c', 'include/webffi/typed_call.h']) {
    const before = readFileSync(join(dir, file));
    appendFileSync(join(dir, file), '\n// edited after the build\n');
    const stale = prepack(dir);
    assert.equal(stale.status, 1, `${file} edited`);
    assert.match(stale.stderr, /dist\/ is stale: it was built from other sources.*run `npm run build`/);
    writeFileSync(join(dir, file), before);
    assert.equal(prepack(dir).status, 0, `${file} restored`);
  }
  // A new source file counts too.
  writeFileSync(join(dir, 'js/extra.js'), 'export {};\n');
  assert.equal(prepack(dir).status, 1);
});

test('prepack refuses a missing dist/ or one without its source hash', (t) => {
  const dir = packageCopy();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  rmSync(join(dir, 'dist/sources.sha256'));
  const unhashed = prepack(dir);
  assert.equal(unhashed.status, 1);
  assert.match(unhashed.stderr, /dist\/sources\.sha256 missing/);
  rmSync(join(dir, 'dist'), { recursive: true });
  const none = prepack(dir);
  assert.equal(none.status, 1);
  assert.match(none.stderr, /dist\/webffi\.wasm, dist\/webffi\.lines, dist\/libwebffi\.a, dist\/libwebffi\.json, dist\/webffi\.cjs, dist\/webffi\.iife\.js, dist\/webffi\.rpc\.js, dist\/webffi\.webgpu\.js, dist\/webffi\.models\.js, dist\/webffi-mt\.wasm, dist\/libwebffi-mt\.a, dist\/sources\.sha256 missing/);
});

test('sideEffects names the modules that register at import, and bundlers keep them', async () => {
  assert.deepEqual(pkg.sideEffects, ['./js/tensor_codec.js', './js/rpc/chain.js', './dist/webffi.cjs', './dist/webffi.iife.js',
    './dist/webffi.rpc.js', './dist/webffi.webgpu.js', './dist/webffi.models.js']);
  // What registers something at import is listed: a top-level call into another module's registry.
  const registering = readdirSync(join(root, 'js'), { recursive: true }).filter((f) => String(f).endsWith('.js'))
    .filter((f) => /^register\w*\(/m.test(readFileSync(join(root, 'js', String(f)), 'utf8'))).map((f) => `./js/${f}`);
  assert.deepEqual(registering.sort(), ['./js/rpc/chain.js', './js/tensor_codec.js']);
  // A page that imports only serve and connectRPC, bundled, still serves a TVM RPC session (chain.js's adapter),
  // and decodes tensors (tensor_codec.js): both modules are in the bundle.
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'webffi-side-effects-'));
  try {
    writeFileSync(join(dir, 'main.js'), `import { serve, connectRPC, decodeValue } from ${JSON.stringify(`${root}js/index.js`)};
globalThis.x = [serve, connectRPC, decodeValue];\n`);
    const r = await build({ entryPoints: [join(dir, 'main.js')], bundle: true, format: 'esm', platform: 'browser',
      write: false, metafile: true, loader: { '.wasm': 'file' }, outdir: join(dir, 'out'), logLevel: 'silent' });
    const inputs = Object.keys(r.metafile.inputs);
    assert.ok(inputs.some((i) => i.endsWith('js/rpc/chain.js')), inputs.join(' '));
    assert.ok(inputs.some((i) => i.endsWith('js/tensor_codec.js')), inputs.join(' '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bundle of a page that calls only load() holds no TVM RPC and no dist/ script parts', async () => {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'webffi-one-function-'));
  try {
    writeFileSync(join(dir, 'main.js'), `import { load } from ${JSON.stringify(`${root}js/index.js`)};
globalThis.start = async () => (await load()).getGlobal('ffi.ArraySize')([1, 2]);\n`);
    const r = await build({ entryPoints: [join(dir, 'main.js')], bundle: true, format: 'esm', platform: 'browser',
      write: false, metafile: true, loader: { '.wasm': 'file' }, outdir: join(dir, 'out'), logLevel: 'silent' });
    // what the output holds (metafile.inputs lists every file read, dropped or not)
    const inputs = Object.values(r.metafile.outputs).flatMap((o) => Object.entries(o.inputs))
      .filter(([, v]) => v.bytesInOutput > 0).map(([i]) => i);
    assert.deepEqual(inputs.filter((i) => /js\/rpc\/|js\/bundle\//.test(i)), []);
    assert.ok(inputs.some((i) => i.endsWith('js/tensor_codec.js')), inputs.join(' '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('webffi/client resolves for import and for types, and exports the session side', async () => {
  assert.deepEqual(pkg.exports['./client'], { types: './js/client.d.ts', default: './js/client.js' });
  const client = await import('webffi/client'); // the package by its own name, through "exports"
  for (const name of ['connect', 'connectRuntime', 'RemoteRuntime', 'RemoteTensor', 'encodeValue', 'decodeValue', 'RPCError', 'ValueError', 'SESSION_LIMITS']) {
    assert.ok(name in client, name);
  }
  const main = await import('../../js/index.js');
  assert.equal(client.RPCError, main.RPCError, 'one copy of the classes');
  assert.ok(!('load' in client), 'no runtime loader');
});
