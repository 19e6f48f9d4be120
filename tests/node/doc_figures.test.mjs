// Every size README.md and docs/ state of what the package builds, against
// the built thing: the files in dist/ (raw and gzip -9) and the pages
// bench/bundle_size.mjs bundles with esbuild. A figure more than 2% off
// fails, naming the doc, what it measures and the size it is now. Sizes in
// KB are KB of 1,000 bytes, as the docs say. After a change that moves a
// size, WEBFFI_WRITE_FIGURES=1 writes the built sizes into the docs (each
// figure keeps its form: its decimals, or bytes with commas):
//   WEBFFI_WRITE_FIGURES=1 node --test tests/node/doc_figures.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { esbuildPage, page, oneFunctionPage } from '../../bench/bundle_size.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TOLERANCE = 0.02;

const file = (path) => {
  const bytes = readFileSync(`${root}${path}`);
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
};
const pages = new Map();
const bundled = (name, code) => {
  if (!pages.has(name)) pages.set(name, esbuildPage(root, code, name));
  return pages.get(name);
};
const wasm = () => file('dist/webffi.wasm');
const iife = () => file('dist/webffi.iife.js');
const rpcPart = () => file('dist/webffi.rpc.js');
const gpuPart = () => file('dist/webffi.webgpu.js');
const modelsPart = () => file('dist/webffi.models.js');
const clientPage = () => bundled('client', page('webffi/client'));
const workerPage = () => bundled('worker', page('webffi'));
const onePage = () => bundled('one', oneFunctionPage('webffi'));

/** The files of js/threads/ together (sorted by name). */
const threadsJS = () => {
  const dir = `${root}js/threads/`;
  const bytes = Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.js')).sort().map((f) => readFileSync(dir + f)));
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
};

const KB = (x) => Number(x) * 1000;
const bytes = (x) => Number(x.replaceAll(',', ''));
/**
 * Each statement: the doc, a pattern that finds it (exactly once) and
 * captures its figures, and for each figure [what it is, how to read it,
 * what it is now].
 */
