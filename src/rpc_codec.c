/* The TVM RPC wire format: see rpc_codec.h. All integers little-endian. */
#include "rpc_codec.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

/* ----------------------------------------------------------------- buffer */
void wf_rpc_buf_free(wf_rpc_buf* b) {
  free(b->data);
  b->data = NULL;
  b->size = b->capacity = 0;
}

int wf_rpc_buf_put(wf_rpc_buf* b, const void* data, size_t size) {
  if (size == 0) return 0;
  if (size > SIZE_MAX - b->size) return wf_err_raise_oom(SIZE_MAX);
  if (b->size + size > b->capacity) {
    size_t cap = b->capacity ? b->capacity : 64;
    while (cap < b->size + size) cap = cap > SIZE_MAX / 2 ? b->size + size : cap * 2;
    uint8_t* grown = (uint8_t*)realloc(b->data, cap);
    if (grown == NULL) return wf_err_raise_oom(cap);
    b->data = grown;
    b->capacity = cap;
  }
  memcpy(b->data + b->size, data, size);
  b->size += size;
  return 0;
}

int wf_rpc_buf_u32(wf_rpc_buf* b, uint32_t v) {
  uint8_t le[4];
  for (int i = 0; i < 4; ++i) le[i] = (uint8_t)(v >> (8 * i));
  return wf_rpc_buf_put(b, le, 4);
}

int wf_rpc_buf_u64(wf_rpc_buf* b, uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; ++i) le[i] = (uint8_t)(v >> (8 * i));
  return wf_rpc_buf_put(b, le, 8);
}

/* ------------------------------------------------------------------ arena */
struct wf_rpc_block {
  wf_rpc_block* next;
  /* 8-byte aligned payload follows */
  uint64_t align_[];
};

void* wf_rpc_arena_alloc(wf_rpc_arena* a, size_t size) {
  if (size > SIZE_MAX - sizeof(wf_rpc_block) - 8) {
    wf_err_raise_oom(size);
    return NULL;
  }
  wf_rpc_block* blk = (wf_rpc_block*)calloc(1, sizeof(wf_rpc_block) + (size ? size : 1));
  if (blk == NULL) {
    wf_err_raise_oom(size);
    return NULL;
  }
  blk->next = a->head;
  a->head = blk;
  return blk->align_;
}

void wf_rpc_arena_free(wf_rpc_arena* a) {
  while (a->head != NULL) {
    wf_rpc_block* next = a->head->next;
    free(a->head);
    a->head = next;
  }
}

/* ----------------------------------------------------------------- reader */
typedef struct {
  const uint8_t* p;
  size_t left;
  const char* what; /* the packet being read, for messages */
} wf_rpc_reader;

static int wf_rpc_need(wf_rpc_reader* r, uint64_t n, const char* field) {
  if (n > (uint64_t)r->left) {
    return wf_err_raise("ValueError",
                        "RPC %s packet is truncated: %s needs %llu bytes, %llu are left", r->what,
                        field, (unsigned long long)n, (unsigned long long)r->left);
  }
  return 0;
}

/* An n-byte little-endian unsigned integer (n <= 8). */
static int wf_rpc_rd_le(wf_rpc_reader* r, int n, uint64_t* out, const char* field) {
  if (wf_rpc_need(r, (uint64_t)n, field) != 0) return -1;
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= (uint64_t)r->p[i] << (8 * i);
  r->p += n;
  r->left -= (size_t)n;
  *out = v;
  return 0;
}

static int wf_rpc_rd_u32(wf_rpc_reader* r, uint32_t* out, const char* field) {
  uint64_t v;
  if (wf_rpc_rd_le(r, 4, &v, field) != 0) return -1;
  *out = (uint32_t)v;
  return 0;
}

static int wf_rpc_rd_i32(wf_rpc_reader* r, int32_t* out, const char* field) {
  uint32_t v;
  if (wf_rpc_rd_u32(r, &v, field) != 0) return -1;
  memcpy(out, &v, 4);
  return 0;
}

