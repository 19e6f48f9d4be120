// The API reference that the build generates from the hand-written .d.ts
// entry points (typedoc, typedoc.json; build/api/): every declaration has a
// description and every export an example (tests/node/api_examples.test.mjs
// runs them), every runtime export of each entry point is declared and has
// a page, each `webgpu.*` kernel is documented with the signature it is
// registered with, the pages are grouped, and no link is broken: each
// relative href/src names a file that exists, and each #fragment an id in
// that file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as webffi from '../../js/index.js';
import { API_ENTRY_POINTS, KERNEL_GLOBALS, apiDeclarations, documentedDeclarations, examplesOf, isHidden, memberDeclarations } from '../support/api_examples.mjs';
import { KERNELS } from '../../js/backends/webgpu/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const typedoc = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const api = fileURLToPath(new URL('../../build/api/', import.meta.url));

function htmlFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? htmlFiles(join(dir, e.name)) : e.name.endsWith('.html') ? [join(dir, e.name)] : []);
}

const ids = new Map();
function idsOf(file) {
  if (!ids.has(file)) ids.set(file, new Set([...readFileSync(file, 'utf8').matchAll(/\sid="([^"]+)"/g)].map((m) => m[1])));
  return ids.get(file);
}

test('the API reference is built and its links resolve', () => {
  assert.ok(existsSync(join(api, 'index.html')), 'build/api/index.html: run scripts/build.sh');
  const files = htmlFiles(api);
  const broken = [];
  let links = 0;
  for (const file of files) {
    for (const [, target] of readFileSync(file, 'utf8').matchAll(/\s(?:href|src)="([^"]+)"/g)) {
      if (/^(?:[a-z]+:|\/\/)/i.test(target)) continue; // external
      links += 1;
      const [path, fragment] = target.split('#');
      const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
      if (!existsSync(resolved)) broken.push(`${relative(api, file)} -> ${target}`);
      else if (fragment && resolved.endsWith('.html') && !idsOf(resolved).has(decodeURIComponent(fragment))) {
        broken.push(`${relative(api, file)} -> ${target} (no such id)`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(links > 100, `only ${links} links checked`);
});

test('the API reference documents every runtime export of the package', () => {
  const text = htmlFiles(api).map((f) => relative(api, f)).join('\n');
  const missing = Object.keys(webffi).filter((name) => !new RegExp(`\\b${name}\\.html$`, 'm').test(text));
  assert.deepEqual(missing, []);
});

test('every declaration of the reference has a description, and every export an example', () => {
  const shown = documentedDeclarations().filter((d) => !isHidden(d));
  assert.ok(shown.length > 150, `only ${shown.length} declarations`);
  const where = (d) => `${d.file}:${d.line} ${d.name}`;
  assert.deepEqual(shown.filter((d) => !d.doc?.summary).map(where), [], 'no description');
  assert.deepEqual(shown.filter((d) => d.exported && examplesOf(d).length === 0).map(where), [], 'no @example');
  // each entry point has a module comment (its page's text) naming the module
  assert.deepEqual(API_ENTRY_POINTS.filter((f) => apiDeclarations(f)[0].doc === null), [], 'no @module comment');
});

test('every runtime export of each entry point is declared in its .d.ts and has a page', async () => {
  const pages = htmlFiles(api).map((f) => relative(api, f)).join('\n');
  for (const file of API_ENTRY_POINTS) {
    const module = await import(join(root, file.replace(/\.d\.ts$/, '.js')));
    const declared = new Set(apiDeclarations(file).flatMap((d) => d.name.split(', ')));
    const reexported = readFileSync(join(root, file), 'utf8').includes('} from \'./index.js\';'); // webffi/client
    const missing = Object.keys(module).filter((name) => !declared.has(name) && !(reexported && name in webffi));
    assert.deepEqual(missing, [], `${file}: exports without a declaration`);
    const noPage = Object.keys(module).filter((name) => !new RegExp(`\\.${name}\\.html$`, 'm').test(pages));
    assert.deepEqual(noPage, [], `${file}: exports without a page`);
  }
});

test('the package\'s type entry points are the reference\'s', () => {
  const types = [pkg.types, pkg.exports['.'].types, pkg.exports['./client'].types].map((t) => t.replace(/^\.\//, ''));
  assert.deepEqual(types.filter((t) => !API_ENTRY_POINTS.includes(t)), []);
  // a module under js/ with declarations of its own and public exports is an entry point (not internal ones)
  const internal = ['js/dylink.d.ts', 'js/globals.d.ts', 'js/rpc/transport.d.ts'];
  const all = readdirSync(join(root, 'js'), { recursive: true }).map((f) => `js/${f}`).filter((f) => f.endsWith('.d.ts'));
  assert.deepEqual(all.filter((f) => !API_ENTRY_POINTS.includes(f) && !internal.includes(f)), []);
});

test('each webgpu.* kernel is documented with the signature the runtime registers it with', () => {
  const members = memberDeclarations(KERNEL_GLOBALS.file, KERNEL_GLOBALS.name);
  assert.deepEqual(members.map((m) => m.name), KERNELS.map((k) => k.name));
  for (const k of KERNELS) {
    const m = members.find((x) => x.name === k.name);
    const params = m.node.type.parameters.map((p) => `${p.name.getText()}${p.questionToken ? '?' : ''}`);
    assert.deepEqual(params, k.args.map((a) => `${a.name}${a.type.startsWith('Optional') ? '?' : ''}`), k.name);
    assert.equal(examplesOf(m).length, 1, `${k.name}: one example`);
  }
  // and the reference shows every one of them
  const page = readFileSync(join(api, 'interfaces', 'webffi_js_backends_webgpu.WebGPUGlobals.html'), 'utf8');
  assert.deepEqual(KERNELS.filter((k) => !page.includes(`id="${k.name.replace('.', '').toLowerCase()}"`)).map((k) => k.name), []);
});

test('the reference has its landing page, its documents and grouped pages; each error class is listed once', () => {
  assert.equal(typedoc.readme, 'docs/api.md');
  const index = readFileSync(join(api, 'index.html'), 'utf8');
  assert.match(index, /webffi API reference/);
  for (const doc of typedoc.projectDocuments) {
    assert.ok(existsSync(join(api, 'documents', doc.replace(/^docs\//, '').replace(/\.md$/, '.html'))), doc);
  }
  // the main module's page lists its exports under the groups, in their order
  const page = readFileSync(join(api, 'modules', 'webffi.html'), 'utf8');
  const headings = [...page.matchAll(/<h2[^>]*>(?:<[^>]+>)*([^<]+)</g)].map((m) => m[1].trim());
  const groups = typedoc.groupOrder.filter((g) => headings.includes(g));
  assert.deepEqual(groups, ['Runtime', 'Values', 'Objects', 'Tensors', 'Backends', 'Errors', 'By value', 'Workers', 'Remote objects', 'TVM RPC', 'Host types']);
  assert.deepEqual(headings.filter((h) => /^(Functions|Classes|Variables|Interfaces|Type Aliases)$/.test(h)), [], 'ungrouped exports');
  // an error class is one page (the class), not also a type alias
  const errorNames = Object.keys(webffi).filter((n) => /Error$/.test(n));
  assert.deepEqual(errorNames.filter((n) => existsSync(join(api, 'types', `webffi.${n}.html`))), []);
  assert.ok(errorNames.length >= 17);
});
