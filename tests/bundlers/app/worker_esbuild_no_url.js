// esbuild, in a worker, without handing load() the wasm's URL: the bundle
// does not sit next to dist/webffi.wasm, so the first call says what to do.
import { load, serve } from 'webffi';

serve(load(), self);
