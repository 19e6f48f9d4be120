// What webffi costs a page in JavaScript, measured through real bundlers:
// the classic-script bundle (dist/webffi.iife.js) and its parts that load
// on first use (dist/webffi.rpc.js, dist/webffi.webgpu.js,
// dist/webffi.models.js), a page that
// only talks to a worker (it imports connectRuntime; the worker loads the
// runtime), built by esbuild and webpack in production mode, each with
// `import ... from 'webffi'` and with `import ... from 'webffi/client'`,
// and a page that calls one function (load(), then one global).
// Sizes are bytes of JavaScript emitted, raw and gzip -9.
// tests/node/doc_figures.test.mjs measures the esbuild pages with
// esbuildPage() below and checks the sizes the docs state.
//
//   node bench/bundle_size.mjs [BASE]
//
// BASE: another tree (a checkout or an unpacked package with js/, dist/
// and package.json) measured the same way in the same run; ratios are
// this tree / BASE. Without BASE, only this tree.
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = fileURLToPath(new URL('../', import.meta.url));
const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
let work = null;
const workDir = () => {
  if (!work) {
    work = mkdtempSync(join(tmpdir(), 'webffi-bundle-size-'));
    process.on('exit', () => rmSync(work, { recursive: true, force: true }));
  }
  return work;
};

/** The page that calls one function: loads the runtime and calls one of its globals. */
export const oneFunctionPage = (from) => `import { load } from '${from}';
globalThis.start = async () => (await load()).getGlobal('ffi.ArraySize')([1, 2, 3]);
`;

/** The worker page: connects to a worker it is given and calls one of its globals. */
export const page = (from) => `import { connectRuntime, RPCSessionTimeoutError } from '${from}';
globalThis.start = async (worker) => {
  const remote = await connectRuntime(worker);
  try {
    return await remote.getGlobal('demo.add')(40, 2);
  } catch (e) {
    if (e instanceof RPCSessionTimeoutError) return null;
    throw e;
  } finally {
    remote.close();
  }
};
`;

export const sizeOf = (bytes) => ({ raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });

/** The .js files an output folder holds, together: the entry `main.js` (what a page loads first), or the others (chunks loaded on demand). */
function jsUnder(dir, which = 'all') {
  const parts = readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.js'))
    .filter((f) => which === 'all' || (which === 'entry') === (String(f) === 'main.js'))
    .map((f) => readFileSync(join(dir, String(f))));
  return Buffer.concat(parts);
}