const FIGURES = [
  ['README.md', /\| wasm, gzipped \(TVM: 2026-12-01; webffi: `dist\/webffi\.wasm` as built\) \| 1,286 KB \| ([\d.]+) KB \| ([\d.]+)x smaller \|/,
    [['dist/webffi.wasm gzipped', KB, async () => (await wasm()).gzip],
      ['TVM\'s 1,286 KB over it', Number, async () => 1286e3 / (await wasm()).gzip]]],
  ['README.md', /a page that only talks to a worker \(`webffi\/client`, esbuild, minified\) \| ([\d.]+) KB, ([\d.]+) KB gzipped/,
    [['the client page', KB, async () => (await clientPage()).raw], ['the client page gzipped', KB, async () => (await clientPage()).gzip]]],
  ['README.md', /the script-tag bundle, `dist\/webffi\.iife\.js`.*?\| ([\d.]+) KB, ([\d.]+) KB gzipped; ([\d.]+) KB, ([\d.]+) KB; ([\d.]+) KB, ([\d.]+) KB; ([\d.]+) KB, ([\d.]+) KB \|/,
    [['dist/webffi.iife.js', KB, async () => iife().raw], ['dist/webffi.iife.js gzipped', KB, async () => iife().gzip],
      ['dist/webffi.rpc.js', KB, async () => rpcPart().raw], ['dist/webffi.rpc.js gzipped', KB, async () => rpcPart().gzip],
      ['dist/webffi.webgpu.js', KB, async () => gpuPart().raw], ['dist/webffi.webgpu.js gzipped', KB, async () => gpuPart().gzip],
      ['dist/webffi.models.js', KB, async () => modelsPart().raw], ['dist/webffi.models.js gzipped', KB, async () => modelsPart().gzip]]],
  ['README.md', /`dist\/webffi\.wasm` is ([\d.]+) KB, ([\d.]+) KB\s+with `gzip -9`/,
    [['dist/webffi.wasm', KB, async () => wasm().raw], ['dist/webffi.wasm gzipped', KB, async () => wasm().gzip]]],
  ['README.md', /the threaded core, `dist\/webffi-mt\.wasm`.*?\| ([\d.]+) KB, ([\d.]+) KB gzipped; ([\d.]+) KB, ([\d.]+) KB gzipped;/,
    [['dist/webffi-mt.wasm', KB, async () => file('dist/webffi-mt.wasm').raw],
      ['dist/webffi-mt.wasm gzipped', KB, async () => file('dist/webffi-mt.wasm').gzip],
      ['js/threads/, its files together', KB, async () => threadsJS().raw], ['js/threads/ gzipped', KB, async () => threadsJS().gzip]]],
  ['docs/performance.md', /\| wasm, gzipped \(TVM: 2026-12-01; webffi: `dist\/webffi\.wasm` as built\) \| 1,286 KB \| ([\d.]+) KB \| ([\d.]+)x smaller \|/,
    [['dist/webffi.wasm gzipped', KB, async () => wasm().gzip], ['TVM\'s 1,286 KB over it', Number, async () => 1286e3 / wasm().gzip]]],
  ['docs/performance.md', /`dist\/webffi\.wasm` as built,\s+([\d.]+) KB, ([\d.]+) KB with `gzip -9`/,
    [['dist/webffi.wasm', KB, async () => wasm().raw], ['dist/webffi.wasm gzipped', KB, async () => wasm().gzip]]],
  ['docs/performance.md', /`dist\/webffi_testing\.wasm`, ([\d.]+) KB\), ([\d.]+)x smaller than the TVM/,
    [['dist/webffi_testing.wasm', KB, async () => file('dist/webffi_testing.wasm').raw],
      ['TVM\'s 1,286 KB over the gzipped wasm', Number, async () => 1286e3 / wasm().gzip]]],
  ['docs/workers.md', /\| esbuild, `from 'webffi'` \| ([\d.]+) KB \/ ([\d.]+) KB \|/,
    [['the worker page from \'webffi\'', KB, async () => (await workerPage()).raw],
      ['the worker page from \'webffi\' gzipped', KB, async () => (await workerPage()).gzip]]],
  ['docs/workers.md', /\| esbuild, `from 'webffi\/client'` \| ([\d.]+) KB \/ ([\d.]+) KB \|/,
    [['the client page', KB, async () => (await clientPage()).raw], ['the client page gzipped', KB, async () => (await clientPage()).gzip]]],
  ['docs/workers.md', /`<script src="\.\.\.\/dist\/webffi\.iife\.js">`[^|]*\| ([\d.]+) KB \/ ([\d.]+) KB \|/,
    [['dist/webffi.iife.js', KB, async () => iife().raw], ['dist/webffi.iife.js gzipped', KB, async () => iife().gzip]]],
  ['docs/bundlers.md', /one function \(`load\(\)`, then one global\) bundles\s+with esbuild, minified: ([\d.]+) KB, ([\d.]+) KB gzipped/,
    [['the one-function page', KB, async () => (await onePage()).raw], ['the one-function page gzipped', KB, async () => (await onePage()).gzip]]],
  ['docs/bundlers.md', /with what `'webffi'` exports: ([\d.]+) KB, ([\d.]+) KB gzipped/,
    [['dist/webffi.iife.js', KB, async () => iife().raw], ['dist/webffi.iife.js gzipped', KB, async () => iife().gzip]]],
  ['docs/bundlers.md', /`dist\/webffi\.rpc\.js`, TVM RPC \(([\d.]+) KB, ([\d.]+) KB gzipped\)/,
    [['dist/webffi.rpc.js', KB, async () => rpcPart().raw], ['dist/webffi.rpc.js gzipped', KB, async () => rpcPart().gzip]]],
  ['docs/bundlers.md', /`dist\/webffi\.webgpu\.js`, the WebGPU backend \(([\d.]+) KB, ([\d.]+) KB gzipped\)/,
    [['dist/webffi.webgpu.js', KB, async () => gpuPart().raw], ['dist/webffi.webgpu.js gzipped', KB, async () => gpuPart().gzip]]],
  ['docs/bundlers.md', /model library, \[model-libraries\.md\]\(model-libraries\.md\); ([\d.]+) KB,\s+([\d.]+) KB gzipped\)/,
    [['dist/webffi.models.js', KB, async () => modelsPart().raw], ['dist/webffi.models.js gzipped', KB, async () => modelsPart().gzip]]],
  ['docs/debugging.md', /\| `dist\/webffi\.wasm` \/ `dist\/webffi\.lines`[^|]*\| ([\d,]+) \/ ([\d,]+) \| ([\d,]+) \/ ([\d,]+) \|/,
    [['dist/webffi.wasm', bytes, async () => wasm().raw], ['dist/webffi.lines', bytes, async () => file('dist/webffi.lines').raw],
      ['dist/webffi.wasm gzipped', bytes, async () => wasm().gzip], ['dist/webffi.lines gzipped', bytes, async () => file('dist/webffi.lines').gzip]]],
  ['docs/c-and-cpp.md', /the runtime, `dist\/webffi\.wasm`,\s+is ([\d.]+) KB/,
    [['dist/webffi.wasm gzipped', KB, async () => wasm().gzip]]],
];

