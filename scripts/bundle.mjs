// Lays out dist/ for the package and browsers: the shipping wasm, the test
// fixtures as a module (dist/webffi_testing.wasm), the
// runtime as a static library for `webffi build` (with its stamp), the
// CommonJS entry (require) and a minified classic-script bundle (one
// global, `webffi`) that finds the wasm next to itself, and the hash of the sources
// they were built from (checked by `npm pack`).
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ARCHIVE, emscriptenVersion, writeStamp } from '../bin/prebuilt_runtime.mjs';
import { HASH_FILE, sourceHash } from './source_hash.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
mkdirSync(`${root}dist`, { recursive: true });
copyFileSync(`${root}build/wasm/webffi.wasm`, `${root}dist/webffi.wasm`);
// its line table, for load({ debugInfo }) (scripts/split_debug.mjs)
copyFileSync(`${root}build/wasm/webffi.lines`, `${root}dist/webffi.lines`);
// The test fixtures (testing.*) as a module of their own, loaded on demand
// (rt.loadModule): the runtime above has none of them.
copyFileSync(`${root}build/wasm/webffi_testing.wasm`, `${root}dist/webffi_testing.wasm`);
copyFileSync(`${root}build/wasm/webffi_testing-mt.wasm`, `${root}dist/webffi_testing-mt.wasm`);
// The threaded core (load({ threads })) and its archive (`webffi build --threads`).
copyFileSync(`${root}build/wasm/webffi-mt.wasm`, `${root}dist/webffi-mt.wasm`);
copyFileSync(`${root}build/wasm/libwebffi-mt.a`, `${root}dist/libwebffi-mt.a`);
// the archive build/wasm made, by the Emscripten on PATH (the one the build used)
copyFileSync(`${root}build/wasm/libwebffi.a`, `${root}${ARCHIVE}`);
const { version } = emscriptenVersion();
if (!version) throw new Error('bundle: cannot tell the Emscripten version that built build/wasm');
writeStamp(root, version);

// require('webffi') loads the ES module graph itself (Node's require of ES
// modules, 20.19+), so an app that both imports and requires webffi has one
// copy of its classes and registries. No bundle: a wrapper.
writeFileSync(`${root}dist/webffi.cjs`, `'use strict';
// require('webffi'): the package's ES modules themselves, so that import and
// require share one copy of the library (its error classes and registries).
try {
  module.exports = require('../js/index.js');
} catch (e) {
  if (e && e.code === 'ERR_REQUIRE_ESM') {
    throw new Error('webffi: require(\\'webffi\\') needs Node 20.19+ or 22.12+ (require of ES modules); ' +
      'upgrade Node, or use import(\\'webffi\\') (' + e.message + ')');
  }
  throw e;
}
`);

// The script bundle swaps js/locate.js (import.meta.url) for its own.
const locateScript = {
  name: 'locate',
  setup(b) {
    b.onResolve({ filter: /\/locate\.js$/ }, () => ({ path: `${root}js/bundle/locate_script.js` }));
  },
};
// Minified for the page that downloads it (keepNames: class and function
// names stay what messages and devtools show), with a linked source map
// that only devtools fetch.
await build({
  entryPoints: [`${root}js/index.js`],
  bundle: true,
  target: 'es2022',
  logLevel: 'warning',
  legalComments: 'none',
  minify: true,
  keepNames: true,
  sourcemap: 'linked',
  format: 'iife',
  platform: 'browser',
  globalName: 'webffi',
  outfile: `${root}dist/webffi.iife.js`,
  plugins: [locateScript],
});
writeFileSync(`${root}${HASH_FILE}`, `${sourceHash(root)}\n`);