static int wf_rpc_rd_u64(wf_rpc_reader* r, uint64_t* out, const char* field) {
  return wf_rpc_rd_le(r, 8, out, field);
}

/* A run of n bytes, borrowed from the input. */
static int wf_rpc_rd_run(wf_rpc_reader* r, uint64_t n, const uint8_t** out, const char* field) {
  if (wf_rpc_need(r, n, field) != 0) return -1;
  *out = r->p;
  r->p += (size_t)n;
  r->left -= (size_t)n;
  return 0;
}

/* u64 length + bytes, borrowed. */
static int wf_rpc_rd_lenbytes(wf_rpc_reader* r, TVMFFIByteArray* out, const char* field) {
  uint64_t n;
  const uint8_t* p;
  if (wf_rpc_rd_u64(r, &n, field) != 0 || wf_rpc_rd_run(r, n, &p, field) != 0) return -1;
  out->data = (const char*)p;
  out->size = (size_t)n;
  return 0;
}

static int wf_rpc_rd_device(wf_rpc_reader* r, DLDevice* dev) {
  int32_t type, id;
  if (wf_rpc_rd_i32(r, &type, "a device type") != 0 || wf_rpc_rd_i32(r, &id, "a device id") != 0) {
    return -1;
  }
  dev->device_type = (DLDeviceType)type;
  dev->device_id = id;
  return 0;
}

static int wf_rpc_rd_dtype(wf_rpc_reader* r, DLDataType* dt) {
  const uint8_t* p;
  if (wf_rpc_rd_run(r, 4, &p, "a dtype") != 0) return -1;
  dt->code = p[0];
  dt->bits = p[1];
  dt->lanes = (uint16_t)(p[2] | (p[3] << 8));
  return 0;
}

static int wf_rpc_rd_tensor(wf_rpc_reader* r, wf_rpc_arena* a, wf_rpc_tensor* t) {
  int32_t ndim;
  memset(t, 0, sizeof(*t));
  if (wf_rpc_rd_u64(r, &t->data, "a tensor data handle") != 0 ||
      wf_rpc_rd_device(r, &t->t.device) != 0 || wf_rpc_rd_i32(r, &ndim, "a tensor ndim") != 0 ||
      wf_rpc_rd_dtype(r, &t->t.dtype) != 0) {
    return -1;
  }
  if (ndim < 0 || ndim > WF_RPC_MAX_NDIM) {
    return wf_err_raise("ValueError", "RPC %s packet: tensor ndim %d is outside [0, %d]", r->what,
                        (int)ndim, WF_RPC_MAX_NDIM);
  }
  if (wf_rpc_need(r, (uint64_t)ndim * 8, "a tensor shape") != 0) return -1;
  t->t.ndim = ndim;
  t->t.shape = (int64_t*)wf_rpc_arena_alloc(a, (size_t)ndim * sizeof(int64_t));
  if (t->t.shape == NULL) return -1;
  for (int32_t i = 0; i < ndim; ++i) {
    uint64_t v = 0;
    wf_rpc_rd_u64(r, &v, "a tensor shape");
    memcpy(&t->t.shape[i], &v, 8);
  }
  return wf_rpc_rd_u64(r, &t->t.byte_offset, "a tensor byte offset");
}

static int wf_rpc_is_object_index(int32_t ti) {
  return ti >= kTVMFFIStaticObjectBegin || ti == kTVMFFISmallStr || ti == kTVMFFISmallBytes;
}

