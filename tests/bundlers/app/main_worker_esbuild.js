// esbuild: the page, built from webffi/client, starts the worker bundled
// next to it (worker_esbuild.js, an entry point of the same build).
import { mainWorker } from './worker_app.js';

mainWorker(new Worker(new URL('./worker_esbuild.js', import.meta.url), { type: 'module' }));
