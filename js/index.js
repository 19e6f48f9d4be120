// webffi: the tvm-ffi object, function and error system in WebAssembly.
export { load } from './loader.js';
export {
  FFIError, RuntimeError, ValueError, FFITypeError, AttributeError, KeyError, IndexError,
  OverflowError, MemoryError, AssertionError, InternalError, RPCError, RPCSessionTimeoutError,
  OpError, DiagnosticError, ScheduleError,
  FatalError, registerError,
} from './errors.js';
export { Device, DataType, IntValue, FloatValue, asInt, asFloat } from './values.js';
export { FFIObject, isHandle } from './objects.js';
export { ArrayObject, ListObject, MapObject, DictObject, ShapeObject } from './containers.js';
export { ModuleObject } from './module_object.js';
export { encodeValue, decodeValue, registerValueCodec, LIMITS as VALUE_LIMITS } from './clone.js';
// The tensor codec registers at import (listed in package.json's
// sideEffects, so bundlers keep it). serve()'s adapter for TVM RPC sessions
// registers with js/rpc/client.js, so a bundle without RPC drops all of it.
import './tensor_codec.js';
export { serve, connect, Session, transportOf, PROTOCOL_VERSION, SESSION_LIMITS, PEER_DENIED } from './session.js';
export { RemoteObject, RemoteTensor, RemoteFunction, RemoteModule, isRemote } from './remote.js';
export { connectRuntime, RemoteRuntime } from './remote_runtime.js';
export { connectRPC, RPCSession, RPCObject, RPCModule, RPCTensor } from './rpc/client.js';
export { requestRPC, trackerSummary, connectTracker } from './rpc/tracker.js';
export { listenRPC, joinRPCProxy, serveConnection } from './rpc/server.js';
export { createEndpoint as createRPCEndpoint } from './rpc/endpoint.js';
export { RPC_LIMITS, TRACKER_CODE, RPC_TRACKER_MAGIC } from './rpc/constants.js';
export { peerBudget, setPeerBudget } from './peers.js';
