// The suites that touch memory, calls, errors, modules, tensors and
// sessions, run unchanged against the threaded core (load({ threads: 2 }),
// dist/webffi-mt.wasm on a shared memory): every load() these suites make
// asks for two threads, and the fixtures module is its threaded build.
import { test, after } from 'node:test';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as webffi from '../../js/index.js';
import { coreTests } from '../support/core_suite.mjs';
import { errorTests } from '../support/errors_suite.mjs';
import { tensorCases } from '../support/tensor_cases.mjs';
import { sessionTests } from '../support/session_suite.mjs';
import { loadTesting } from '../support/testing_module.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const wasm = readFileSync(`${root}dist/webffi-mt.wasm`);
/** The package with load() defaulting to two threads (an explicit `threads` still wins). */
const threaded = {
  ...webffi,
  load: (options) => webffi.load(options === undefined || (typeof options === 'object' && options !== null &&
    Object.getPrototypeOf(options) === Object.prototype) ? { threads: 2, ...options } : options),
};

for (const [name, fn] of Object.entries(coreTests(threaded, wasm))) test(`threaded core: ${name}`, fn);
for (const [name, fn] of Object.entries(errorTests(threaded))) test(`threaded core: ${name}`, fn);

const rt = await loadTesting(await threaded.load({ logger: { log() {}, warn: (m) => console.log(m) } }));
after(() => {
  rt.backends.get('webgpu')?.engine?.dispose();
  rt.dispose();
});
const addOneModule = `${root}build/wasm/tests/modules/add_one_mt.wasm`;
for (const [name, fn] of Object.entries(tensorCases(rt, { addOneModule }))) test(`threaded core: ${name}`, fn);

const workerUrl = new URL('../support/session_worker.mjs', import.meta.url);
const env = {
  wasm,
  spawn: (role) => new Worker(workerUrl, { workerData: { role, threads: 2 } }),
  kill: (worker) => { worker.terminate(); },
  crashMessage: /^webffi session: the worker exited \(exit code 3\)/,
  killMessage: /^webffi session: the worker exited \(exit code 1\) \(1 call was pending\)$/,
};
for (const [name, fn] of Object.entries(sessionTests(threaded, env))) test(`threaded core: ${name}`, fn);
