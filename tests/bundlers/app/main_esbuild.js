// esbuild: import the wasm's URL with the `file` loader (--loader:.wasm=file)
// and hand it to load().
import wasm from 'webffi/webffi.wasm';
import { main } from './app.js';

main({ wasm });