static int wf_rpc_rd_value(wf_rpc_reader* r, wf_rpc_arena* a, int32_t i, TVMFFIAny* v) {
  int32_t ti;
  memset(v, 0, sizeof(*v));
  if (wf_rpc_rd_i32(r, &ti, "an argument type index") != 0) return -1;
  v->type_index = ti;
  switch (ti) {
    case kTVMFFINone:
      return 0;
    case kTVMFFIInt:
    case kTVMFFIBool:
    case kTVMFFIFloat:
    case kTVMFFIOpaquePtr:
    case kTVMFFIFunction:
    case kTVMFFIModule:
      return wf_rpc_rd_u64(r, &v->v_uint64, "an argument value");
    case kTVMFFIDataType: {
      uint32_t padding;
      return wf_rpc_rd_dtype(r, &v->v_dtype) != 0 ||
                     wf_rpc_rd_u32(r, &padding, "a dtype's padding") != 0
                 ? -1
                 : 0;
    }
    case kTVMFFIDevice:
      return wf_rpc_rd_device(r, &v->v_device);
    case kTVMFFIDLTensorPtr: {
      wf_rpc_tensor* t = (wf_rpc_tensor*)wf_rpc_arena_alloc(a, sizeof(wf_rpc_tensor));
      if (t == NULL || wf_rpc_rd_tensor(r, a, t) != 0) return -1;
      v->v_ptr = t;
      return 0;
    }
    case kTVMFFIRawStr: {
      TVMFFIByteArray s;
      if (wf_rpc_rd_lenbytes(r, &s, "a string") != 0) return -1;
      if (memchr(s.data, 0, s.size) != NULL) {
        return wf_err_raise("ValueError", "RPC %s packet: argument %d, a raw string, holds a NUL byte",
                            r->what, (int)i);
      }
      char* copy = (char*)wf_rpc_arena_alloc(a, s.size + 1);
      if (copy == NULL) return -1;
      memcpy(copy, s.data, s.size);
      v->v_c_str = copy;
      return 0;
    }
    case kTVMFFIByteArrayPtr: {
      TVMFFIByteArray* bytes = (TVMFFIByteArray*)wf_rpc_arena_alloc(a, sizeof(TVMFFIByteArray));
      if (bytes == NULL || wf_rpc_rd_lenbytes(r, bytes, "a byte array") != 0) return -1;
      v->v_ptr = bytes;
      return 0;
    }
    default:
      break;
  }
  if (!wf_rpc_is_object_index(ti)) {
    return wf_err_raise("ValueError",
                        "RPC %s packet: argument %d has type index %d, which the protocol does not "
                        "carry (peers older than TVM's tvm-ffi protocol send type codes there and "
                        "are not supported)",
                        r->what, (int)i, (int)ti);
  }
  wf_rpc_object* o = (wf_rpc_object*)wf_rpc_arena_alloc(a, sizeof(wf_rpc_object));
  if (o == NULL || wf_rpc_rd_u32(r, &o->type_index, "an object's type index") != 0) return -1;
  v->v_ptr = o;
  if (o->type_index == WF_RPC_OBJECT_REF_INDEX) {
    return wf_rpc_rd_u64(r, &o->handle, "an RPCObjectRef handle");
  }
  if (o->type_index == kTVMFFIStr || o->type_index == kTVMFFIBytes) {
    return wf_rpc_rd_lenbytes(r, &o->bytes, "an object's bytes");
  }
  return wf_err_raise("ValueError",
                      "RPC %s packet: argument %d is an object of type index %u; only RPCObjectRef "
                      "(%d), Str and Bytes travel",
                      r->what, (int)i, (unsigned)o->type_index, WF_RPC_OBJECT_REF_INDEX);
}

static int wf_rpc_rd_args(wf_rpc_reader* r, wf_rpc_packet* p) {
  int32_t n;
  if (wf_rpc_rd_i32(r, &n, "the argument count") != 0) return -1;
  /* every argument takes at least its 4-byte type index */
  if (n < 0 || n > WF_RPC_MAX_ARGS || (uint64_t)n * 4 > (uint64_t)r->left) {
    return wf_err_raise("ValueError",
                        "RPC %s packet: argument count %d is impossible (%llu bytes left, at most "
                        "%d arguments)",
                        r->what, (int)n, (unsigned long long)r->left, WF_RPC_MAX_ARGS);
  }
  p->num_args = n;
  if (n == 0) return 0;
  p->args = (TVMFFIAny*)wf_rpc_arena_alloc(&p->arena, (size_t)n * sizeof(TVMFFIAny));
  if (p->args == NULL) return -1;
  for (int32_t i = 0; i < n; ++i) {
    if (wf_rpc_rd_value(r, &p->arena, i, &p->args[i]) != 0) return -1;
  }
  return 0;
}

