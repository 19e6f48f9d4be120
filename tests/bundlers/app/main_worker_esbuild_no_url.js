// The page for worker_esbuild_no_url.js.
import { mainWorker } from './worker_app.js';

mainWorker(new Worker(new URL('./worker_esbuild_no_url.js', import.meta.url), { type: 'module' }));
