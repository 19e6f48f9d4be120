// User C modules linked into the runtime and loaded at run time, in Node
// (the scenarios are shared with the browser test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { scenarios } from '../support/module_scenarios.mjs';
import { rawRuntime } from '../support/raw_runtime.mjs';
import { moduleLoader, ModuleLoadError } from '../../js/dylink.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const modules = `${root}build/wasm/tests/modules`;
const env = {
  runtimeBytes: readFileSync(`${root}build/wasm/webffi.wasm`),
  systemLibBytes: readFileSync(`${modules}/add_one_system_lib.wasm`),
  moduleSource: (name) => `${modules}/${name}.wasm`,
  moduleBytes: (name) => readFile(`${modules}/${name}.wasm`),
  readsFiles: true,
};

for (const [name, scenario] of Object.entries(scenarios)) {
  test(name, () => scenario(env));
}

test('a runtime built without the dynamic-linking exports refuses clearly', async () => {
  const wasi = await rawRuntime(readFileSync(`${root}build/wasi/webffi.wasm`));
  assert.throws(() => moduleLoader(wasi.exports), (e) => e instanceof ModuleLoadError &&
    e.kind === 'RuntimeError' &&
    /^this runtime cannot load modules: it does not export __indirect_function_table, __stack_pointer \(/.test(e.message));
});