const char* wf_rpc_code_name(int32_t code) {
  static const char* const names[] = {
      "kNone", "kShutdown", "kInitServer", "kCallFunc", "kReturn", "kException",
      "kCopyFromRemote", "kCopyToRemote", "kCopyAck", "kGetGlobalFunc", "kFreeHandle",
      "kDevSetDevice", "kDevGetAttr", "kDevAllocData", "kDevFreeData", "kDevStreamSync",
      "kCopyAmongRemote", "kDevAllocDataWithScope", "kDevCreateStream", "kDevFreeStream",
      "kDevSetStream", "kDevGetCurrentStream"};
  if (code < 1 || code >= (int32_t)(sizeof(names) / sizeof(names[0]))) return NULL;
  return names[code];
}

int wf_rpc_packet_decode(const uint8_t* body, size_t size, wf_rpc_packet* out) {
  memset(out, 0, sizeof(*out));
  wf_rpc_reader r = {body, size, "(unknown)"};
  if (wf_rpc_rd_i32(&r, &out->code, "the RPC code") != 0) return -1;
  const char* name = wf_rpc_code_name(out->code);
  if (name == NULL) {
    return wf_err_raise("ValueError", "RPC packet has unknown code %d", (int)out->code);
  }
  r.what = name;
  int rc = 0;
  switch (out->code) {
    case kWebFFIRPCShutdown:
      break;
    case kWebFFIRPCInitServer:
      rc = wf_rpc_rd_lenbytes(&r, &out->version, "the protocol version");
      if (rc == 0) rc = wf_rpc_rd_args(&r, out);
      break;
    case kWebFFIRPCCallFunc:
      rc = wf_rpc_rd_u64(&r, &out->handle, "the function handle");
      if (rc == 0) rc = wf_rpc_rd_args(&r, out);
      break;
    case kWebFFIRPCCopyToRemote:
    case kWebFFIRPCCopyFromRemote:
      rc = wf_rpc_rd_tensor(&r, &out->arena, &out->tensor);
      if (rc == 0) rc = wf_rpc_rd_u64(&r, &out->nbytes, "the byte count");
      if (rc == 0 && out->code == kWebFFIRPCCopyToRemote) {
        const uint8_t* d = NULL;
        rc = wf_rpc_rd_run(&r, out->nbytes, &d, "the copied data");
        out->data.data = (const char*)d;
        out->data.size = (size_t)out->nbytes;
      }
      break;
    case kWebFFIRPCCopyAck:
      out->data.data = (const char*)r.p;
      out->data.size = r.left;
      r.p += r.left;
      r.left = 0;
      break;
    default: /* kReturn, kException and the syscalls: an argument list */
      rc = wf_rpc_rd_args(&r, out);
      break;
  }
  if (rc == 0 && r.left != 0) {
    rc = wf_err_raise("ValueError", "RPC %s packet has %llu trailing bytes", name,
                      (unsigned long long)r.left);
  }
  if (rc != 0) wf_rpc_packet_clear(out);
  return rc;
}

void wf_rpc_packet_clear(wf_rpc_packet* p) {
  wf_rpc_arena_free(&p->arena);
  memset(p, 0, sizeof(*p));
}

/* ----------------------------------------------------------------- writer */
static int wf_rpc_put_lenbytes(wf_rpc_buf* b, const void* data, size_t size) {
  return wf_rpc_buf_u64(b, (uint64_t)size) != 0 || wf_rpc_buf_put(b, data, size) != 0 ? -1 : 0;
}

static int wf_rpc_put_device(wf_rpc_buf* b, DLDevice d) {
  return wf_rpc_buf_u32(b, (uint32_t)d.device_type) != 0 ||
                 wf_rpc_buf_u32(b, (uint32_t)d.device_id) != 0
             ? -1
             : 0;
}

