/*
 * webffi: a TVM RPC server endpoint (TVM's tvm-ffi-era protocol, version
 * string "0.8.0"), transport-agnostic: the owner feeds it the bytes that
 * arrive from one peer, in any chunking, and it hands back the bytes to
 * send through a callback. One endpoint serves one connection.
 *
 *   WebFFIRPCEndpointConfig cfg = {0};
 *   cfg.key = "webffi";                  // the client must send "client:webffi"
 *   cfg.send = my_send; cfg.send_ctx = conn;
 *   static const char* const allow[] = {"ffi.Array*", "mylib.*"};
 *   cfg.allow_list = allow; cfg.allow_count = 2;
 *   WebFFIRPCEndpoint* ep = WebFFIRPCEndpointCreate(&cfg);
 *   // for each chunk received:
 *   int st = WebFFIRPCEndpointFeed(ep, bytes, n);
 *   // st == WEBFFI_RPC_OPEN: keep reading; WEBFFI_RPC_CLOSED: the peer shut
 *   // down, close the connection; -1: close it and report the raised error.
 *   WebFFIRPCEndpointDestroy(ep);        // frees everything the peer held
 *
 * Trust model: the peer reaches only the globals the owner exposes (the
 * allow list or predicate; nothing by default), and the handles it sends are
 * ids looked up in the endpoint's table, never pointers. A request that
 * fails (a bogus or freed handle, a raised error) is answered with
 * kException and the session goes on; a packet that breaks the protocol (a
 * huge length, an unknown code, a truncated body) is answered with
 * kException where framing still allows, and Feed returns -1 with a
 * ValueError raised: the connection must close. Neither disturbs the runtime.
 *
 * What it serves (TVM's RPCCode names): the handshake (answering
 * WEBFFI_RPC_SUCCESS or WEBFFI_RPC_MISMATCH), kInitServer (version "0.8.0"
 * and no session constructor; another version is told and closed),
 * kShutdown, kCallFunc, kGetGlobalFunc (handle 0 for a missing or unexposed
 * name), kFreeHandle, kCopyToRemote, kCopyFromRemote (answered by kCopyAck),
 * and the device syscalls through the device API registry (webffi/
 * device_api.h), so any registered device serves: kDevSetDevice,
 * kDevGetAttr (kExist; others through device_attr, else None), kDevAllocData,
 * kDevAllocDataWithScope (global scope), kDevFreeData, kDevStreamSync,
 * kCopyAmongRemote, and the stream calls on the default stream 0
 * (kDevCreateStream, kDevFreeStream, kDevSetStream, kDevGetCurrentStream).
 * By name (kGetGlobalFunc): the owner's lookup first, then the server
 * functions TVM's client calls (tvm.rpc.server.*, runtime.RPCTimeEvaluator;
 * rpc_server.c), then the exposed globals.
 * kCallFunc results follow TVM's convention: [Int type_index, value], a
 * tensor as [Int 70, DLTensorPtr, OpaquePtr]. kException carries
 * "Kind: message" (TVM's client recognises "RPCSessionTimeoutError: ").
 */
#ifndef WEBFFI_RPC_H_
#define WEBFFI_RPC_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Handshake words (TVM's kRPCMagic and the server's answers). */
#define WEBFFI_RPC_MAGIC 0xff271
#define WEBFFI_RPC_SUCCESS (WEBFFI_RPC_MAGIC + 0)
#define WEBFFI_RPC_DUPLICATE (WEBFFI_RPC_MAGIC + 1)
#define WEBFFI_RPC_MISMATCH (WEBFFI_RPC_MAGIC + 2)
#define WEBFFI_RPC_PROTOCOL_VERSION "0.8.0"

/* TVM's RPCCode values. */
enum {
  kWebFFIRPCNone = 0,
  kWebFFIRPCShutdown = 1,
  kWebFFIRPCInitServer = 2,
  kWebFFIRPCCallFunc = 3,
  kWebFFIRPCReturn = 4,
  kWebFFIRPCException = 5,
  kWebFFIRPCCopyFromRemote = 6,
  kWebFFIRPCCopyToRemote = 7,
  kWebFFIRPCCopyAck = 8,
  kWebFFIRPCGetGlobalFunc = 9,
  kWebFFIRPCFreeHandle = 10,
  kWebFFIRPCDevSetDevice = 11,
  kWebFFIRPCDevGetAttr = 12,
  kWebFFIRPCDevAllocData = 13,
  kWebFFIRPCDevFreeData = 14,
  kWebFFIRPCDevStreamSync = 15,
  kWebFFIRPCCopyAmongRemote = 16,
  kWebFFIRPCDevAllocDataWithScope = 17,
  kWebFFIRPCDevCreateStream = 18,
  kWebFFIRPCDevFreeStream = 19,
  kWebFFIRPCDevSetStream = 20,
  kWebFFIRPCDevGetCurrentStream = 21
};

