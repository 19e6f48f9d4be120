// Test support: the test fixtures (testing.* globals and the
// testing.TestIntPair types) are a module of their own, not part of the
// runtime (src/testing/, shipped as dist/webffi_testing.wasm and loaded by
// the package's js/testing.js). Tests load it into each runtime that uses
// them, in Node and in browser pages alike.
import { loadModule } from '../../js/dylink.js';
import { TESTING_MODULE_URL, THREADED_TESTING_MODULE_URL, loadTesting } from '../../js/testing.js';

/** Where the fixtures module is (a file: URL in Node, an http: URL in pages). */
export const TESTING_MODULE = TESTING_MODULE_URL;
/** ... and its build for the threaded core. */
export const THREADED_TESTING_MODULE = THREADED_TESTING_MODULE_URL;

/** Loads the fixtures into `rt` (a runtime from load()); resolves to `rt`. */
export { loadTesting };

/**
 * Loads the fixtures into a runtime driven through its raw exports (no JS
 * runtime layer; tests/support/raw_runtime.mjs) with the module loader alone.
 */
export async function loadTestingRaw(exports) {
  await loadModule(exports, TESTING_MODULE);
}
