// A worker_threads worker as the middle hop of a chained session: it opens
// a TVM RPC session (workerData: target, key, connect: options for
// connectRPC, serveOptions: serve's) and serves it on workerData.port (a
// MessagePort) or to the thread that started it; with workerData.next (a
// MessagePort to another worker session) it forwards to that session
// instead. Used by tests/node/rpc_chain_worker.test.mjs.
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';
import { serve, connect, connectRPC } from '../../js/index.js';

const { target, key, connect: options = {}, serveOptions = {}, port = parentPort, next = null } = workerData;
const session = next ? connect(next) : connectRPC(target, key, { WebSocket, ...options });
serve(session, port, serveOptions);
