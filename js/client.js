// webffi/client: what a page that only talks to a worker needs (the worker
// loads the runtime and serves it): sessions, remote handles, values and
// errors by value. It imports nothing that loads or runs wasm, so a bundle
// of it stays small (docs/workers.md, "A page that only talks to a worker").
export { connect, Session, transportOf, PROTOCOL_VERSION, SESSION_LIMITS } from './session.js';
export { connectRuntime, RemoteRuntime } from './remote_runtime.js';
export { RemoteObject, RemoteTensor, RemoteFunction, RemoteModule, isRemote } from './remote.js';
export { encodeValue, decodeValue, registerValueCodec, LIMITS as VALUE_LIMITS } from './clone.js';
// CPU tensors that come back by value decode as { shape, dtype, data }.
import './tensor_codec.js';
export {
  FFIError, RuntimeError, ValueError, FFITypeError, AttributeError, KeyError, IndexError,
  OverflowError, MemoryError, AssertionError, InternalError, RPCError, RPCSessionTimeoutError,
  OpError, DiagnosticError, ScheduleError,
  FatalError, registerError,
} from './errors.js';
export { Device, DataType, IntValue, FloatValue, asInt, asFloat } from './values.js';
