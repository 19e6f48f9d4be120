// esbuild, in a worker: as on a page, import the wasms' URLs with the `file`
// loader and hand them to load() and to the fixtures' loader.
import wasm from 'webffi/webffi.wasm';
import testing from 'webffi/webffi_testing.wasm';
import { load, serve } from 'webffi';
import { loadTesting } from 'webffi/js/testing.js';

serve(load({ wasm }).then((rt) => loadTesting(rt, testing)), self, { expose: ['testing.add_one', 'testing.test_raise_error'] });
