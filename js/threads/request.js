// What load({ threads }) asks for, checked against what this thread can
// have: threads need SharedArrayBuffer, which a page has only when it is
// cross-origin isolated (two response headers); Node always has it.
import { RuntimeError, FFITypeError } from '../errors.js';
import { describe } from '../runtime/checks.js';
import { whyNoWorkerScript } from './pool.js';

export const MAX_THREADS = 256;

/** The headers a page needs, as a user would paste them into a server's config. */
export const ISOLATION_HEADERS =
  'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';

/** Why threads cannot exist here, or null when they can. */
export function whyNoThreads() {
  if (typeof SharedArrayBuffer === 'undefined' || globalThis.crossOriginIsolated === false) {
    return 'this page is not cross-origin isolated (SharedArrayBuffer is unavailable): serve the page and its ' +
      `scripts with the headers ${ISOLATION_HEADERS}`;
  }
  if (typeof Atomics === 'undefined') return 'this engine has no Atomics';
  return whyNoWorkerScript();
}

/** The machine's cores, as the engine reports them. */
function cores() {
  const os = globalThis.process?.getBuiltinModule?.('node:os');
  const n = os?.availableParallelism?.() ?? globalThis.navigator?.hardwareConcurrency ?? 1;
  return Math.max(1, Math.min(MAX_THREADS, n | 0));
}

/**
 * The threads to start for `option` (load()'s `threads`): 1 means the
 * single-threaded core. 'auto' takes every core where threads can exist
 * and otherwise warns once and returns 1; a number that threads cannot
 * honour is a RuntimeError naming what is missing.
 */
export function threadsFor(option, logger) {
  if (option === undefined || option === false || option === 1) return 1;
  if (option === 'auto') {
    const why = whyNoThreads();
    if (why === null) return cores();
    logger.warn?.(`webffi: load({ threads: 'auto' }) runs single-threaded: ${why}`);
    return 1;
  }
  if (!Number.isInteger(option) || option < 1 || option > MAX_THREADS) {
    throw new FFITypeError(`load: threads must be 'auto' or an integer in [1, ${MAX_THREADS}], got ${describe(option)}`);
  }
  const why = whyNoThreads();
  if (why !== null) throw new RuntimeError(`webffi: load({ threads: ${option} }) cannot start threads: ${why}`);
  return option;
}