/* Feed / Complete results. */
#define WEBFFI_RPC_OPEN 0   /* keep the connection, more bytes welcome */
#define WEBFFI_RPC_CLOSED 1 /* the peer sent kShutdown: close cleanly */

typedef struct WebFFIRPCEndpoint WebFFIRPCEndpoint;

/* Sends bytes to the peer. Returns 0, or -1 (with an error raised) when the
 * connection is gone; the endpoint then closes. */
typedef int (*WebFFIRPCSendFn)(void* ctx, const uint8_t* data, size_t size);
/* Whether the global `name` (size bytes, not NUL-terminated) is exposed. */
typedef int (*WebFFIRPCAllowFn)(void* ctx, const char* name, size_t size);
/*
 * The deferral seam for asynchronous devices: waits for a stream. Returns
 * 0 when done, -1 with an error raised, or WEBFFI_RPC_PENDING: the wait goes
 * on and the owner calls WebFFIRPCEndpointComplete(ep, token, status) once
 * it ends. Until then the endpoint answers nothing and queues what it is fed.
 * NULL: the device API's synchronous sync.
 */
#define WEBFFI_RPC_PENDING 2
typedef int (*WebFFIRPCStreamSyncFn)(void* ctx, WebFFIRPCEndpoint* ep, DLDevice device,
                                     uint64_t stream, uint64_t token);
/*
 * The deferral seam for devices whose memory is read asynchronously (WebGPU):
 * reads nbytes at data + offset for kCopyFromRemote. Returns
 * WEBFFI_RPC_PENDING and later calls WebFFIRPCEndpointCompleteCopy(ep,
 * token, bytes, nbytes) (or WebFFIRPCEndpointComplete(ep, token, -1) with an
 * error raised), or -1 with an error raised now. NULL, or a CPU tensor: the
 * device API's synchronous copy.
 */
typedef int (*WebFFIRPCCopyFromFn)(void* ctx, WebFFIRPCEndpoint* ep, DLDevice device, void* data,
                                   uint64_t offset, uint64_t nbytes, uint64_t token);
/*
 * Device attributes (TVM's DeviceAttrKind) beyond kExist: writes an owned
 * value into *out and returns 1, returns 0 for "not known" (answered None),
 * or -1 with an error raised.
 */
typedef int (*WebFFIRPCDeviceAttrFn)(void* ctx, DLDevice device, int32_t kind, TVMFFIAny* out);
/*
 * Resolves kGetGlobalFunc names before the server functions and the exposed
 * globals: writes a new Function reference into *out (NULL: not resolved
 * here). 0, or -1 with an error raised.
 */
typedef int (*WebFFIRPCLookupFn)(void* ctx, const char* name, size_t size,
                                 TVMFFIObjectHandle* out);
/*
 * Session constructors (TVM's session_constructor_args: kInitServer with
 * arguments, args[0] the constructor's name, e.g. "rpc.Connect" to chain to
 * another server). The arguments are ints, floats, bools, None and strings
 * (valid during the call only). Returns -1 with an error raised (answered as
 * kException; the session stays uninitialised) or WEBFFI_RPC_PENDING: the
 * owner calls WebFFIRPCEndpointComplete(ep, token, 0) once the session it
 * made is ready (kReturn is answered, and from then on every packet goes to
 * the forward hook, whole and unread), or with -1 and an error raised.
 * NULL (or no forward hook): only "rpc.LocalSession" is served.
 */
typedef int (*WebFFIRPCConstructFn)(void* ctx, WebFFIRPCEndpoint* ep, const TVMFFIAny* args,
                                    int32_t n, uint64_t token);
/* A forwarded session's packets, each whole (u64 length, code, body). 0, or
 * -1 with an error raised (the endpoint closes). A kShutdown is forwarded,
 * then the endpoint reports WEBFFI_RPC_CLOSED. */
typedef int (*WebFFIRPCForwardFn)(void* ctx, const uint8_t* data, size_t size);
/*
 * Optional zero-copy send of a CPU tensor's bytes for kCopyFromRemote (the
 * header went through send just before): the bytes stay where they are, and
 * unchanged, until the endpoint is released. Returns 0 once done with them,
 * -1 with an error raised, or WEBFFI_RPC_HELD: the transport still reads
 * them. The endpoint then serves nothing (what it is fed is queued, nothing
 * is freed) until WebFFIRPCEndpointRelease(ep); the owner keeps it until
 * then (destroying it frees the tensors that hold those bytes). NULL: send.
 */
#define WEBFFI_RPC_HELD 3

