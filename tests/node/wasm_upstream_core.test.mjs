// What upstream's core registers, in wasm: the structural functions at the
// deepest accepted nesting and on a DAG with 2^60 paths, and the structural
// walk through the containers' C visit hooks, and Dict keys hashed and
// compared by a type's __any_hash__ / __any_equal__ pointers (tests/c/upstream_core_check.c,
// built for both toolchains).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../support/raw_runtime.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

for (const [toolchain, dir] of [['emscripten', 'build/wasm'], ['wasi', 'build/wasi']]) {
  test(`upstream's structural functions run bounded in wasm (${toolchain})`, async () => {
    const { code, stdout } = await runCommand(readFileSync(`${root}${dir}/upstream_core_check.wasm`));
    assert.equal(code, 0, stdout);
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines.length, 18, stdout);
    for (const line of lines) assert.match(line, /^ok /);
    assert.ok(lines.includes('ok GetFirstStructuralMismatch of a DAG with 2^60 paths'));
    assert.ok(lines.includes("ok Dict keys: a type's __any_hash__ / __any_equal__ pointers decide"));
    assert.ok(lines.includes('ok FromJSONGraph of 255 levels, every reference forwards'));
  });
}