/** An app folder whose node_modules/webffi is `tree`, with one entry file. */
function app(tree, name, code) {
  const dir = join(workDir(), name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(tree, join(dir, 'node_modules', 'webffi'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "private": true, "type": "module" }\n');
  writeFileSync(join(dir, 'main.js'), code);
  return dir;
}

async function withEsbuild(dir, { splitting = false } = {}) {
  const { build } = await import('esbuild');
  const out = join(dir, splitting ? 'out-esbuild-split' : 'out-esbuild');
  const { metafile } = await build({
    absWorkingDir: dir, entryPoints: ['main.js'], bundle: true, minify: true, format: 'esm', splitting,
    platform: 'browser', outdir: out, loader: { '.wasm': 'file' }, logLevel: 'silent', metafile: true,
  });
  if (!splitting) return sizeOf(jsUnder(out));
  // what the page loads first: the entry and the chunks it imports statically; the rest loads on demand
  const js = Object.keys(metafile.outputs).filter((f) => f.endsWith('.js'));
  const first = new Set();
  const visit = (f) => {
    if (first.has(f)) return;
    first.add(f);
    for (const i of metafile.outputs[f].imports) if (i.kind === 'import-statement' && i.path.endsWith('.js')) visit(i.path);
  };
  visit(js.find((f) => metafile.outputs[f].entryPoint));
  const read = (files) => Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
  const later = js.filter((f) => !first.has(f));
  return { ...sizeOf(read([...first])), chunks: later.length ? sizeOf(read(later)) : null };
}

async function withWebpack(dir) {
  const { default: webpack } = await import('webpack');
  const out = join(dir, 'out-webpack');
  const stats = await new Promise((ok, fail) => {
    webpack({
      mode: 'production', context: dir, entry: './main.js', output: { path: out, filename: 'main.js' },
      performance: { hints: false },
    }, (err, s) => (err ? fail(err) : ok(s)));
  });
  if (stats.hasErrors()) throw new Error(stats.toString('errors-only'));
  const chunks = jsUnder(out, 'chunks');
  return { ...sizeOf(jsUnder(out, 'entry')), chunks: chunks.length ? sizeOf(chunks) : null };
}

/** The JavaScript esbuild emits (minified, ESM) for page `code` importing webffi from `tree`: { raw, gzip }. */
export async function esbuildPage(tree, code, name = 'page') {
  return withEsbuild(app(tree, `${name}-${Math.random().toString(36).slice(2)}`, code));
}

/** The rows for one tree: name -> { raw, gzip } (null: not there). */
async function measure(tree, tag) {
  const rows = {};
  const iife = join(tree, 'dist/webffi.iife.js');
  rows['script tag: dist/webffi.iife.js'] = existsSync(iife) ? sizeOf(readFileSync(iife)) : null;
  for (const part of ['rpc', 'webgpu', 'models']) {
    const f = join(tree, `dist/webffi.${part}.js`);
    rows[`script part, on first use: dist/webffi.${part}.js`] = existsSync(f) ? sizeOf(readFileSync(f)) : null;
  }
  const pkg = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8'));
  const hasClient = Boolean(pkg.exports?.['./client']);
  for (const [bundler, run] of [['esbuild', withEsbuild], ['webpack', withWebpack]]) {
    rows[`worker page, ${bundler}, from 'webffi'`] = await run(app(tree, `${tag}-${bundler}-full`, page('webffi')));
    rows[`worker page, ${bundler}, from 'webffi/client'`] = hasClient
      ? await run(app(tree, `${tag}-${bundler}-client`, page('webffi/client'))) : null;
  }
  const split = (dir) => withEsbuild(dir, { splitting: true });
  for (const [bundler, run] of [['esbuild', withEsbuild], ['esbuild --splitting', split], ['webpack', withWebpack]]) {
    rows[`one-function page, ${bundler}, from 'webffi'`] = await run(app(tree, `${tag}-${bundler}-one`, oneFunctionPage('webffi')));
  }
  // webpack and esbuild --splitting split at dynamic imports (the WebGPU backend and a TVM library's glue, fetched when needed)
  for (const [name, m] of Object.entries(rows)) {
    if (m?.chunks) rows[`${name}: its chunks, loaded on demand`] = m.chunks;
  }
  return rows;
}

if (isMain) await main();

async function main() {
  const base = process.argv[2] ? resolve(process.argv[2]) : null;
  const kb = (n) => `${(n / 1000).toFixed(1)} KB`; // KB of 1,000 bytes, as the docs
  const mine = await measure(here, 'this');
  const theirs = base ? await measure(base, 'base') : null;
  console.log(`${'what'.padEnd(52)} ${'this tree'.padStart(20)}${theirs ? `${'base'.padStart(20)} ${'ratio (gzip)'.padStart(12)}` : ''}`);
  for (const [name, m] of Object.entries(mine)) {
    const cell = (s) => (s ? `${kb(s.raw)} / ${kb(s.gzip)}` : 'n/a').padStart(20);
    let line = `${name.padEnd(52)} ${cell(m)}`;
    if (theirs) {
      // against the base's same row, or (no client entry there) its import of 'webffi'
      const b = theirs[name] ?? theirs[name.replace("'webffi/client'", "'webffi'")];
      line += `${cell(theirs[name])} ${(m && b ? `${(m.gzip / b.gzip).toFixed(2)}x` : 'n/a').padStart(12)}`;
    }
    console.log(line);
  }
  console.log('(raw / gzip -9; ratio: this tree / base, a client row against the base\'s import of \'webffi\')');
}
