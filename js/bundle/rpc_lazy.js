// TVM RPC in the script bundle: dist/webffi.rpc.js (js/bundle/rpc_part.js)
// loads on the first call. The async functions load it and call through;
// the classes are these stand-ins until it has loaded (no value is an
// instance of them before), then the real ones (webffi.RPCSession is a live
// binding). The synchronous functions: joinRPCProxy returns at once (its
// argument errors reject `ready` until the part has loaded), and
// createRPCEndpoint needs the part loaded first: `await webffi.loadRPC()`.
import { loadPart } from './chunks.js';
import { makeError } from '../errors.js';

let rpc = null;

/** Loads the TVM RPC part of the script bundle (dist/webffi.rpc.js); resolves when its functions are ready. */
export async function loadRPC() {
  if (rpc) return;
  const part = await loadPart('rpc');
  if (!rpc) {
    rpc = part;
    ({ RPCSession, RPCObject, RPCModule, RPCTensor } = part);
  }
}

const standIn = (name) => ({
  [name]: class {
    constructor() {
      throw makeError('RuntimeError', `webffi.${name}: the TVM RPC part of the script bundle is not loaded yet (await webffi.loadRPC())`);
    }

    static [Symbol.hasInstance](v) {
      return rpc !== null && v instanceof rpc[name];
    }
  },
})[name];

export let RPCSession = standIn('RPCSession');
export let RPCObject = standIn('RPCObject');
export let RPCModule = standIn('RPCModule');
export let RPCTensor = standIn('RPCTensor');

export async function connectRPC(...args) {
  await loadRPC();
  return rpc.connectRPC(...args);
}
export async function requestRPC(...args) {
  await loadRPC();
  return rpc.requestRPC(...args);
}
export async function trackerSummary(...args) {
  await loadRPC();
  return rpc.trackerSummary(...args);
}
export async function connectTracker(...args) {
  await loadRPC();
  return rpc.connectTracker(...args);
}
export async function listenRPC(...args) {
  await loadRPC();
  return rpc.listenRPC(...args);
}
export async function serveConnection(...args) {
  await loadRPC();
  return rpc.serveConnection(...args);
}

export function joinRPCProxy(...args) {
  if (rpc) return rpc.joinRPCProxy(...args);
  let real = null;
  let closed = false;
  const ready = loadRPC().then(() => {
    if (closed) return undefined;
    real = rpc.joinRPCProxy(...args);
    return real.ready;
  });
  return {
    ready,
    get sessions() {
      return real?.sessions ?? 0;
    },
    close() {
      closed = true;
      real?.close();
    },
  };
}

export function createEndpoint(...args) {
  if (!rpc) {
    throw makeError('RuntimeError', 'webffi.createRPCEndpoint: the TVM RPC part of the script bundle (dist/webffi.rpc.js) ' +
      'loads on first use; await webffi.loadRPC() first');
  }
  return rpc.createRPCEndpoint(...args);
}
