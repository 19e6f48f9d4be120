// webffi/client: the worker-session half of webffi, for a page that only
// talks to a worker (types are the main entry's).
/**
 * The session side of webffi alone, for a page that only talks to a worker
 * that owns the runtime: `connect`, `connectRuntime`, the remote handles,
 * `encodeValue` / `decodeValue`, the error classes, `Device` and `DataType`.
 * It imports nothing that loads or runs wasm, so a bundle of it stays small.
 * Each export is the main entry's own (`webffi`), documented there.
 *
 * @example
 * <!-- doc: file=worker.mjs -->
 * ```js
 * // worker.mjs: owns the runtime (in a browser module Worker: serve(load(), self, ...))
 * import { parentPort } from 'node:worker_threads';
 * import { load, serve } from 'webffi';
 * serve(load(), parentPort, { functions: { 'my.add': (a, b) => a + b } });
 * ```
 * ```ts
 * import { connectRuntime } from 'webffi/client'; // no wasm in this thread
 * import { Worker } from 'node:worker_threads';
 * const worker = new Worker(new URL('./worker.mjs', import.meta.url));
 * const remote = await connectRuntime(worker);
 * console.log(await remote.getGlobal('my.add')(40, 2));
 * remote.close();
 * await worker.terminate();
 * ```
 * <!-- doc: output -->
 * ```text
 * 42
 * ```
 * @module webffi/client
 */
export {
  connect, Session, transportOf, PROTOCOL_VERSION, SESSION_LIMITS, SessionOptions, CallOptions, Transport,
  MessagePortLike, EncodedReply,
  connectRuntime, RemoteRuntime,
  RemoteObject, RemoteTensor, RemoteFunction, RemoteModule, isRemote,
  encodeValue, decodeValue, registerValueCodec, VALUE_LIMITS, EncodeOptions, ValueCodec, ValueEncodeContext, ValueDecodeContext,
  FFIError, RuntimeError, ValueError, FFITypeError, AttributeError, KeyError, IndexError,
  OverflowError, MemoryError, AssertionError, InternalError, RPCError, RPCSessionTimeoutError,
  OpError, DiagnosticError, ScheduleError, FatalError, registerError,
  Device, DataType, IntValue, FloatValue, asInt, asFloat,
} from './index.js';
