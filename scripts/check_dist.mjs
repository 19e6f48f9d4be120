// Run by `npm pack` (prepack), in the package root: the package ships dist/,
// which the build generates. Refuses a dist/ that is missing, or that was
// built from other sources than the ones being packed (its recorded source
// hash differs).
import { existsSync, readFileSync } from 'node:fs';
import { ARCHIVE, STAMP, THREADED_ARCHIVE } from '../bin/prebuilt_runtime.mjs';
import { HASH_FILE, sourceHash } from './source_hash.mjs';

const root = process.cwd();
const fail = (why) => {
  console.error(`npm pack: ${why}; run \`npm run build\` (or \`npm test\`) first`);
  process.exit(1);
};
const missing = ['dist/webffi.wasm', 'dist/webffi.lines', ARCHIVE, STAMP, 'dist/webffi.cjs', 'dist/webffi.iife.js',
  'dist/webffi.rpc.js', 'dist/webffi.webgpu.js', 'dist/webffi.models.js',
  'dist/webffi-mt.wasm', THREADED_ARCHIVE, HASH_FILE]
  .filter((f) => !existsSync(f));
if (missing.length) fail(`${missing.join(', ')} missing`);
const recorded = readFileSync(HASH_FILE, 'utf8').trim();
if (recorded !== sourceHash(root)) {
  fail('dist/ is stale: it was built from other sources than the js/, src/, include/, cmake/ and CMakeLists.txt here');
}
