// Async served functions and remote objects over Node worker_threads, with
// WebGPU from Dawn in the worker (tests/support/remote_suite.mjs; the same
// cases run in Chromium module Workers).
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { Worker, MessageChannel } from 'node:worker_threads';
import * as webffi from '../../js/index.js';
import { remoteTests } from '../support/remote_suite.mjs';

// Mesa reads EGL_PLATFORM from the process environment, which a worker's
// process.env (a copy) does not change: it is set here, before the workers start.
process.env.EGL_PLATFORM ??= 'surfaceless';
const workerUrl = new URL('../support/remote_worker.mjs', import.meta.url);
const env = {
  wasm: readFileSync(new URL('../../dist/webffi.wasm', import.meta.url)),
  spawn: (role) => new Worker(workerUrl, { workerData: { role } }),
  kill: (worker) => { worker.terminate(); },
  channel: () => new MessageChannel(),
  addOneModule: async () => readFileSync(new URL('../../build/wasm/tests/modules/add_one.wasm', import.meta.url)),
  crashMessage: /^webffi session: the worker exited \(exit code 3\)/,
};
for (const [name, fn] of Object.entries(remoteTests(webffi, env))) test(name, { timeout: 120000 }, fn);
