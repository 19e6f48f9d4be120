// A worker for the session tests, in Node worker_threads and browser Workers.
// Its role comes from workerData (Node) or the URL's `role` (browser):
//   server:    serves a runtime with a few test globals on its port, and on
//              any port it is sent as { serveOn }, exposing `testing.*` and
//              `test.*` (the peer here is the test itself);
//   default:   serves the same runtime with serve's default exposure, and
//              posts back raw whatever it is sent as { spray: [messages] };
//   forwarder: serves calls by forwarding them to the port sent as { next };
//   decoder:   never loads a runtime; decodes errors it is sent and reports.
// Listeners are attached before the first await: a browser worker drops
// messages that arrive while no listener is attached.
import * as webffi from '../../js/index.js';
import { loadTesting } from './testing_module.mjs';

const node = typeof process !== 'undefined' && !!process.versions?.node && typeof WorkerGlobalScope === 'undefined';
const threads = node ? await import('node:worker_threads') : null;
const port = node ? threads.parentPort : self;
const role = node ? threads.workerData.role : new URL(self.location.href).searchParams.get('role');
// (the threaded core's suites ask the worker's runtime for threads too)
const loadThreads = node ? threads.workerData.threads : Number(new URL(self.location.href).searchParams.get('threads') ?? 1);

/** Calls fn with each message's data. */
function onData(fn) {
  if (node) port.on('message', fn);
  else port.addEventListener('message', (e) => fn(e.data));
}

function busyWait(ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* keeps the worker's thread busy */ }
}

async function runtime(webffi) {
  const rt = await loadTesting(await webffi.load(loadThreads > 1 ? { threads: loadThreads } : {}));
  rt.registerGlobal('test.busy', (ms) => {
    busyWait(ms);
    return ms;
  });
  rt.registerGlobal('test.crash', () => {
    if (node) process.exit(3);
    // Uncaught, and the worker closes: the calls queued behind this one never run.
    queueMicrotask(() => {
      self.close();
      throw new Error('worker boom');
    });
    return null;
  });
  rt.registerGlobal('test.js_error', (message) => {
    throw new TypeError(message);
  });
  rt.registerGlobal('test.with_cause', () => {
    throw new webffi.ValueError('outer', { cause: new webffi.KeyError('inner') });
  });
  rt.registerGlobal('test.function', () => (x) => x);
  rt.registerGlobal('test.bytes_sum', (b) => b.reduce((a, x) => a + x, 0));
  return rt;
}

const TEST_GLOBALS = ['testing.*', 'test.*'];

if (role === 'server') {
  const rt = runtime(webffi);
  webffi.serve(rt, port, { expose: TEST_GLOBALS });
  onData((m) => m?.serveOn && webffi.serve(rt, m.serveOn, { expose: TEST_GLOBALS }));
} else if (role === 'default') {
  webffi.serve(runtime(webffi), port);
  onData((m) => {
    if (Array.isArray(m?.spray)) for (const x of m.spray) port.postMessage(x);
  });
} else if (role === 'forwarder') {
  webffi.serve(new Promise((resolve) => onData((m) => m?.next && resolve(webffi.connect(m.next)))), port);
} else if (role === 'decoder') {
  // load() is never called: no wasm anywhere in this worker.
  const { decodeValue, encodeValue, FFIError } = webffi;
  const bases = [TypeError, RangeError, Error];
  onData(({ errors: encoded }) => {
    const decoded = encoded.map((d) => decodeValue(d));
    port.postMessage({
      checks: decoded.map((e) => `${e.kind}|${e.message}|${bases.find((b) => e instanceof b).name}|${e instanceof FFIError}`),
      errors: decoded.map((e) => encodeValue(e)),
    });
  });
} else {
  throw new Error(`session_worker: unknown role ${role}`);
}
