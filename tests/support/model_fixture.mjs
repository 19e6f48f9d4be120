// Model libraries for the tests: where they are (WEBFFI_MODELS or
// ../shared/models beside the repository), and the tensor caches of
// model_weights.mjs written to disk.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export { seeded, makeTensorCache, makeInputs } from './model_weights.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MODELS_DIR = process.env.WEBFFI_MODELS ?? path.resolve(root, '../shared/models');
export const ARCTIC_S = 'snowflake-arctic-embed-s-q0f32-ctx512_cs512_batch4-webgpu.wasm';
export const ARCTIC_M = 'snowflake-arctic-embed-m-q0f32-ctx512_cs512_batch4-webgpu.wasm';

/** The path of a model library; a missing one fails (never skips) with how to get it. */
export function modelPath(name) {
  const p = path.join(MODELS_DIR, name);
  if (!fs.existsSync(p)) {
    throw new Error(`model library ${p} is missing: run \`npx webffi model fetch --lib ${name} --out ${MODELS_DIR}\` (or set WEBFFI_MODELS to a folder that has it)`);
  }
  return p;
}

/** The parameters a library's `_metadata` lists (read through webffi on the CPU: no GPU needed). */
export async function libraryParams(file) {
  const { load } = await import('../../js/index.js');
  const { libraryParams: paramsOf } = await import('../../js/model_library.js');
  const rt = await load({ wasm: file, autoloadBackends: false, logger: { log() {}, warn() {} } });
  try {
    return paramsOf(rt);
  } finally {
    rt.dispose();
  }
}

/** Writes a tensor cache made by makeTensorCache into dir; returns dir. */
export function writeTensorCache(dir, { index, shards }) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tensor-cache.json'), JSON.stringify(index));
  for (const [name, bytes] of Object.entries(shards)) fs.writeFileSync(path.join(dir, name), bytes);
  return dir;
}