/** `now` written as `stated` is (its decimals; bytes with commas). */
function format(stated, read, now) {
  if (read === bytes) return Math.round(now).toLocaleString('en-US');
  const decimals = stated.split('.')[1]?.length ?? 0;
  return (read === KB ? now / 1000 : now).toFixed(decimals);
}

test('every size the docs state of what the package builds is the built size, within 2%', async () => {
  const wrong = [];
  const write = process.env.WEBFFI_WRITE_FIGURES === '1';
  for (const [doc, pattern, figures] of FIGURES) {
    let text = readFileSync(`${root}${doc}`, 'utf8');
    const found = [...text.matchAll(new RegExp(pattern.source, 'gd'))];
    assert.equal(found.length, 1, `${doc}: ${pattern} should find one statement, found ${found.length}`);
    const edits = [];
    for (const [i, [what, read, measure]] of figures.entries()) {
      const stated = found[0][i + 1];
      const now = await measure();
      if (Math.abs(read(stated) - now) <= TOLERANCE * now) continue;
      if (write) edits.push([found[0].indices[i + 1], format(stated, read, now)]);
      else wrong.push(`${doc}: ${what} is stated as ${stated}, built ${now}`);
    }
    for (const [[from, to], figure] of edits.reverse()) text = text.slice(0, from) + figure + text.slice(to);
    if (edits.length) writeFileSync(`${root}${doc}`, text);
  }
  assert.deepEqual(wrong, []);
});

test('the script bundle is at most 200 KB, and each part of it is a file the package ships', () => {
  assert.ok(statSync(`${root}dist/webffi.iife.js`).size <= 200e3, `dist/webffi.iife.js is ${statSync(`${root}dist/webffi.iife.js`).size} bytes`);
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
  for (const part of ['rpc', 'webgpu', 'models']) {
    assert.ok(pkg.files.includes(`dist/webffi.${part}.js`), part);
    assert.equal(pkg.exports[`./script/${part}`], `./dist/webffi.${part}.js`);
  }
});

test('each row of README\'s table of further figures names its bench command and date, or is a size checked above', () => {
  const text = readFileSync(`${root}README.md`, 'utf8');
  const table = text.slice(text.indexOf('| what | figure |')).split(/\n\n/)[0].split('\n').slice(2);
  assert.ok(table.length >= 8, table.join('\n'));
  const unnamed = table.filter((row) => !(/\b20\d\d-\d\d-\d\d\b/.test(row) && /`(node )?bench\/[\w.]+\.(mjs|sh)/.test(row)) && !/ KB/.test(row));
  assert.deepEqual(unnamed, []);
});
