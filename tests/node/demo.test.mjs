// `npm run demo`'s Node part (scripts/demo.mjs): it runs, and every C frame
// of the errors it shows names its file and line (its errors come from
// modules built with -gline-tables-only, not from the test fixtures).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('the demo runs and shows C errors with file and line in every C frame', () => {
  const r = spawnSync(process.execPath, ['scripts/demo.mjs'], { cwd: root, encoding: 'utf8', timeout: 600000 });
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout;
  assert.doesNotMatch(out, /line unknown|did not build/);
  assert.match(out, /caught ValueError .*kind=ValueError, message=checked_sqrt: x must not be negative\nC backtrace, most recent call first:\n {2}File "scripts\/demo_errors\.c", line \d+, in check_non_negative \[inlined\]\n {2}File "scripts\/demo_errors\.c", line \d+, in __tvm_ffi_checked_sqrt\n/);
  assert.match(out, /the same JS error came back through C: true; frames:\n {2}File "file:\/\/\S+\/scripts\/demo\.mjs", line \d+, in <anonymous>\n {2}File "scripts\/demo_errors\.c", line \d+, in __tvm_ffi_apply\n/);
  assert.match(out, /ValueError: matmul: .*\n {2}File "web\/matmul\.c", line \d+, in matmul_check_shapes\n/);
  // every C frame printed has a line
  const cFrames = out.split('\n').filter((l) => /^ {2}File "[^"]*\.c"/.test(l));
  assert.ok(cFrames.length >= 7, out);
  assert.deepEqual(cFrames.filter((l) => !/", line \d+, in /.test(l)), []);
});
