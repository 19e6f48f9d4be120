// Test support: the test fixtures (testing.* globals and the
// testing.TestIntPair types) are a module of their own, not part of the
// runtime (src/testing/, built as dist/webffi_testing.wasm). Tests load it
// into each runtime that uses them, in Node and in browser pages alike.
import { loadModule } from '../../js/dylink.js';

/** Where the fixtures module is (a file: URL in Node, an http: URL in pages). */
export const TESTING_MODULE = new URL('../../dist/webffi_testing.wasm', import.meta.url);

/** Loads the fixtures into `rt` (a runtime from load()); resolves to `rt`. */
export async function loadTesting(rt) {
  const mod = await rt.loadModule(TESTING_MODULE);
  mod.dispose(); // the runtime's table of loaded modules keeps it
  return rt;
}

/** load(options) with the fixtures loaded: `webffi` is the package's exports. */
export async function loadWithTesting(webffi, options) {
  return loadTesting(await webffi.load(options));
}

/**
 * Loads the fixtures into a runtime driven through its raw exports (no JS
 * runtime layer; tests/support/raw_runtime.mjs) with the module loader alone.
 */
export async function loadTestingRaw(exports) {
  await loadModule(exports, TESTING_MODULE);
}
