// The worker side of bench/workers.bench.mjs: `sink` counts messages (and
// decodes them when told to) and reports when a batch is in; `echo` answers
// every message at once; `server` serves a runtime as a session.
import { parentPort, workerData } from 'node:worker_threads';
import { decodeValue, serve, load } from '../js/index.js';

if (workerData.role === 'sink') {
  let count = 0;
  let keep = null;
  parentPort.on('message', (m) => {
    if (m.batch !== undefined) {
      count = 0;
      return;
    }
    keep = m.encoded ? decodeValue(m.data) : m.data;
    if (++count === workerData.batch) parentPort.postMessage(keep === undefined ? 0 : count);
  });
} else if (workerData.role === 'echo') {
  parentPort.on('message', (m) => parentPort.postMessage({ wrpc: 'ok', id: m.id, value: 2 }));
} else {
  serve(load(), parentPort, { expose: ['testing.add_one'] });
}
