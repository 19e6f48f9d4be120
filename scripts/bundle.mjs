// Lays out dist/ for the package and browsers: the shipping wasm, a CommonJS
// bundle (require) and a classic-script bundle (one global, `webffi`), each
// finding the wasm next to itself.
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
mkdirSync(`${root}dist`, { recursive: true });
copyFileSync(`${root}build/wasm/webffi.wasm`, `${root}dist/webffi.wasm`);

/** Swaps js/locate.js (which uses import.meta.url) for a bundle's own. */
const locateWith = (file) => ({
  name: 'locate',
  setup(b) {
    b.onResolve({ filter: /\/locate\.js$/ }, () => ({ path: `${root}js/bundle/${file}` }));
  },
});

const common = {
  entryPoints: [`${root}js/index.js`],
  bundle: true,
  target: 'es2022',
  external: ['node:*'],
  logLevel: 'warning',
  legalComments: 'none',
};
await build({
  ...common,
  format: 'cjs',
  platform: 'node',
  outfile: `${root}dist/webffi.cjs`,
  plugins: [locateWith('locate_cjs.js')],
});
await build({
  ...common,
  format: 'iife',
  platform: 'browser',
  globalName: 'webffi',
  outfile: `${root}dist/webffi.iife.js`,
  plugins: [locateWith('locate_script.js')],
});
