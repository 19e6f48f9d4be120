// The JS runtime's core suite (tests/support/core_suite.mjs) in Node, through
// the package's ESM entry point.
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import * as webffi from '../../js/index.js';
import { coreTests } from '../support/core_suite.mjs';

const wasm = readFileSync(new URL('../../dist/webffi.wasm', import.meta.url));
for (const [name, fn] of Object.entries(coreTests(webffi, wasm))) test(name, fn);
