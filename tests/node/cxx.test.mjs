// C++ built by `webffi build` both ways, and a command program, in Node
// (the suite is shared with tests/browser/cxx.test.mjs).
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import * as webffi from '../../js/index.js';
import { runCommand } from '../../js/command.js';
import { cxxTests } from '../support/cxx_suite.mjs';

const dir = new URL('../../build/wasm/tests/modules/', import.meta.url);
const env = {
  webffi,
  runCommand,
  moduleSource: (name) => new URL(`${name}.wasm`, dir),
  systemLibBytes: () => readFileSync(new URL('checked_parse_system_lib.wasm', dir)),
  commandBytes: () => readFileSync(new URL('load_and_call.wasm', dir)),
};
for (const [name, fn] of Object.entries(cxxTests)) test(name, () => fn(env));
