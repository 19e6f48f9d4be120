// The API reference that the build generates from js/index.d.ts (typedoc,
// typedoc.json; build/api/) has every public export and no broken link:
// each relative href/src names a file that exists, and each #fragment an
// id in that file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as webffi from '../../js/index.js';

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