typedef struct WebFFIRPCEndpointConfig {
  /* The server key (e.g. "webffi"): the client's key must be
   * "client:<key>", optionally followed by a space and options. */
  const char* key;
  WebFFIRPCSendFn send;
  void* send_ctx;
  /* Exposed globals: a name in allow_list (an entry ending in '*' is a
   * prefix), or for which allow() returns nonzero. Neither: none. */
  const char* const* allow_list;
  int32_t allow_count;
  WebFFIRPCAllowFn allow;
  void* allow_ctx;
  WebFFIRPCStreamSyncFn stream_sync;
  void* stream_sync_ctx;
  /* Largest packet accepted (0: 64 MiB); larger lengths close the session. */
  uint64_t max_packet_bytes;
  /* Most handles the peer may hold at once (0: 65536). */
  uint32_t max_handles;
  /* Most bytes of device memory the peer may hold at once (0: 1 GiB);
   * a larger kDevAllocData is answered with a MemoryError. */
  uint64_t max_device_bytes;
  /* Serve the work directory functions (tvm.rpc.server.upload, download,
   * remove, listdir, load_module): files kept in memory for this endpoint,
   * loaded by the runtime's wasm module loader. 0: those names are missing.
   * The other server functions (ModuleGetFunction, GetCRTMaxPacketSize,
   * runtime.RPCTimeEvaluator over exposed globals) are always served. */
  int32_t enable_upload;
  /* Most bytes the work directory holds (0: 256 MiB). */
  uint64_t max_upload_bytes;
  WebFFIRPCCopyFromFn copy_from;
  void* copy_from_ctx;
  WebFFIRPCDeviceAttrFn device_attr;
  void* device_attr_ctx;
  WebFFIRPCLookupFn lookup;
  void* lookup_ctx;
  WebFFIRPCConstructFn construct;
  void* construct_ctx;
  WebFFIRPCForwardFn forward;
  void* forward_ctx;
  WebFFIRPCSendFn send_held; /* see WEBFFI_RPC_HELD */
  void* send_held_ctx;
} WebFFIRPCEndpointConfig;

/* A new endpoint waiting for the client's handshake, or NULL with an error
 * raised. The config is copied (the strings too). */
TVM_FFI_DLL WebFFIRPCEndpoint* WebFFIRPCEndpointCreate(const WebFFIRPCEndpointConfig* config);
/* Consumes bytes from the peer, answering every complete request through
 * send. WEBFFI_RPC_OPEN, WEBFFI_RPC_CLOSED, or -1 with a ValueError (the
 * protocol was broken) or the send error raised: close the connection. Once
 * closed, every Feed raises. */
TVM_FFI_DLL int WebFFIRPCEndpointFeed(WebFFIRPCEndpoint* ep, const uint8_t* data, size_t size);
/* Feed without a copy: space for size more input bytes inside the endpoint
 * (valid until the next call on it), or NULL with an error raised (then
 * close); write them there, then WebFFIRPCEndpointCommit(ep, written). */
TVM_FFI_DLL uint8_t* WebFFIRPCEndpointReserve(WebFFIRPCEndpoint* ep, size_t size);
/* Serves the first size bytes written at the last Reserve. As Feed. */
TVM_FFI_DLL int WebFFIRPCEndpointCommit(WebFFIRPCEndpoint* ep, size_t size);
/* Ends a wait that returned WEBFFI_RPC_PENDING: status 0 answers kReturn,
 * -1 answers kException with the raised error (moved out). Then serves the
 * queued input. Returns as Feed does; an unknown token is a ValueError. */
TVM_FFI_DLL int WebFFIRPCEndpointComplete(WebFFIRPCEndpoint* ep, uint64_t token, int status);
/* Ends a wait that WebFFIRPCCopyFromFn deferred: answers kCopyAck with the
 * bytes (size must be the nbytes asked for), then serves the queued input.
 * Returns as Feed does. */
TVM_FFI_DLL int WebFFIRPCEndpointCompleteCopy(WebFFIRPCEndpoint* ep, uint64_t token,
                                              const uint8_t* data, size_t size);
/* Ends a hold (WEBFFI_RPC_HELD): the transport let go of the bytes; serves
 * the queued input. Returns as Feed does; a ValueError when nothing is held. */
TVM_FFI_DLL int WebFFIRPCEndpointRelease(WebFFIRPCEndpoint* ep);
/* Whether the endpoint waits for a Complete or a Release (1) or not (0). */
TVM_FFI_DLL int WebFFIRPCEndpointIsPending(const WebFFIRPCEndpoint* ep);
/* Number of handles the peer holds (functions, objects, data). */
TVM_FFI_DLL int64_t WebFFIRPCEndpointHandleCount(const WebFFIRPCEndpoint* ep);
/* Releases every handle the peer held and the endpoint. NULL is a no-op. */
TVM_FFI_DLL void WebFFIRPCEndpointDestroy(WebFFIRPCEndpoint* ep);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_RPC_H_ */
