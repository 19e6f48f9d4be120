// webffi/client: the worker-session half of webffi, for a page that only
// talks to a worker (types are the main entry's).
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
