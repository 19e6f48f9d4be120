
/**
 * The test fixtures: a module of C functions and types that exercise the
 * FFI (`testing.add_one`, `testing.echo`, `testing.test_raise_error`,
 * `testing.apply`, `testing.TestIntPair`, ...), which the runtime itself
 * does not have, as upstream tvm-ffi keeps them in a testing library. The
 * package ships it as `dist/webffi_testing.wasm`.
 *
 * @example
 * ```ts
 * import { load } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * console.log(rt.getGlobal('testing.add_one')(41));
 * ```
 * <!-- doc: output -->
 * ```text
 * 42
 * ```
 * @module webffi/js/testing
 */

import type { Runtime } from './index.js';

/**
 * The test fixtures module (`dist/webffi_testing.wasm`), next to the
 * package's JS: a URL (what `loadTesting` loads by default).
 *
 * @group Test fixtures
 * @example
 * ```ts
 * import { TESTING_MODULE_URL } from 'webffi/js/testing.js';
 * console.log(TESTING_MODULE_URL.href.endsWith('/dist/webffi_testing.wasm'));
 * ```
 * <!-- doc: output -->
 * ```text
 * true
 * ```
 */
export const TESTING_MODULE_URL: { readonly href: string };

/**
 * The same fixtures built for the threaded core
 * (`dist/webffi_testing-mt.wasm`): what `loadTesting` loads into a runtime
 * whose `threads` is more than 1.
 *
 * @group Test fixtures
 * @example
 * ```ts
 * import { load } from 'webffi';
 * import { loadTesting, THREADED_TESTING_MODULE_URL } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load({ threads: 2 }));
 * console.log(THREADED_TESTING_MODULE_URL.href.endsWith('/dist/webffi_testing-mt.wasm'), rt.threads,
 *   rt.getGlobal('testing.add_one')(41));
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true 2 42
 * ```
 */
export const THREADED_TESTING_MODULE_URL: { readonly href: string };

/**
 * Loads the test fixtures (the `testing.*` globals and types, which the
 * runtime itself does not have) into a runtime; resolves to it. `source`
 * defaults to TESTING_MODULE_URL, or THREADED_TESTING_MODULE_URL on the
 * threaded core (pass the URL a bundler gave the asset, or
 * the module's bytes). Loading them twice into one runtime returns the
 * module already loaded.
 *
 * @group Test fixtures
 * @example
 * ```ts
 * import { load } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * console.log(rt.listGlobals().filter((name) => name.startsWith('testing.')).length > 5);
 * console.log(rt.getGlobal('testing.apply')((a: number, b: number) => a * b, 6, 7)); // C calls JS back
 * const Pair = rt.objectClass('testing.TestIntPair');
 * console.log(String(new Pair(1, 2)));
 * ```
 * <!-- doc: output -->
 * ```text
 * true
 * 42
 * testing.TestIntPair(a=1, b=2)
 * ```
 */
export function loadTesting<R extends Runtime>(rt: R,
  source?: string | { readonly href: string } | ArrayBuffer | ArrayBufferView): Promise<R>;
