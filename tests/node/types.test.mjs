// The hand-written .d.ts compiles against TypeScript usage files under the
// configurations users have: the DOM library or not, @types/node or not,
// always strict and with skipLibCheck off (typescript resolves 'webffi' to
// this package by its own name, through "exports").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

for (const config of ['dom', 'bare', 'node', 'dom-node']) {
  test(`the public API types check with tsc --strict (tests/types/tsconfig.${config}.json)`, () => {
    let output = '';
    try {
      execFileSync(`${root}node_modules/.bin/tsc`, ['-p', `tests/types/tsconfig.${config}.json`], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout}${e.stderr}`;
    }
    assert.equal(output, '');
  });
}