static int wf_rpc_put_dtype(wf_rpc_buf* b, DLDataType dt) {
  uint8_t raw[4] = {dt.code, dt.bits, (uint8_t)dt.lanes, (uint8_t)(dt.lanes >> 8)};
  return wf_rpc_buf_put(b, raw, 4);
}

static int wf_rpc_put_tensor(wf_rpc_buf* b, const wf_rpc_tensor* t) {
  if (t->t.ndim < 0 || (t->t.ndim > 0 && t->t.shape == NULL)) {
    return wf_err_raise("ValueError", "RPC: cannot send a tensor with ndim %d", (int)t->t.ndim);
  }
  if (wf_rpc_buf_u64(b, t->data) != 0 || wf_rpc_put_device(b, t->t.device) != 0 ||
      wf_rpc_buf_u32(b, (uint32_t)t->t.ndim) != 0 || wf_rpc_put_dtype(b, t->t.dtype) != 0) {
    return -1;
  }
  for (int32_t i = 0; i < t->t.ndim; ++i) {
    if (wf_rpc_buf_u64(b, (uint64_t)t->t.shape[i]) != 0) return -1;
  }
  return wf_rpc_buf_u64(b, t->t.byte_offset);
}

static int wf_rpc_put_value(wf_rpc_buf* b, const TVMFFIAny* v) {
  int32_t ti = v->type_index;
  if (wf_rpc_buf_u32(b, (uint32_t)ti) != 0) return -1;
  switch (ti) {
    case kTVMFFINone:
      return 0;
    case kTVMFFIInt:
    case kTVMFFIBool:
    case kTVMFFIFloat:
    case kTVMFFIOpaquePtr:
    case kTVMFFIFunction:
    case kTVMFFIModule:
      return wf_rpc_buf_u64(b, v->v_uint64);
    case kTVMFFIDataType:
      return wf_rpc_put_dtype(b, v->v_dtype) != 0 || wf_rpc_buf_u32(b, 0) != 0 ? -1 : 0;
    case kTVMFFIDevice:
      return wf_rpc_put_device(b, v->v_device);
    case kTVMFFIDLTensorPtr:
      if (v->v_ptr == NULL) return wf_err_raise("ValueError", "RPC: NULL tensor value");
      return wf_rpc_put_tensor(b, (const wf_rpc_tensor*)v->v_ptr);
    case kTVMFFIRawStr:
      if (v->v_c_str == NULL) return wf_err_raise("ValueError", "RPC: NULL string value");
      return wf_rpc_put_lenbytes(b, v->v_c_str, strlen(v->v_c_str));
    case kTVMFFIByteArrayPtr: {
      const TVMFFIByteArray* bytes = (const TVMFFIByteArray*)v->v_ptr;
      if (bytes == NULL) return wf_err_raise("ValueError", "RPC: NULL byte array value");
      return wf_rpc_put_lenbytes(b, bytes->data, bytes->size);
    }
    default:
      break;
  }
  const wf_rpc_object* o = (const wf_rpc_object*)v->v_ptr;
  if (!wf_rpc_is_object_index(ti) || o == NULL) {
    return wf_err_raise("ValueError", "RPC: type index %d cannot be sent", (int)ti);
  }
  if (wf_rpc_buf_u32(b, o->type_index) != 0) return -1;
  if (o->type_index == WF_RPC_OBJECT_REF_INDEX) return wf_rpc_buf_u64(b, o->handle);
  if (o->type_index == kTVMFFIStr || o->type_index == kTVMFFIBytes) {
    return wf_rpc_put_lenbytes(b, o->bytes.data, o->bytes.size);
  }
  return wf_err_raise("ValueError", "RPC: an object of type index %u cannot be sent",
                      (unsigned)o->type_index);
}

int wf_rpc_args_encode(wf_rpc_buf* b, const TVMFFIAny* args, int32_t num_args) {
  if (num_args < 0 || (num_args > 0 && args == NULL)) {
    return wf_err_raise("ValueError", "RPC: bad argument list");
  }
  if (wf_rpc_buf_u32(b, (uint32_t)num_args) != 0) return -1;
  for (int32_t i = 0; i < num_args; ++i) {
    if (wf_rpc_put_value(b, &args[i]) != 0) return -1;
  }
  return 0;
}

