// Lays out dist/ for the package and browsers: the shipping wasm, the test
// fixtures as a module (dist/webffi_testing.wasm), the
// runtime as a static library for `webffi build` (with its stamp), the
// CommonJS entry (require) and a minified classic-script bundle (one
// global, `webffi`) that finds the wasm next to itself, and the hash of the sources
// they were built from (checked by `npm pack`).
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { relative, resolve, sep } from 'node:path';
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

// The script bundle (dist/webffi.iife.js, one global `webffi`) and its parts
// that load on first use, each a classic script next to it:
// dist/webffi.rpc.js (TVM RPC: js/bundle/rpc_lazy.js stands in for it) and
// dist/webffi.webgpu.js (the WebGPU backend, loaded where the host has
// WebGPU: js/bundle/webgpu_lazy.js) and dist/webffi.models.js (the core of
// a library TVM compiled, loaded when load() is given one:
// js/bundle/tvm_lazy.js). A part's imports of modules the bundle holds
// resolve to the bundle's own (js/bundle/chunks.js), so nothing is in both.
// The bundle swaps js/locate.js (import.meta.url) for its own.
export const PARTS = {
  rpc: `${root}js/bundle/rpc_part.js`,
  webgpu: `${root}js/backends/webgpu_runtime.js`,
  models: `${root}js/core/tvm_core.js`,
};
const SWAPS = [
  // [importer, what it imports, what the bundle uses instead]
  [/\/js\/index\.js$/, /\/rpc\/(client|tracker|server|endpoint)\.js$/, `${root}js/bundle/rpc_lazy.js`],
  [/./, /\/webgpu_module\.js$/, `${root}js/bundle/webgpu_lazy.js`],
  [/./, /\/tvm_module\.js$/, `${root}js/bundle/tvm_lazy.js`],
  [/./, /\/locate\.js$/, `${root}js/bundle/locate_script.js`],
];
const rel = (path) => relative(root, path).split(sep).join('/');

/** The bundle's plugin: the swaps, and the registry of modules its parts share (virtual `webffi:shared`). */
const scriptPlugin = (shared) => ({
  name: 'webffi-script',
  setup(b) {
    b.onResolve({ filter: /^webffi:shared$/ }, () => ({ path: 'shared', namespace: 'webffi-shared' }));
    b.onLoad({ filter: /.*/, namespace: 'webffi-shared' }, () => ({
      resolveDir: root,
      contents: `${shared.map((p, i) => `import * as m${i} from ${JSON.stringify(`${root}${p}`)};`).join('\n')}
export default { ${shared.map((p, i) => `${JSON.stringify(p)}: m${i}`).join(', ')} };\n`,
    }));
    b.onResolve({ filter: /\.js$/ }, (args) => {
      for (const [importer, what, instead] of SWAPS) {
        if (importer.test(args.importer) && what.test(args.path)) return { path: instead };
      }
      return undefined;
    });
  },
});

/** A part's plugin: modules the bundle holds stay outside it, as require('webffi-shared:js/...'). */
const partPlugin = (bundled) => ({
  name: 'webffi-part',
  setup(b) {
    b.onResolve({ filter: /\.js$/ }, async (args) => {
      if (args.pluginData?.inner) return undefined;
      const r = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: { inner: true } });
      if (r.errors.length) return r;
      const path = rel(r.path);
      if (bundled?.has(path) && !Object.values(PARTS).includes(r.path)) return { path: `webffi-shared:${path}`, external: true };
      return { path: r.path };
    });
  },
});

// Minified for the page that downloads it (keepNames: class and function
// names stay what messages and devtools show), with a linked source map
// that only devtools fetch.
const common = {
  bundle: true, target: 'es2022', logLevel: 'warning', legalComments: 'none', minify: true, keepNames: true,
  platform: 'browser', metafile: true,
};
const inputsOf = (r) => new Set(Object.keys(r.metafile.inputs).filter((p) => !p.includes(':')).map((p) => rel(resolve(root, p))));
// What each part needs, and what the bundle holds without them: the
// modules shared are those in both.
const partInputs = {};
for (const [name, entry] of Object.entries(PARTS)) {
  partInputs[name] = inputsOf(await build({ ...common, entryPoints: [entry], format: 'esm', write: false, plugins: [partPlugin(null)], logLevel: 'silent', outdir: `${root}dist` }));
}
const alone = inputsOf(await build({
  ...common, entryPoints: [`${root}js/bundle/script.js`], format: 'iife', globalName: 'webffi', write: false,
  outfile: `${root}dist/webffi.iife.js`, plugins: [scriptPlugin([])], logLevel: 'silent',
}));
const shared = [...new Set(Object.values(partInputs).flatMap((s) => [...s].filter((p) => alone.has(p))))].sort();
await build({
  ...common, entryPoints: [`${root}js/bundle/script.js`], format: 'iife', globalName: 'webffi', sourcemap: 'linked',
  outfile: `${root}dist/webffi.iife.js`, plugins: [scriptPlugin(shared)],
});
for (const name of Object.keys(PARTS)) {
  await build({
    ...common, entryPoints: [PARTS[name]], format: 'cjs', sourcemap: 'linked', outfile: `${root}dist/webffi.${name}.js`,
    plugins: [partPlugin(alone)],
    banner: { js: `(globalThis[Symbol.for("webffi.part")]||function(){throw new Error("webffi: dist/webffi.${name}.js is a part of dist/webffi.iife.js, which loads it")})(${JSON.stringify(name)},function(require,module,exports){` },
    footer: { js: '});' },
  });
}
writeFileSync(`${root}${HASH_FILE}`, `${sourceHash(root)}\n`);
