// A whole runtime in a worker, behind one object: connectRuntime(worker)
// gives what `load()` gives, with every call asynchronous. It is a thin
// layer over a worker session (js/session.js): the worker serves its
// runtime with serve(), and results that cannot travel by value come back
// as remote handles (js/remote.js).
import { connect } from './session.js';
import { FFITypeError } from './errors.js';

/** A runtime served by a worker (see connectRuntime). */
export class RemoteRuntime {
  #session;

  constructor(session) {
    this.#session = session;
  }

  /** The session underneath (its call() takes per-call options). */
  get session() {
    return this.#session;
  }

  /**
   * An async function calling the worker's global (or served function)
   * `name`; `options` (timeout, signal, transfer, result) apply to every call.
   */
  getGlobal(name, options) {
    if (typeof name !== 'string') throw new FFITypeError(`remote.getGlobal(name): name is a string, not ${typeof name}`);
    const session = this.#session;
    return (...args) => session.call(name, args, options);
  }

  /**
   * A tensor made in the worker from a typed array (copied, or transferred
   * with { transfer: true }), on `device` when given (e.g. 'webgpu'):
   * resolves with a RemoteTensor.
   * @param {ArrayBufferView} data
   * @param {{ shape?: number[], dtype?: string, device?: string, transfer?: boolean, timeout?: number, signal?: AbortSignal }} [options]
   */
  tensor(data, options = {}) {
    const { shape, dtype, device, transfer, timeout, signal } = options ?? {};
    if (!ArrayBuffer.isView(data) || data instanceof DataView) {
      return Promise.reject(new FFITypeError('remote.tensor(data): data is a typed array'));
    }
    const opts = {};
    if (shape !== undefined) opts.shape = shape;
    if (dtype !== undefined) opts.dtype = dtype;
    if (device !== undefined) opts.device = String(device);
    return this.#session.callOp('tensor', [data, opts], { transfer, timeout, signal, result: 'remote' });
  }

  /**
   * Loads a C module in the worker (a URL, or its bytes); resolves with a
   * RemoteModule. The worker must expose `webffi.loadModule`.
   */
  loadModule(source, options) {
    return this.#session.callOp('loadModule', [source], { ...options, result: 'remote' });
  }

  /** How many objects the worker keeps for this runtime's remote handles. */
  remoteCount(options) {
    return this.#session.remoteCount(options);
  }

  /** Ends the session (the worker releases every remote object); the worker itself is the caller's. */
  close() {
    this.#session.close();
  }

  /** `using remote = await connectRuntime(worker)`: closes the session at the end of the scope. */
  [Symbol.dispose]() {
    this.close();
  }

  get closed() {
    return this.#session.closed;
  }
}

/**
 * Connects to a worker that serves its runtime (`serve(rt, self)` /
 * `serve(rt, parentPort)`): a Node worker_threads Worker, a browser module
 * Worker, or any MessagePort. Options as for connect().
 * @returns {Promise<RemoteRuntime>}
 */
export async function connectRuntime(worker, options) {
  return new RemoteRuntime(await connect(worker, options));
}
