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

const show = (v) => (typeof v === 'bigint' ? `${v}n` : Object.is(v, -0) ? '-0' : typeof v === 'string' ? JSON.stringify(v) : String(v));

/** Asserts Object.is(actual, expected): -0 is not 0, NaN is NaN, 1n is not 1. */
export function same(actual, expected, what = '') {
  assert(Object.is(actual, expected), `${what} expected ${show(expected)}, got ${show(actual)}`);
}

export function assertEqual(actual, expected, message = '') {
  const a = typeof actual === 'bigint' ? `${actual}n` : JSON.stringify(actual);
  const e = typeof expected === 'bigint' ? `${expected}n` : JSON.stringify(expected);
  if (a !== e) throw new Error(`${message} expected ${e}, got ${a}`);
}

/** Runs fn, which must throw; returns what it threw. */
export function thrown(fn, what) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error(`assertion failed: ${what}: expected an exception`);
}

/** Awaits promise, which must reject; returns the reason. */
export async function rejected(promise, what) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error(`assertion failed: ${what}: expected a rejection`);
}

/** Asserts that fn (sync or async) throws an error of `kind` whose message matches `pattern`. */
export async function assertThrows(fn, kind, pattern) {
  let error = null;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  assert(error, `expected a ${kind}, nothing was thrown`);
  assertEqual(error.kind, kind, `kind of "${error.message}":`);
  assert(pattern.test(error.message), `message "${error.message}" does not match ${pattern}`);
  return error;
}
