// esbuild: import the wasms' URLs with the `file` loader (--loader:.wasm=file)
// and hand them to load() and to the fixtures' loader.
import wasm from 'webffi/webffi.wasm';
import testing from 'webffi/webffi_testing.wasm';
import { main } from './app.js';

main({ wasm }, testing);
