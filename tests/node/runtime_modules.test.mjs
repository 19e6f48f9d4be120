// C modules loaded at run time through the JS API, in Node.
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import * as webffi from '../../js/index.js';
import { moduleTests } from '../support/runtime_module_suite.mjs';
import { loadTesting } from '../support/testing_module.mjs';

const dir = new URL('../../build/wasm/tests/modules/', import.meta.url);
const env = {
  rt: await loadTesting(await webffi.load()),
  webffi,
  source: (name) => new URL(`${name}.wasm`, dir),
  bytes: (name) => readFileSync(new URL(`${name}.wasm`, dir)),
};
for (const [name, fn] of Object.entries(moduleTests)) test(name, () => fn(env));
