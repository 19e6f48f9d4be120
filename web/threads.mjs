// The demo's threads engine (web/demo.js imports this on demand): the C
// kernel of web/matmul.c linked into webffi's threaded runtime
// (web/dist/matmul_mt.wasm, `webffi build --threads`), loaded with
// load({ threads }) so that TVMBackendParallelLaunch splits the rows of the
// product across the page's thread and threads - 1 module Workers.
//
// Threads need webffi as an ES module (its pool starts module Workers from
// js/threads/worker.js; the classic-script bundle the rest of the page uses
// runs single-threaded) and a cross-origin isolated page: served with
// Cross-Origin-Opener-Policy: same-origin and
// Cross-Origin-Embedder-Policy: require-corp (node scripts/serve.mjs sends
// both). Elsewhere load() rejects with a RuntimeError that names them.
import { load } from '../js/index.js';

/** The threaded runtime with the kernel linked in. */
export const THREADED_KERNEL = new URL('dist/matmul_mt.wasm', import.meta.url);

/**
 * Loads the threaded runtime with `threads` threads; resolves to
 * { rt, threads, matmul(a, b), matmulTasks(a, b, numTask) }, or rejects
 * with the runtime's error saying why there are no threads here.
 */
export async function startThreads({ threads, logger }) {
  const rt = await load({ wasm: THREADED_KERNEL, threads, logger });
  const lib = rt.getGlobal('ffi.SystemLib')();
  return {
    rt,
    threads: rt.threads,
    matmul: lib.getFunction('matmul'),
    matmulTasks: lib.getFunction('matmul_tasks'),
  };
}
