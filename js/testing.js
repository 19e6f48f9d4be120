// The test fixtures (the testing.* globals and the testing.TestIntPair
// types), kept out of the runtime as upstream tvm-ffi keeps them in a
// testing library of its own that tests load on demand. The package ships
// them as a module, dist/webffi_testing.wasm (built by `webffi build
// --module` from src/testing/): load it into a runtime to use them.

/** The fixtures module, next to the package's JS (bundlers emit it as an asset). */
export const TESTING_MODULE_URL = new URL('../dist/webffi_testing.wasm', import.meta.url);
/** The same for the threaded runtime (load({ threads })). */
export const THREADED_TESTING_MODULE_URL = new URL('../dist/webffi_testing-mt.wasm', import.meta.url);

/**
 * Loads the fixtures into `rt` (a runtime from load()): afterwards its
 * testing.* globals and types exist. Resolves to `rt`. By default the
 * build that fits the runtime (threaded or not).
 */
export async function loadTesting(rt, source = rt.threads > 1 ? THREADED_TESTING_MODULE_URL : TESTING_MODULE_URL) {
  const mod = await rt.loadModule(source);
  mod.dispose(); // the runtime's table of loaded modules keeps it
  return rt;
}
