// The hand-written .d.ts compiles against a TypeScript usage file (typescript
// resolves 'webffi' to this package by its own name, through "exports").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('the public API types check with tsc --strict', () => {
  let output = '';
  try {
    execFileSync(`${root}node_modules/.bin/tsc`, ['-p', 'tests/types/tsconfig.json'], { cwd: root, encoding: 'utf8' });
  } catch (e) {
    output = `${e.stdout}${e.stderr}`;
  }
  assert.equal(output, '');
});
