// Backtraces with file, line and function (tests/support/debug_suite.mjs)
// in Node; the same suite runs in Chromium (tests/browser/debug.test.mjs).
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import * as webffi from '../../js/index.js';
import { debugTests } from '../support/debug_suite.mjs';

const dir = new URL('../../build/wasm/tests/modules/', import.meta.url);
const env = {
  webffi,
  moduleSource: (name) => new URL(`${name}.wasm`, dir),
  moduleBytes: (name) => readFileSync(new URL(`${name}.wasm`, dir)),
  sourceText: (file) => readFileSync(new URL(`../modules/${file}`, import.meta.url), 'utf8'),
  runtimeLines: () => new Uint8Array(readFileSync(new URL('../../dist/webffi.lines', import.meta.url))),
};
for (const [name, fn] of Object.entries(debugTests)) test(name, () => fn(env));
