// Run by `npm pack`: the package ships dist/, which the build generates.
import { existsSync } from 'node:fs';

const missing = ['dist/webffi.wasm', 'dist/webffi.cjs', 'dist/webffi.iife.js'].filter((f) => !existsSync(f));
if (missing.length) {
  console.error(`npm pack: ${missing.join(', ')} missing; run \`npm run build\` (or \`npm test\`) first`);
  process.exit(1);
}
