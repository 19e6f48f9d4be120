// dist/webffi.rpc.js: TVM RPC for the script bundle, loaded on first use
// (js/bundle/rpc_lazy.js). What js/index.js exports from js/rpc/.
export { connectRPC, RPCSession, RPCObject, RPCModule, RPCTensor } from '../rpc/client.js';
export { requestRPC, trackerSummary, connectTracker } from '../rpc/tracker.js';
export { listenRPC, joinRPCProxy, serveConnection } from '../rpc/server.js';
export { createEndpoint as createRPCEndpoint } from '../rpc/endpoint.js';
