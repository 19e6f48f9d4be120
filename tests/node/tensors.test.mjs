// Tensors on real WebGPU in Node: Dawn (npm `webgpu`, discovered at load)
// on Mesa llvmpipe. The cases are shared with Chromium
// (tests/browser/tensors.test.mjs).
import { test, after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { load } from '../../js/index.js';
import { tensorCases } from '../support/tensor_cases.mjs';
import { loadTesting } from '../support/testing_module.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const rt = await loadTesting(await load({ logger: { log() {}, warn: (m) => console.log(m) } }));
after(() => rt.backends.get('webgpu')?.engine?.dispose());
for (const [name, fn] of Object.entries(tensorCases(rt, { addOneModule: `${root}build/wasm/tests/modules/add_one.wasm` }))) {
  test(name, fn);
}
