// A worker for the remote-object and async-call tests (tests/support/
// remote_suite.mjs), in Node worker_threads and browser module Workers. It
// owns a runtime with WebGPU (discovered at load: Dawn in Node, the
// browser's navigator.gpu) and serves it with a few async JS functions.
// Role from workerData (Node) or the URL's `role` (browser):
//   server:  serve(rt, port, { functions, expose }) and the same on any port
//            it is sent as { serveOn } (a second session to the same worker);
//   bounded: the same with maxInFlight 4 and maxRemotes 8, and no module loading;
//   forwarder: no runtime; serves by forwarding to the port sent as { next }.
// Listeners are attached before the first await: a browser worker drops
// messages that arrive while no listener is attached.
import * as webffi from '../../js/index.js';
import { loadTesting } from './testing_module.mjs';

const node = typeof process !== 'undefined' && !!process.versions?.node && typeof WorkerGlobalScope === 'undefined';
const threads = node ? await import('node:worker_threads') : null;
const port = node ? threads.parentPort : self;
const role = node ? threads.workerData.role : new URL(self.location.href).searchParams.get('role');

const stats = { aborted: 0, started: 0, finished: 0 };

/** Resolves after ms, or rejects with the signal's reason once it aborts (counted). */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      stats.aborted++;
      reject(signal.reason);
    }, { once: true });
  });
}

const functions = {
  /** Waits ms (aborting when the caller cancels), then answers. */
  async 'test.sleep'(ms) {
    stats.started++;
    await sleep(ms, this.signal);
    stats.finished++;
    return `slept ${ms}`;
  },
  'test.stats': () => ({ ...stats }),
  /** A CPU tensor (from a typed array or a tensor sent by value), moved to WebGPU: stays in the worker. */
  async 'test.to_gpu'(t) {
    if (!(t instanceof this.runtime.Tensor)) throw new webffi.FFITypeError(`test.to_gpu: a tensor, not ${t?.constructor?.name}`);
    return t.toDevice('webgpu');
  },
  /** What arrived: [type key, device, dtype, shape]. */
  'test.describe': (t) => [t.typeKey, String(t.device), String(t.dtype), t.shape],
  /** x * 2 computed on the GPU, returned as a CPU tensor (by value). */
  async 'test.double_on_gpu'(t) {
    const g = await t.toDevice('webgpu');
    const y = this.runtime.getGlobal('webgpu.mul_scalar')(g, 2);
    g.dispose();
    try {
      return await y.toDevice('cpu');
    } finally {
      y.dispose();
    }
  },
  /** Asks WebGPU for more than a buffer may hold. */
  async 'test.gpu_oom'() {
    await this.runtime.backends.ensure('webgpu');
    const max = this.runtime.backends.get('webgpu').engine.info().limits.maxBufferSize;
    return this.runtime.empty([Math.floor(max / 4) + 1024], 'float32', 'webgpu');
  },
  /** Destroys the GPU device (as a device loss would). */
  'test.lose_device'() {
    this.runtime.backends.get('webgpu').engine.dispose();
    return null;
  },
  /** A JS function and a JS object the worker keeps: remote handles. */
  'test.function': () => (x) => x * 10,
  'test.object': () => new (class Counter { n = 1; })(),
  /** One kept object named n times in one reply. */
  'test.shared': (n) => {
    const o = new (class Counter { n = 1; })();
    return Array.from({ length: n }, () => o);
  },
  /** Its argument back: a remote handle passed in arrives as the worker's own object. */
  'test.identity': (x) => x,
  'test.pair': (a, b) => [a, b],
  /** Waits until the GPU is idle (Dawn in Node aborts the process when a worker ends with GPU work pending). */
  async 'test.idle'() {
    await this.runtime.backends.get('webgpu')?.engine?.sync();
    return null;
  },
  async 'test.crash'() {
    if (node) {
      await functions['test.idle'].call(this); // see test.idle: the crash is the worker's, not Dawn's
      process.exit(3);
    }
    queueMicrotask(() => {
      self.close();
      throw new Error('worker boom');
    });
    return null;
  },
};

const EXPOSE = ['test.*', 'testing.*', 'webgpu.*', 'ffi.String', 'webffi.loadModule'];
const onData = (fn) => (node ? port.on('message', fn) : port.addEventListener('message', (e) => fn(e.data)));
if (role === 'forwarder') {
  // No runtime here: calls, releases and remote references pass through to the port sent as { next }.
  webffi.serve(new Promise((resolve) => onData((m) => m?.next && resolve(webffi.connect(m.next)))), port);
} else {
  if (role !== 'server' && role !== 'bounded') throw new Error(`remote_worker: unknown role ${role}`);
  const rt = webffi.load().then(loadTesting);
  const options = role === 'bounded'
    ? { functions, expose: EXPOSE.filter((p) => p !== 'webffi.loadModule'), maxInFlight: 4, maxRemotes: 8 }
    : { functions, expose: EXPOSE };
  webffi.serve(rt, port, options);
  onData((m) => m?.serveOn && webffi.serve(rt, m.serveOn, options));
}
