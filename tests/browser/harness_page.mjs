// In-page test runner for browser tests: runs each named async test and
// publishes { passed, failed, failures } on window.__webffiResult (or posts
// it, inside a worker), which tests/browser/harness.mjs waits for.
export async function runTests(tests) {
  const failures = [];
  let passed = 0;
  for (const [name, fn] of Object.entries(tests)) {
    try {
      await fn();
      passed++;
    } catch (e) {
      failures.push({ name, error: `${e?.name}: ${e?.message}\n${e?.stack ?? ''}` });
    }
  }
  const result = { passed, failed: failures.length, failures };
  if (typeof window !== 'undefined') window.__webffiResult = result;
  return result;
}

export function assert(cond, message) {
  if (!cond) throw new Error(`assertion failed: ${message}`);
}

export function assertEqual(actual, expected, message = '') {
  const a = typeof actual === 'bigint' ? `${actual}n` : JSON.stringify(actual);
  const e = typeof expected === 'bigint' ? `${expected}n` : JSON.stringify(expected);
  if (a !== e) throw new Error(`${message} expected ${e}, got ${a}`);
}
