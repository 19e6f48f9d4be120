// Values nested as deep as the runtime accepts go through every recursive
// operation in wasm's small stacks, and deeper input is a ValueError rather
// than a trap (tests/c/nesting_check.c, built for both toolchains).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../support/raw_runtime.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

for (const [toolchain, dir] of [['emscripten', 'build/wasm'], ['wasi', 'build/wasi']]) {
  test(`nesting limits hold in wasm (${toolchain})`, async () => {
    const { code, stdout } = await runCommand(readFileSync(`${root}${dir}/nesting_check.wasm`));
    assert.equal(code, 0, stdout);
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines.length, 16, stdout);
    for (const line of lines) assert.match(line, /^ok /);
    assert.ok(lines.includes('ok parse 100000 levels is a ValueError'));
  });
}
