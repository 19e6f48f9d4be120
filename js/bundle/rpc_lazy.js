// TVM RPC in the script bundle: dist/webffi.rpc.js (js/bundle/rpc_part.js)
// loads on the first call. The async functions load it and call through;
// the classes are these stand-ins until it has loaded (no value is an
// instance of them before), then the real ones (webffi.RPCSession is a live
// binding). The synchronous functions return at once: joinRPCProxy (its
// argument errors reject `ready` until the part has loaded) and
// createRPCEndpoint (below); `await webffi.loadRPC()` loads the part ahead.
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

/**
 * Until the part has loaded, an endpoint that keeps what it is fed (copied)
 * and hands it to the real one once made; what the real one would have
 * thrown then (bad options, a protocol error in the bytes kept) ends it
 * through onClose(error) instead.
 */
export function createEndpoint(rt, options = {}) {
  if (rpc) return rpc.createRPCEndpoint(rt, options);
  let real = null;
  let closed = false;
  const kept = [];
  const end = (error) => {
    if (closed) return;
    closed = true;
    kept.length = 0;
    options?.onClose?.(error);
  };
  loadRPC().then(() => {
    if (closed) return;
    try {
      real = rpc.createRPCEndpoint(rt, options);
    } catch (e) {
      end(e);
      return;
    }
    for (const bytes of kept.splice(0)) {
      try {
        if (real.feed(bytes) === 'closed') break;
      } catch {
        break; // the real endpoint reported it through onClose
      }
    }
  }, end);
  return {
    feed(bytes) {
      if (real) return real.feed(bytes);
      if (closed) throw makeError('RPCError', 'RPC: the session is closed');
      kept.push(new Uint8Array(bytes));
      return 'open';
    },
    close() {
      if (real) real.close();
      else end();
    },
    get closed() {
      return real ? real.closed : closed;
    },
    get handleCount() {
      return real ? real.handleCount : 0;
    },
    get pending() {
      return real ? real.pending : kept.length > 0;
    },
  };
}
