import type { Runtime } from './index.js';

/** The test fixtures module (dist/webffi_testing.wasm), next to the package's JS: a URL. */
export const TESTING_MODULE_URL: { readonly href: string };

/**
 * Loads the test fixtures (the testing.* globals and types, which the
 * runtime itself does not have) into a runtime; resolves to it. `source`
 * defaults to TESTING_MODULE_URL (pass the URL a bundler gave the asset).
 */
export function loadTesting<R extends Runtime>(rt: R,
  source?: string | { readonly href: string } | ArrayBuffer | ArrayBufferView): Promise<R>;
