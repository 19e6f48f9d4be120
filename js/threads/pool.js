// The threaded core's workers, on the thread that loads it. They start at
// load (a page's workers start only once the page yields, so they cannot
// be started inside the first parallel call) and each instantiates the core
// on the shared memory; the core's pthread_create then hands each of its
// pool threads to an idle worker (js/threads/worker.js).
import { RuntimeError } from '../errors.js';

/** Why this copy of webffi cannot start the pool's workers, or null when it can. */
export const whyNoWorkerScript = () => (import.meta.url ? null
  : 'webffi was loaded as the one-script-tag bundle, which runs single-threaded: import webffi as an ES module ' +
    '(js/index.js; its pool starts module Workers from js/threads/worker.js)');

/** The worker script, beside this module (the script-tag bundle has none). */
function workerUrl() {
  const why = whyNoWorkerScript();
  if (why !== null) throw new RuntimeError(`webffi: ${why}`);
  return new URL('./worker.js', import.meta.url);
}
/** How long workers may take to start before load() gives up. */
const START_TIMEOUT_MS = 60000;
const EAGAIN = 6;

function spawn(url) {
  const threads = globalThis.process?.getBuiltinModule?.('node:worker_threads');
  if (threads) {
    // the process's flags, less those a worker refuses (node --input-type=module -e ...)
    const execArgv = process.execArgv.filter((flag) => !flag.startsWith('--input-type'));
    const worker = new threads.Worker(url, { execArgv });
    return {
      post: (m) => worker.postMessage(m),
      listen: (fn) => {
        worker.on('message', fn);
        worker.on('error', (e) => fn({ cmd: 'failed', message: e?.message ?? String(e) }));
        worker.unref(); // the pool never keeps a Node process alive (after `on`, which refs it)
      },
      terminate: () => worker.terminate(),
    };
  }
  const worker = new Worker(url, { type: 'module' });
  return {
    post: (m) => worker.postMessage(m),
    listen: (fn) => {
      worker.onmessage = (event) => fn(event.data);
      // (a browser says no more than that it failed: say what to check)
      worker.onerror = (event) => fn({ cmd: 'failed', message: event.message ?? `the worker script ${url} failed to load ` +
        '(is it there, and served with the same Cross-Origin-Embedder-Policy header as the page?)' });
    },
    terminate: () => worker.terminate(),
  };
}

/**
 * Starts `count` workers on `module` and `memory` and waits until each has
 * instantiated the core.
 * @param {object} o
 * @param {WebAssembly.Module} o.module
 * @param {WebAssembly.Memory} o.memory
 * @param {number} o.count
 * @param {{ log?: Function, warn?: Function }} o.logger
 * @param {{ release?: (handle: number) => void, wake?: () => void,
 *   freeThread?: (pthread: number) => void }} o.hooks filled in once the
 *   runtime exists (freeThread: an ended thread's stack and state can go)
 * @param {boolean} [o.grow] a thread created when every worker is busy
 *   starts a new worker instead of failing with EAGAIN (command programs,
 *   whose pthreads come on top of the pool's; in a page the new worker
 *   starts only once the page yields)
 * @param {boolean} [o.directOutput] Node: workers write stdout and stderr
 *   to the process's own descriptors themselves, in order with the main
 *   thread's, instead of through the logger
 */
export async function startWorkers({ module, memory, count, logger, hooks, url = workerUrl(), grow = false,
  directOutput = false }) {
  const workers = [];
  const idle = [];
  const byThread = new Map(); // pthread -> worker
  let failure = null;
  const ready = [];
  /** A new worker; `onReady` when it has instantiated the core. */
  const add = (onReady, onFailed) => {
    const worker = spawn(url);
    workers.push(worker);
    worker.listen((m) => {
      switch (m?.cmd) {
        case 'ready': onReady(worker); break;
        case 'release': hooks.release?.(m.handle); break;
        case 'wake': hooks.wake?.(); break;
        case 'cleanup': threadDone(m.pthread); break;
        case 'print': (m.fd === 2 ? logger.warn ?? logger.log : logger.log)?.call(logger, String(m.text).replace(/\n$/, '')); break;
        case 'trapped': logger.warn?.(`webffi: a parallel task trapped on a worker thread: ${m.message}`); break;
        case 'failed':
          failure ??= m.message;
          onFailed(new RuntimeError(`webffi: a worker of the thread pool failed: ${m.message}`));
          break;
        default: break;
      }
    });
    worker.post({ cmd: 'load', module, memory, directOutput });
    return worker;
  };
  for (let i = 0; i < count; i++) {
    ready.push(new Promise((resolve, reject) => {
      add((worker) => {
        idle.push(worker);
        resolve();
      }, reject);
    }));
  }
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new RuntimeError(
      `webffi: the thread pool's ${count} workers did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
  });
  try {
    await Promise.race([Promise.all(ready), timeout]);
  } catch (e) {
    for (const w of workers) w.terminate();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  /** A joined thread's worker can host another. */
  function threadDone(pthread) {
    const worker = byThread.get(pthread);
    if (!worker) return;
    byThread.delete(pthread);
    idle.push(worker);
    hooks.freeThread?.(pthread);
  }
  return {
    /** The core's pthread_create: a new thread on an idle worker (0), or EAGAIN. */
    createThread(pthread, start, arg) {
      // a worker started now runs the thread once it has loaded (messages keep their order)
      const worker = idle.pop() ?? (grow ? add(() => {}, () => {}) : undefined);
      if (!worker) return EAGAIN;
      byThread.set(pthread, worker);
      worker.post({ cmd: 'run', pthread, start, arg });
      return 0;
    },
    threadDone,
    terminate() {
      for (const w of workers) w.terminate();
      workers.length = 0;
    },
    get failure() {
      return failure;
    },
  };
}
