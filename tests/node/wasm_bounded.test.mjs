// Bounded work in wasm's small stacks: a chain of 10^6 nested Lists is
// released without a trap, and a DAG with 2^60 paths goes through every
// structural operation, and memory grows geometrically (tests/c/bounded_check.c,
// built for both toolchains).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../support/raw_runtime.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

for (const [toolchain, dir] of [['emscripten', 'build/wasm'], ['wasi', 'build/wasi']]) {
  test(`deep releases and shared structure stay bounded in wasm (${toolchain})`, async () => {
    const { code, stdout } = await runCommand(readFileSync(`${root}${dir}/bounded_check.wasm`));
    assert.equal(code, 0, stdout);
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines.length, 15, stdout);
    for (const line of lines) assert.match(line, /^ok /);
    assert.ok(lines.includes('ok releasing it returns'));
  });
}
