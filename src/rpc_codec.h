/* The TVM RPC wire format (tvm-ffi era, protocol "0.8.0"): handshake words,
 * packets (u64 length, i32 RPCCode, body) and argument lists, decoded into
 * and encoded from TVMFFIAny "wire views".
 *
 * A wire view is a TVMFFIAny whose type_index is the type index exactly as
 * it stands on the wire, so a decoded packet re-encodes byte for byte. Its
 * payload is plain data, never a live object, and must not be handed to the
 * runtime as is:
 *   None, Int, Bool, Float, DataType, Device  the value itself
 *   OpaquePtr, Function, Module               v_uint64: the peer's handle
 *   DLTensorPtr                               v_ptr: a wf_rpc_tensor
 *   RawStr                                    v_c_str (NUL-terminated)
 *   ByteArrayPtr                              v_ptr: a TVMFFIByteArray
 *   SmallStr, SmallBytes, any object index    v_ptr: a wf_rpc_object (the
 *                                             inner u32 type index, then a
 *                                             handle or a byte payload)
 * Decoded payloads live in the packet's arena until wf_rpc_packet_clear. */
#ifndef WEBFFI_SRC_RPC_CODEC_H_
#define WEBFFI_SRC_RPC_CODEC_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include <webffi/rpc.h>

/* The inner type index of an RPCObjectRef: kTVMFFIDynObjectBegin - 13, as
 * TVM's rpc_session.h fixes it. */
#define WF_RPC_OBJECT_REF_INDEX 115
/* Decoder bounds: an argument takes at least 4 bytes, so counts are also
 * bounded by the bytes left; these stop silly but well-formed input. */
#define WF_RPC_MAX_ARGS 65536
#define WF_RPC_MAX_NDIM 64

/* ----------------------------------------------------------------- buffer */
typedef struct {
  uint8_t* data;
  size_t size;
  size_t capacity;
} wf_rpc_buf;

void wf_rpc_buf_free(wf_rpc_buf* b);
/* Appends; 0, or -1 with MemoryError raised. */
int wf_rpc_buf_put(wf_rpc_buf* b, const void* data, size_t size);
int wf_rpc_buf_u32(wf_rpc_buf* b, uint32_t v);
int wf_rpc_buf_u64(wf_rpc_buf* b, uint64_t v);

/* ------------------------------------------------------------------ arena */
typedef struct wf_rpc_block wf_rpc_block;
typedef struct {
  wf_rpc_block* head;
} wf_rpc_arena;

/* Zeroed memory owned by the arena, or NULL with MemoryError raised. */
void* wf_rpc_arena_alloc(wf_rpc_arena* a, size_t size);
void wf_rpc_arena_free(wf_rpc_arena* a);

/* ----------------------------------------------------------- wire values */
typedef struct {
  uint64_t data; /* the data handle as on the wire (t.data stays NULL) */
  DLTensor t;    /* device, ndim, dtype, shape (arena), byte_offset */
} wf_rpc_tensor;

typedef struct {
  uint32_t type_index; /* WF_RPC_OBJECT_REF_INDEX, kTVMFFIStr or kTVMFFIBytes */
  uint64_t handle;     /* RPCObjectRef */
  TVMFFIByteArray bytes; /* Str, Bytes */
} wf_rpc_object;

/* ----------------------------------------------------------------- packet */
typedef struct {
  int32_t code;
  uint64_t handle;         /* kCallFunc: the function handle */
  TVMFFIByteArray version; /* kInitServer */
  int32_t num_args;        /* kInitServer, kCallFunc, kReturn, kException, syscalls */
  TVMFFIAny* args;
  wf_rpc_tensor tensor;    /* kCopyToRemote, kCopyFromRemote */
  uint64_t nbytes;         /* kCopyToRemote, kCopyFromRemote */
  TVMFFIByteArray data;    /* kCopyToRemote payload, kCopyAck payload */
  wf_rpc_arena arena;
} wf_rpc_packet;

/* A name for an RPCCode ("kCallFunc"), or NULL for an unknown code. */
const char* wf_rpc_code_name(int32_t code);

/* Decodes one packet body (the bytes after the u64 length: code, then the
 * rest). Every length is checked against the bytes left before use; the
 * body must be consumed exactly. 0, or -1 with ValueError raised (then
 * `out` holds nothing to free). Payloads that are byte runs (copy data,
 * ack data) point into `body`; everything else is in out->arena. */
int wf_rpc_packet_decode(const uint8_t* body, size_t size, wf_rpc_packet* out);
void wf_rpc_packet_clear(wf_rpc_packet* p);

/* Appends the packet with its u64 length prefix. 0, or -1 (error raised:
 * ValueError for a value the wire cannot carry). */
int wf_rpc_packet_encode(wf_rpc_buf* b, const wf_rpc_packet* p);
/* Appends an argument list (count, then each value). */
int wf_rpc_args_encode(wf_rpc_buf* b, const TVMFFIAny* args, int32_t num_args);

/* ------------------------------------------------------------- handshake */
/* The client's opening: magic, key length, key. The server's answer:
 * a code (kRPCSuccess, kRPCMismatch, kRPCDuplicate) then, on success, key
 * length and key. */
int wf_rpc_handshake_encode(wf_rpc_buf* b, int32_t code, const char* key, size_t key_len);
/* Decodes exactly one handshake message of `size` bytes: *key points into
 * data. A bare code (4 bytes) gives key_len 0 and *key NULL. */
int wf_rpc_handshake_decode(const uint8_t* data, size_t size, int32_t* code, const char** key,
                            size_t* key_len);

#endif /* WEBFFI_SRC_RPC_CODEC_H_ */
