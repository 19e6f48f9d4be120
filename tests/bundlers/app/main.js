// Vite and webpack: the bundler finds webffi.wasm (and the fixtures module)
// through the library's `new URL('../dist/webffi.wasm', import.meta.url)`,
// emits it and rewrites the URL.
import { main } from './app.js';

main();
