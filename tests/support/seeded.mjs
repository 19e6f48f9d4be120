// Runs a fast-check property for the lifetime, unwinding, peer and churn
// fuzzers: a fixed seed and a random one (printed, with the line that
// replays it, on failure). WEBFFI_FUZZ_SCALE=K multiplies every run count
// (the longer runs docs/security.md reports); WEBFFI_FUZZ_SEED=S replays one
// seed.
import assert from 'node:assert/strict';
import fc from 'fast-check';

export const SCALE = Number(process.env.WEBFFI_FUZZ_SCALE ?? 1);
export const FIXED_SEED = 20261202;

/** The seeds to run: the fixed one and a random one, or the one replayed. */
export function seeds() {
  if (process.env.WEBFFI_FUZZ_SEED) return [Number(process.env.WEBFFI_FUZZ_SEED)];
  return [FIXED_SEED, (Date.now() ^ (Math.random() * 2 ** 31)) >>> 0];
}

/**
 * Checks `property` (sync or async) for `runs` inputs per seed; t.diagnostic
 * gets the count and time. `file` is the test's import.meta.url (for the
 * replay line).
 */
export async function check(t, file, property, runs) {
  const n = Math.max(1, Math.round(runs * SCALE));
  for (const seed of seeds()) {
    const started = Date.now();
    const result = await fc.check(property, { seed, numRuns: n, endOnFailure: true });
    t.diagnostic(`seed ${seed}: ${result.numRuns} runs in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (result.failed) {
      assert.fail(`property failed for seed ${seed} (replay: WEBFFI_FUZZ_SEED=${seed} node --test ${new URL(file).pathname}; path ${result.counterexamplePath}):\n${result.errorInstance?.stack ?? result.error}`);
    }
  }
}
