// Values and errors by value, and worker sessions over Node worker_threads
// (tests/support/session_suite.mjs; the same cases run in Chromium Workers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import * as webffi from '../../js/index.js';
import { sessionTests } from '../support/session_suite.mjs';

const workerUrl = new URL('../support/session_worker.mjs', import.meta.url);
const env = {
  wasm: readFileSync(new URL('../../dist/webffi.wasm', import.meta.url)),
  spawn: (role) => new Worker(workerUrl, { workerData: { role } }),
  kill: (worker) => { worker.terminate(); },
  crashMessage: /^webffi session: the worker exited \(exit code 3\)/,
  killMessage: /^webffi session: the worker exited \(exit code 1\) \(1 call was pending\)$/,
};
for (const [name, fn] of Object.entries(sessionTests(webffi, env))) test(name, fn);

test('the CommonJS bundle has the codec and sessions', () => {
  const cjs = createRequire(import.meta.url)('../../dist/webffi.cjs');
  const e = cjs.decodeValue(structuredClone(cjs.encodeValue(new cjs.IndexError('by value'))));
  assert.ok(e instanceof RangeError && e instanceof cjs.IndexError && e.kind === 'IndexError' && e.message === 'by value');
  assert.equal(typeof cjs.connect, 'function');
  assert.equal(typeof cjs.serve, 'function');
});

test("a peer that closes, or whose port closes, aborts its served calls' signals", async () => {
  const { MessageChannel } = await import('node:worker_threads');
  const rt = await webffi.load();
  for (const how of ['session.close()', 'port.close()']) {
    const { port1, port2 } = new MessageChannel();
    let started;
    const running = new Promise((resolve) => { started = resolve; });
    const aborted = new Promise((resolve) => {
      webffi.serve(rt, port1, {
        functions: {
          'my.wait'() {
            this.signal.addEventListener('abort', () => resolve(how));
            started();
            return new Promise(() => {}); // answers only by being cancelled
          },
        },
      });
    });
    const session = await webffi.connect(port2);
    const call = session.call('my.wait', []).catch((e) => e);
    await running;
    if (how === 'session.close()') session.close();
    else port2.close();
    let timer;
    const outcome = await Promise.race([aborted, new Promise((resolve) => { timer = setTimeout(resolve, 5000, 'not aborted'); })]);
    clearTimeout(timer);
    port1.close();
    port2.close();
    assert.equal(outcome, how);
    assert.ok((await call) instanceof Error, 'the caller is answered with an error');
  }
  rt.dispose();
});