int wf_rpc_packet_encode(wf_rpc_buf* b, const wf_rpc_packet* p) {
  size_t start = b->size;
  if (wf_rpc_code_name(p->code) == NULL) {
    return wf_err_raise("ValueError", "RPC: cannot send unknown code %d", (int)p->code);
  }
  /* the length is patched in once the body is written */
  if (wf_rpc_buf_u64(b, 0) != 0 || wf_rpc_buf_u32(b, (uint32_t)p->code) != 0) goto fail;
  switch (p->code) {
    case kWebFFIRPCShutdown:
      break;
    case kWebFFIRPCInitServer:
      if (wf_rpc_put_lenbytes(b, p->version.data, p->version.size) != 0 ||
          wf_rpc_args_encode(b, p->args, p->num_args) != 0) {
        goto fail;
      }
      break;
    case kWebFFIRPCCallFunc:
      if (wf_rpc_buf_u64(b, p->handle) != 0 || wf_rpc_args_encode(b, p->args, p->num_args) != 0) {
        goto fail;
      }
      break;
    case kWebFFIRPCCopyToRemote:
    case kWebFFIRPCCopyFromRemote:
      if (wf_rpc_put_tensor(b, &p->tensor) != 0 || wf_rpc_buf_u64(b, p->nbytes) != 0) goto fail;
      if (p->code == kWebFFIRPCCopyToRemote) {
        if ((uint64_t)p->data.size != p->nbytes) {
          wf_err_raise("ValueError", "RPC kCopyToRemote: %llu data bytes for a count of %llu",
                       (unsigned long long)p->data.size, (unsigned long long)p->nbytes);
          goto fail;
        }
        if (wf_rpc_buf_put(b, p->data.data, p->data.size) != 0) goto fail;
      }
      break;
    case kWebFFIRPCCopyAck:
      if (wf_rpc_buf_put(b, p->data.data, p->data.size) != 0) goto fail;
      break;
    default:
      if (wf_rpc_args_encode(b, p->args, p->num_args) != 0) goto fail;
      break;
  }
  {
    uint64_t len = (uint64_t)(b->size - start - 8);
    for (int i = 0; i < 8; ++i) b->data[start + i] = (uint8_t)(len >> (8 * i));
  }
  return 0;
fail:
  b->size = start;
  return -1;
}

/* ------------------------------------------------------------- handshake */
int wf_rpc_handshake_encode(wf_rpc_buf* b, int32_t code, const char* key, size_t key_len) {
  if (key_len > INT32_MAX) return wf_err_raise("ValueError", "RPC handshake: key too long");
  if (wf_rpc_buf_u32(b, (uint32_t)code) != 0) return -1;
  if (key == NULL) return 0;
  return wf_rpc_buf_u32(b, (uint32_t)key_len) != 0 || wf_rpc_buf_put(b, key, key_len) != 0 ? -1
                                                                                            : 0;
}

int wf_rpc_handshake_decode(const uint8_t* data, size_t size, int32_t* code, const char** key,
                            size_t* key_len) {
  wf_rpc_reader r = {data, size, "handshake"};
  int32_t n;
  *key = NULL;
  *key_len = 0;
  if (wf_rpc_rd_i32(&r, code, "the magic") != 0) return -1;
  if (r.left == 0) return 0;
  if (wf_rpc_rd_i32(&r, &n, "the key length") != 0) return -1;
  if (n < 0) return wf_err_raise("ValueError", "RPC handshake: negative key length %d", (int)n);
  const uint8_t* k;
  if (wf_rpc_rd_run(&r, (uint64_t)n, &k, "the key") != 0) return -1;
  if (r.left != 0) {
    return wf_err_raise("ValueError", "RPC handshake has %llu trailing bytes",
                        (unsigned long long)r.left);
  }
  *key = (const char*)k;
  *key_len = (size_t)n;
  return 0;
}
