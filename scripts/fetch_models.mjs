// Downloads the MLC model libraries the tests and benchmarks run (web-llm's
// snowflake-arctic-embed -s and -m, as MLC publishes them) into
// WEBFFI_MODELS or ../shared/models, checking each file's sha256; files
// already there with the right hash are kept.
// Run: node scripts/fetch_models.mjs
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MODELS_DIR } from '../tests/support/model_fixture.mjs';

const SOURCE = 'https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/9ee759c/web-llm-models/v0_2_80/';
const LIBRARIES = {
  'snowflake-arctic-embed-s-q0f32-ctx512_cs512_batch4-webgpu.wasm': 'a7bc8e46a7abe947ccd3cdd0df8c9f473eb638975e2122ec3ace9796d0a6d5db',
  'snowflake-arctic-embed-m-q0f32-ctx512_cs512_batch4-webgpu.wasm': '0e0e1dc486f9478c4b6aa5ed6bdb7a2fdd9ffe177d0b7fb0ddaa415f5cb20a74',
};

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

fs.mkdirSync(MODELS_DIR, { recursive: true });
for (const [name, expected] of Object.entries(LIBRARIES)) {
  const file = path.join(MODELS_DIR, name);
  if (fs.existsSync(file) && sha256(fs.readFileSync(file)) === expected) {
    console.log(`${name}: present`);
    continue;
  }
  const response = await fetch(SOURCE + name);
  if (!response.ok) throw new Error(`${SOURCE + name}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const got = sha256(bytes);
  if (got !== expected) throw new Error(`${name}: sha256 ${got}, expected ${expected}; not written`);
  fs.writeFileSync(file, bytes);
  console.log(`${name}: downloaded (${bytes.length} bytes, sha256 checked)`);
}
