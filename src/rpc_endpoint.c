/* A TVM RPC server endpoint, event-driven: see include/webffi/rpc.h.
 *
 * Input is queued and served packet by packet; each request gets exactly one
 * reply unless it is deferred (WEBFFI_RPC_PENDING), when serving stops until
 * WebFFIRPCEndpointComplete. Handles crossing the wire are ids from the
 * table in rpc_handles.c. */
#include <stdlib.h>
#include <string.h>

#include <webffi/device_api.h>
#include <webffi/rpc.h>

#include "device_api.h"
#include "any.h"
#include "error.h"
#include "peer_budget.h"
#include "rpc_codec.h"
#include "rpc_handles.h"
#include "rpc_server.h"
#include "str.h"
#include "tensor.h"

#define WF_RPC_DEFAULT_MAX_PACKET ((uint64_t)64 << 20)
#define WF_RPC_MAX_KEY 4096
/* TVM's DeviceAttrKind::kExist */
#define WF_RPC_ATTR_EXIST 0

enum {
  WF_RPC_WAIT_SYNC = 1,
  WF_RPC_WAIT_COPY = 2,
  WF_RPC_WAIT_TIMER = 3,
  WF_RPC_WAIT_SESSION = 4,
  WF_RPC_WAIT_SEND = 5 /* a held payload: WebFFIRPCEndpointRelease */
};

/* A timer (runtime.RPCTimeEvaluator) on a device that waits asynchronously,
 * run step by step: calls, then a wait for the device, then the clock. */
typedef struct {
  TVMFFIObject* fn; /* the timer Function (a reference) */
  const wf_rpc_timer* t;
  TVMFFIAny* args; /* owned copies of the call's arguments */
  int32_t n;
  double* out;
  int64_t i, number, start, zeros;
  double ms;
  int64_t spent; /* ns run synchronously so far (the waits not counted) */
  int warm; /* waiting for the warm-up call */
} wf_rpc_timing;

typedef enum {
  WF_RPC_HS_MAGIC,
  WF_RPC_HS_KEYLEN,
  WF_RPC_HS_KEY,
  WF_RPC_PACKETS,
  WF_RPC_DONE
} wf_rpc_state;

struct WebFFIRPCEndpoint {
  char* key; /* "server:<key>" */
  size_t key_len;
  WebFFIRPCSendFn send;
  void* send_ctx;
  WebFFIRPCSendFn send_held;
  void* send_held_ctx;
  wf_rpc_policy* policy; /* exposed globals, the work directory */
  WebFFIRPCStreamSyncFn stream_sync;
  void* stream_sync_ctx;
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
  int forwarding; /* a session constructor made the serving session elsewhere */
  uint64_t max_packet;
  uint64_t max_device_bytes;
  uint64_t device_bytes; /* held by the peer now */
  wf_rpc_state state;
  int initialized;
  uint32_t hs_key_len;
  wf_rpc_buf in;
  size_t in_pos;
  wf_rpc_buf out;
  wf_rpc_handles handles;
  int pending; /* 0, or what is awaited: WF_RPC_WAIT_SYNC, WF_RPC_WAIT_COPY */
  uint64_t pending_token;
  uint64_t pending_nbytes; /* WF_RPC_WAIT_COPY */
  size_t reserved;         /* WebFFIRPCEndpointReserve'd input bytes */
  wf_rpc_timing timing;    /* WF_RPC_WAIT_TIMER */
  uint64_t next_token;
  int in_feed; /* guards against re-entrant Feed from inside a call */
};

/* ------------------------------------------------------------------ replies */
static int wf_rpc_flush(WebFFIRPCEndpoint* ep) {
  int rc = 0;
  if (ep->out.size != 0) rc = ep->send(ep->send_ctx, ep->out.data, ep->out.size);
  ep->out.size = 0;
  return rc;
}

static int wf_rpc_reply(WebFFIRPCEndpoint* ep, int32_t code, const TVMFFIAny* args, int32_t n) {
  wf_rpc_packet p;
  memset(&p, 0, sizeof(p));
  p.code = code;
  p.args = (TVMFFIAny*)args;
  p.num_args = n;
  if (wf_rpc_packet_encode(&ep->out, &p) != 0) return -1;
  return wf_rpc_flush(ep);
}

static int wf_rpc_reply_none(WebFFIRPCEndpoint* ep) {
  TVMFFIAny none;
  memset(&none, 0, sizeof(none));
  return wf_rpc_reply(ep, kWebFFIRPCReturn, &none, 1);
}

/* Moves the raised error out as "Kind: message" (malloc'd, NUL-free), and
 * its kind into kind_out (malloc'd). */
static char* wf_rpc_take_error(char** kind_out) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const char* kind = "RuntimeError";
  size_t kind_len = strlen(kind);
  const char* msg = "unknown error";
  size_t msg_len = strlen(msg);
  if (err != NULL) {
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
    kind = cell->kind.data;
    kind_len = cell->kind.size;
    msg = cell->message.data;
    msg_len = cell->message.size;
  }
  char* out = (char*)malloc(kind_len + msg_len + 3);
  char* k = (char*)malloc(kind_len + 1);
  if (out != NULL) {
    memcpy(out, kind, kind_len);
    memcpy(out + kind_len, ": ", 2);
    memcpy(out + kind_len + 2, msg, msg_len);
    out[kind_len + msg_len + 2] = '\0';
  }
  if (k != NULL) {
    memcpy(k, kind, kind_len);
    k[kind_len] = '\0';
  }
  if (err != NULL) TVMFFIObjectDecRef(err);
  if (kind_out != NULL) {
    *kind_out = k;
  } else {
    free(k);
  }
  return out;
}

/* Answers the raised error as kException. */
static int wf_rpc_reply_error(WebFFIRPCEndpoint* ep) {
  char* msg = wf_rpc_take_error(NULL);
  TVMFFIAny v;
  memset(&v, 0, sizeof(v));
  v.type_index = kTVMFFIRawStr;
  v.v_c_str = msg != NULL ? msg : "MemoryError: no memory for the error message";
  int rc = wf_rpc_reply(ep, kWebFFIRPCException, &v, 1);
  free(msg);
  return rc;
}

/* The protocol is broken: tell the peer (kException) when `tell`, then
 * close with the error raised again for the owner. Returns -1. */
static int wf_rpc_fatal(WebFFIRPCEndpoint* ep, int tell) {
  char* kind = NULL;
  char* msg = wf_rpc_take_error(&kind);
  if (tell && msg != NULL && ep->state == WF_RPC_PACKETS) {
    TVMFFIAny v;
    memset(&v, 0, sizeof(v));
    v.type_index = kTVMFFIRawStr;
    v.v_c_str = msg;
    if (wf_rpc_reply(ep, kWebFFIRPCException, &v, 1) != 0) {
      /* the send failed: keep the first error for the owner */
      char* ignored = wf_rpc_take_error(NULL);
      free(ignored);
    }
  }
  ep->state = WF_RPC_DONE;
  if (msg == NULL || kind == NULL) {
    free(msg);
    free(kind);
    return wf_err_raise_oom(0);
  }
  /* msg starts with "Kind: " */
  wf_err_raise(kind, "%s", msg + strlen(kind) + 2);
  free(msg);
  free(kind);
  return -1;
}

/* ------------------------------------------------------------------ values */
static int wf_rpc_arg_type(const wf_rpc_packet* p, int32_t i, int32_t ti, const char* what) {
  if (i >= p->num_args || p->args[i].type_index != ti) {
    return wf_err_raise("TypeError", "RPC %s: argument %d must be %s", wf_rpc_code_name(p->code),
                        (int)i, what);
  }
  return 0;
}

static int wf_rpc_arg_count(const wf_rpc_packet* p, int32_t n) {
  if (p->num_args != n) {
    return wf_err_raise("TypeError", "RPC %s takes %d arguments, got %d",
                        wf_rpc_code_name(p->code), (int)n, (int)p->num_args);
  }
  return 0;
}

static int wf_rpc_same_device(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

/* A wire tensor as a real one over memory the peer was given: the data
 * handle is looked up and [byte_offset, byte_offset + size) must lie in it. */
static int wf_rpc_resolve_tensor(WebFFIRPCEndpoint* ep, const wf_rpc_tensor* w, uint64_t nbytes,
                                 int use_shape, DLTensor* out, wf_rpc_handle** entry) {
  wf_rpc_handle* e = wf_rpc_handles_get(&ep->handles, w->data, WF_RPC_HANDLE_DATA);
  if (e == NULL) return -1;
  if (!wf_rpc_same_device(e->device, w->t.device)) {
    return wf_err_raise("ValueError", "RPC: data handle 0x%llx lives on device (%d, %d), not (%d, %d)",
                        (unsigned long long)w->data, (int)e->device.device_type,
                        (int)e->device.device_id, (int)w->t.device.device_type,
                        (int)w->t.device.device_id);
  }
  *out = w->t;
  out->data = e->data;
  out->strides = NULL;
  if (use_shape) {
    int64_t size = WebFFITensorNumBytes(out);
    if (size < 0) return -1;
    nbytes = (uint64_t)size;
  }
  if (w->t.byte_offset > e->nbytes || nbytes > e->nbytes - w->t.byte_offset) {
    return wf_err_raise("ValueError",
                        "RPC: %llu bytes at offset %llu overrun the %llu bytes of data handle 0x%llx",
                        (unsigned long long)nbytes, (unsigned long long)w->t.byte_offset,
                        (unsigned long long)e->nbytes, (unsigned long long)w->data);
  }
  if (entry != NULL) *entry = e;
  return 0;
}

static int wf_rpc_is_object(const wf_rpc_handle* e, int32_t type_index) {
  return type_index < 0 || e->obj->type_index == type_index;
}

/* The peer's arguments as views the callee can take; `owned` collects the
 * values made here (strings), released after the call. */
static int wf_rpc_to_call_args(WebFFIRPCEndpoint* ep, wf_rpc_packet* p, TVMFFIAny* args,
                               TVMFFIAny* owned, int32_t* n_owned) {
  for (int32_t i = 0; i < p->num_args; ++i) {
    const TVMFFIAny* w = &p->args[i];
    TVMFFIAny* a = &args[i];
    *a = *w;
    switch (w->type_index) {
      case kTVMFFINone:
      case kTVMFFIInt:
      case kTVMFFIBool:
      case kTVMFFIFloat:
      case kTVMFFIDataType:
      case kTVMFFIDevice:
      case kTVMFFIRawStr:
      case kTVMFFIByteArrayPtr:
        break;
      case kTVMFFIOpaquePtr: {
        a->v_int64 = 0;
        if (w->v_uint64 != 0) {
          wf_rpc_handle* e = wf_rpc_handles_get(&ep->handles, w->v_uint64, WF_RPC_HANDLE_DATA);
          if (e == NULL) return -1;
          a->v_ptr = e->data;
        }
        break;
      }
      case kTVMFFIDLTensorPtr: {
        DLTensor* t = (DLTensor*)wf_rpc_arena_alloc(&p->arena, sizeof(DLTensor));
        wf_rpc_handle* e = NULL;
        if (t == NULL) return -1;
        if (wf_rpc_resolve_tensor(ep, (const wf_rpc_tensor*)w->v_ptr, 0, 1, t, &e) != 0) return -1;
        a->v_int64 = 0;
        if (e->obj != NULL && e->obj->type_index == kTVMFFITensor) {
          /* an ffi.Tensor view holding the memory's owner: callees may keep it */
          DLTensor* owner = wf_tensor_dl(e->obj);
          t->byte_offset += (uint64_t)((char*)e->data - (char*)owner->data);
          t->data = owner->data;
          TVMFFIObjectHandle view = NULL;
          if (TVMFFITensorCreateUnsafeView(e->obj, t, &view) != 0) return -1;
          owned[*n_owned].type_index = kTVMFFITensor;
          owned[*n_owned].v_obj = (TVMFFIObject*)view;
          *a = owned[(*n_owned)++];
        } else {
          a->v_ptr = t;
        }
        break;
      }
      case kTVMFFIFunction:
      case kTVMFFIModule: {
        wf_rpc_handle* e = wf_rpc_handles_get(&ep->handles, w->v_uint64, WF_RPC_HANDLE_OBJECT);
        if (e == NULL) return -1;
        if (!wf_rpc_is_object(e, w->type_index)) {
          return wf_err_raise("TypeError", "RPC: argument %d, handle 0x%llx, is not a %s", (int)i,
                              (unsigned long long)w->v_uint64,
                              w->type_index == kTVMFFIFunction ? "Function" : "Module");
        }
        a->v_int64 = 0;
        a->v_obj = e->obj;
        break;
      }
      default: { /* object payloads */
        const wf_rpc_object* o = (const wf_rpc_object*)w->v_ptr;
        if (o->type_index == WF_RPC_OBJECT_REF_INDEX) {
          wf_rpc_handle* e = wf_rpc_handles_get(&ep->handles, o->handle, WF_RPC_HANDLE_OBJECT);
          if (e == NULL) return -1;
          a->type_index = e->obj->type_index;
          a->zero_padding = 0;
          a->v_int64 = 0;
          a->v_obj = e->obj;
        } else {
          if (wf_str_make(o->type_index == kTVMFFIBytes, o->bytes.data, o->bytes.size,
                          &owned[*n_owned]) != 0) {
            return -1;
          }
          *a = owned[(*n_owned)++];
        }
        break;
      }
    }
  }
  return 0;
}

/* The RPC return convention: [Int type_index, value] (a tensor adds its
 * handle: [Int 70, DLTensorPtr, OpaquePtr]). Objects become handles. */
static int wf_rpc_reply_result(WebFFIRPCEndpoint* ep, wf_rpc_arena* arena, const TVMFFIAny* rv) {
  TVMFFIAny out[3];
  int32_t n = 2;
  memset(out, 0, sizeof(out));
  out[0].type_index = kTVMFFIInt;
  out[0].v_int64 = rv->type_index;
  out[1] = *rv;
  TVMFFIByteArray view;
  switch (rv->type_index) {
    case kTVMFFINone:
    case kTVMFFIInt:
    case kTVMFFIBool:
    case kTVMFFIFloat:
    case kTVMFFIDataType:
    case kTVMFFIDevice:
      break;
    case kTVMFFIOpaquePtr:
      if (rv->v_ptr != NULL) {
        return wf_err_raise("TypeError", "RPC: the function returned a raw pointer, which cannot "
                                         "cross to the peer");
      }
      out[1].v_uint64 = 0;
      break;
    case kTVMFFISmallStr:
    case kTVMFFIStr:
    case kTVMFFIRawStr: {
      wf_any_string_view(rv, &view);
      char* s = (char*)wf_rpc_arena_alloc(arena, view.size + 1);
      if (s == NULL) return -1;
      memcpy(s, view.data, view.size);
      out[1].type_index = kTVMFFIRawStr;
      out[1].v_int64 = 0;
      out[1].v_c_str = s; /* TVM's convention: a C string (stops at a NUL) */
      break;
    }
    case kTVMFFISmallBytes:
    case kTVMFFIBytes:
    case kTVMFFIByteArrayPtr: {
      TVMFFIByteArray* b = (TVMFFIByteArray*)wf_rpc_arena_alloc(arena, sizeof(TVMFFIByteArray));
      if (b == NULL) return -1;
      wf_any_bytes_view(rv, b);
      out[1].type_index = kTVMFFIByteArrayPtr;
      out[1].v_int64 = 0;
      out[1].v_ptr = b;
      break;
    }
    case kTVMFFITensor: {
      DLTensor* dl = wf_tensor_dl(rv->v_obj);
      if (!wf_tensor_is_contiguous(dl)) {
        return wf_err_raise("ValueError", "RPC: a returned tensor must be contiguous");
      }
      int64_t size = WebFFITensorNumBytes(dl);
      if (size < 0) return -1;
      wf_rpc_tensor* w = (wf_rpc_tensor*)wf_rpc_arena_alloc(arena, sizeof(wf_rpc_tensor));
      if (w == NULL) return -1;
      uint64_t obj_id = wf_rpc_handles_add_object(&ep->handles, rv->v_obj);
      if (obj_id == 0) return -1;
      w->data = wf_rpc_handles_add_data(&ep->handles, dl->device, dl->data,
                                        dl->byte_offset + (uint64_t)size, rv->v_obj);
      if (w->data == 0) {
        wf_rpc_handles_free(&ep->handles, obj_id, WF_RPC_HANDLE_OBJECT);
        return -1;
      }
      /* the data handle goes when the peer frees the tensor */
      wf_rpc_handles_get(&ep->handles, obj_id, WF_RPC_HANDLE_OBJECT)->linked = w->data;
      w->t = *dl;
      w->t.data = NULL;
      out[1].type_index = kTVMFFIDLTensorPtr;
      out[1].v_int64 = 0;
      out[1].v_ptr = w;
      out[2].type_index = kTVMFFIOpaquePtr;
      out[2].v_uint64 = obj_id;
      n = 3;
      break;
    }
    default:
      if (rv->type_index < kTVMFFIStaticObjectBegin) {
        return wf_err_raise("TypeError", "RPC: a result of type index %d cannot cross to the peer",
                            (int)rv->type_index);
      }
      out[1].type_index = kTVMFFIOpaquePtr;
      out[1].v_int64 = 0;
      out[1].v_uint64 = wf_rpc_handles_add_object(&ep->handles, rv->v_obj);
      if (out[1].v_uint64 == 0) return -1;
      break;
  }
  return wf_rpc_reply(ep, kWebFFIRPCReturn, out, n);
}

/* A device attribute: a number, or a string as TVM sends it (RawStr). */
static int wf_rpc_reply_result_value(WebFFIRPCEndpoint* ep, wf_rpc_arena* arena,
                                     const TVMFFIAny* v) {
  TVMFFIAny out = *v;
  TVMFFIByteArray view;
  if (wf_any_string_view(v, &view)) {
    char* s = (char*)wf_rpc_arena_alloc(arena, view.size + 1);
    if (s == NULL) return -1;
    memcpy(s, view.data, view.size);
    memset(&out, 0, sizeof(out));
    out.type_index = kTVMFFIRawStr;
    out.v_c_str = s;
  } else if (v->type_index != kTVMFFIInt && v->type_index != kTVMFFIFloat &&
             v->type_index != kTVMFFIBool && v->type_index != kTVMFFINone) {
    return wf_err_raise("TypeError", "RPC kDevGetAttr: an attribute must be a number or a string");
  }
  return wf_rpc_reply(ep, kWebFFIRPCReturn, &out, 1);
}

/* ---------------------------------------------------------------- requests */

static void wf_rpc_timing_clear(wf_rpc_timing* r) {
  for (int32_t i = 0; i < r->n; ++i) wf_any_release(&r->args[i]);
  free(r->args);
  free(r->out);
  if (r->fn != NULL) TVMFFIObjectDecRef(r->fn);
  memset(r, 0, sizeof(*r));
}

/* Waits for the timer's device: 1 done at once, 0 deferred, -1 failed. */
static int wf_rpc_timing_wait(WebFFIRPCEndpoint* ep) {
  uint64_t token = ++ep->next_token;
  int rc = ep->stream_sync(ep->stream_sync_ctx, ep, ep->timing.t->dev, 0, token);
  if (rc == WEBFFI_RPC_PENDING) {
    ep->pending = WF_RPC_WAIT_TIMER;
    ep->pending_token = token;
    return 0;
  }
  return rc == 0 ? 1 : -1;
}

/* Goes on after a wait ended (TVM's loop, see rpc_server.c): 0 when
 * answered or waiting again, -1 with an error raised. */
static int wf_rpc_timing_run(WebFFIRPCEndpoint* ep) {
  wf_rpc_timing* r = &ep->timing;
  const wf_rpc_timer* t = r->t;
  int64_t resumed = wf_rpc_now_ns();
  for (;;) {
    int next_repeat = 0;
    if (r->warm) {
      r->warm = 0;
      next_repeat = 1;
    } else {
      int64_t ns = wf_rpc_now_ns() - r->start;
      if (ns == 0) r->zeros++;
      r->ms = (double)ns / 1e6;
      if (!(r->ms < (double)t->min_repeat_ms && r->zeros < t->limit_zero)) {
        r->out[r->i++] = r->ms / 1e3 / (double)r->number;
        if (r->i == t->repeat) {
          TVMFFIAny v;
          wf_any_set_none(&v);
          if (wf_str_make(1, (const char*)r->out, (size_t)t->repeat * sizeof(double), &v) != 0) {
            return -1;
          }
          wf_rpc_arena arena = {0};
          int rc = wf_rpc_reply_result(ep, &arena, &v);
          wf_rpc_arena_free(&arena);
          wf_any_release(&v);
          wf_rpc_timing_clear(r);
          return rc;
        }
        next_repeat = 1;
      }
    }
    if (next_repeat) {
      r->ms = 0.0;
      r->zeros = 0;
      if (t->preproc != NULL && wf_rpc_call_discard(t->preproc, r->args, r->n) != 0) return -1;
    }
    if (r->ms > 0.0) {
      double grown = (double)t->min_repeat_ms / (r->ms / (double)r->number) + 1;
      double golden = (double)r->number * 1.618;
      double next = grown > golden ? grown : golden;
      r->number = next < 1e12 ? (int64_t)next : (int64_t)1e12; /* the budget stops it first */
    }
    r->start = wf_rpc_now_ns();
    for (int64_t j = 0; j < r->number; ++j) {
      if (wf_rpc_call_discard(t->pf, r->args, r->n) != 0) return -1;
    }
    int64_t now = wf_rpc_now_ns();
    if (wf_rpc_timer_over(r->spent + (now - resumed)) != 0) return -1;
    int w = wf_rpc_timing_wait(ep);
    if (w == 0) r->spent += now - resumed; /* others are served while the device works */
    if (w <= 0) return w;
  }
}

/* Starts a timer whose device waits asynchronously; the arguments are
 * copied, since they must outlive this packet. 0 (answered or deferred) or
 * -1 with an error raised. */
static int wf_rpc_timing_start(WebFFIRPCEndpoint* ep, TVMFFIObject* fn, const wf_rpc_timer* t,
                               const TVMFFIAny* args, int32_t n) {
  wf_rpc_timing* r = &ep->timing;
  memset(r, 0, sizeof(*r));
  r->fn = fn;
  TVMFFIObjectIncRef(fn);
  r->t = t;
  r->number = t->number;
  r->warm = 1;
  r->out = (double*)calloc((size_t)t->repeat, sizeof(double));
  r->args = (TVMFFIAny*)calloc(n > 0 ? (size_t)n : 1, sizeof(TVMFFIAny));
  if (r->out == NULL || r->args == NULL) {
    wf_rpc_timing_clear(r);
    return wf_err_raise_oom(0);
  }
  for (int32_t i = 0; i < n; ++i) {
    TVMFFIByteArray view;
    const TVMFFIAny* a = &args[i];
    int rc = 0;
    if (a->type_index == kTVMFFIRawStr) {
      wf_any_string_view(a, &view);
      rc = wf_str_make(0, view.data, view.size, &r->args[i]);
    } else if (a->type_index == kTVMFFIByteArrayPtr) {
      wf_any_bytes_view(a, &view);
      rc = wf_str_make(1, view.data, view.size, &r->args[i]);
    } else if (a->type_index == kTVMFFIDLTensorPtr || a->type_index == kTVMFFIOpaquePtr) {
      rc = wf_err_raise("ValueError", "RPC: timing on a device that waits asynchronously takes "
                                      "tensors allocated with an alignment up to 64, and no "
                                      "raw pointers");
    } else {
      r->args[i] = *a;
      if (a->type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectIncRef(a->v_obj);
    }
    if (rc != 0) {
      wf_rpc_timing_clear(r);
      return -1;
    }
    r->n = i + 1;
  }
  int w = -1;
  if (wf_rpc_call_discard(t->pf, r->args, r->n) == 0) w = wf_rpc_timing_wait(ep);
  if (w > 0) w = wf_rpc_timing_run(ep);
  if (w < 0) {
    wf_rpc_timing_clear(r);
    return -1;
  }
  return 0;
}

static int wf_rpc_call_func(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  wf_rpc_handle* f = wf_rpc_handles_get(&ep->handles, p->handle, WF_RPC_HANDLE_OBJECT);
  if (f == NULL) return -1;
  if (f->obj->type_index != kTVMFFIFunction) {
    return wf_err_raise("TypeError", "RPC kCallFunc: handle 0x%llx is not a function",
                        (unsigned long long)p->handle);
  }
  int32_t n = p->num_args;
  TVMFFIAny* args = NULL;
  TVMFFIAny* owned = NULL;
  int32_t n_owned = 0;
  if (n > 0) {
    args = (TVMFFIAny*)wf_rpc_arena_alloc(&p->arena, (size_t)n * sizeof(TVMFFIAny));
    owned = (TVMFFIAny*)wf_rpc_arena_alloc(&p->arena, (size_t)n * sizeof(TVMFFIAny));
    if (args == NULL || owned == NULL) return -1;
  }
  int rc = wf_rpc_to_call_args(ep, p, args, owned, &n_owned);
  TVMFFIAny result;
  memset(&result, 0, sizeof(result));
  const wf_rpc_timer* timer = wf_rpc_timer_of(f->obj);
  int timed = 0;
  if (rc == 0 && timer != NULL && timer->dev.device_type != kDLCPU && ep->stream_sync != NULL) {
    rc = wf_rpc_timing_start(ep, f->obj, timer, args, n);
    timed = 1;
  } else if (rc == 0) {
    rc = TVMFFIFunctionCall(f->obj, args, n, &result);
  }
  for (int32_t i = 0; i < n_owned; ++i) {
    if (owned[i].type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(owned[i].v_obj);
  }
  if (rc != 0) return -1;
  if (timed) return 0; /* answered by the timing run */
  rc = wf_rpc_reply_result(ep, &p->arena, &result);
  if (result.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(result.v_obj);
  return rc;
}

static int wf_rpc_get_global(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  if (wf_rpc_arg_count(p, 1) != 0 || wf_rpc_arg_type(p, 0, kTVMFFIRawStr, "a name") != 0) {
    return -1;
  }
  TVMFFIByteArray name = {p->args[0].v_c_str, strlen(p->args[0].v_c_str)};
  TVMFFIAny out;
  memset(&out, 0, sizeof(out));
  out.type_index = kTVMFFIOpaquePtr;
  TVMFFIObjectHandle f = NULL;
  /* the owner's names, then the server functions, then exposed globals */
  if (ep->lookup != NULL && ep->lookup(ep->lookup_ctx, name.data, name.size, &f) != 0) return -1;
  if (f == NULL && wf_rpc_server_function(ep->policy, name.data, name.size, (TVMFFIObject**)&f) != 0) {
    return -1;
  }
  if (f == NULL && wf_rpc_policy_allows(ep->policy, name.data, name.size) &&
      TVMFFIFunctionGetGlobal(&name, &f) != 0) {
    return -1;
  }
  {
    if (f != NULL) {
      out.v_uint64 = wf_rpc_handles_add_object(&ep->handles, (TVMFFIObject*)f);
      TVMFFIObjectDecRef(f);
      if (out.v_uint64 == 0) return -1;
    }
  }
  /* not exposed reads as missing: handle 0, as TVM answers a missing name */
  return wf_rpc_reply(ep, kWebFFIRPCReturn, &out, 1);
}

static const WebFFIDeviceAPI* wf_rpc_device(const wf_rpc_packet* p, int32_t i, DLDevice* dev) {
  if (wf_rpc_arg_type(p, i, kTVMFFIDevice, "a Device") != 0) return NULL;
  *dev = p->args[i].v_device;
  return WebFFIDeviceAPIGet(dev->device_type);
}

/* Streams: every device serves on its default stream (0). */
static int wf_rpc_check_stream(const wf_rpc_packet* p, int32_t i) {
  if (wf_rpc_arg_type(p, i, kTVMFFIOpaquePtr, "a stream handle") != 0) return -1;
  if (p->args[i].v_uint64 != 0) {
    return wf_err_raise("ValueError", "RPC %s: unknown stream 0x%llx (only the default stream, 0)",
                        wf_rpc_code_name(p->code), (unsigned long long)p->args[i].v_uint64);
  }
  return 0;
}

static int wf_rpc_reply_handle(WebFFIRPCEndpoint* ep, uint64_t id) {
  TVMFFIAny out;
  memset(&out, 0, sizeof(out));
  out.type_index = kTVMFFIOpaquePtr;
  out.v_uint64 = id;
  return wf_rpc_reply(ep, kWebFFIRPCReturn, &out, 1);
}

static int wf_rpc_alloc(WebFFIRPCEndpoint* ep, DLDevice dev, const WebFFIDeviceAPI* api,
                        uint64_t nbytes, uint64_t alignment) {
  if (nbytes > ep->max_device_bytes - ep->device_bytes) {
    return wf_err_raise("MemoryError",
                        "RPC: allocating %llu bytes would pass the session's limit of %llu bytes "
                        "(%llu held)",
                        (unsigned long long)nbytes, (unsigned long long)ep->max_device_bytes,
                        (unsigned long long)ep->device_bytes);
  }
  if (!wf_peer_device_take(nbytes)) {
    return wf_err_raise("MemoryError",
                        "RPC: allocating %llu bytes would pass the runtime's peer budget of %llu "
                        "bytes of device memory, which every session shares (%llu held)",
                        (unsigned long long)nbytes, (unsigned long long)wf_peer_device_budget(),
                        (unsigned long long)wf_peer_device_held());
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) {
    wf_peer_device_give(nbytes);
    return wf_err_raise("ValueError", "RPC: alignment %llu is not a power of two up to 4096",
                        (unsigned long long)alignment);
  }
  uint64_t id;
  if (nbytes > 0 && alignment <= 64) {
    /* memory owned by a tensor, so a call's tensor argument can be an
     * ffi.Tensor view that keeps it alive (what JS callees and the WebGPU
     * kernels take), whatever the peer frees meanwhile */
    int64_t shape[1] = {(int64_t)nbytes};
    DLTensor proto;
    memset(&proto, 0, sizeof(proto));
    proto.device = dev;
    proto.ndim = 1;
    proto.dtype.code = kDLUInt;
    proto.dtype.bits = 8;
    proto.dtype.lanes = 1;
    proto.shape = shape;
    TVMFFIObjectHandle owner = NULL;
    wf_peer_device_precharged_begin(); /* charged above: the backend does not charge it again */
    int rc = TVMFFIEnvTensorAlloc(&proto, &owner);
    wf_peer_device_precharged_end();
    if (rc != 0) {
      wf_peer_device_give(nbytes);
      return -1;
    }
    DLTensor* dl = wf_tensor_dl((TVMFFIObject*)owner);
    id = wf_rpc_handles_add_data(&ep->handles, dev, (char*)dl->data + dl->byte_offset, nbytes,
                                 (TVMFFIObject*)owner);
    TVMFFIObjectDecRef(owner);
    if (id == 0) {
      wf_peer_device_give(nbytes);
      return -1;
    }
  } else {
    wf_peer_device_precharged_begin();
    void* data = api->alloc(api->ctx, dev, nbytes ? (size_t)nbytes : 1, (size_t)alignment);
    wf_peer_device_precharged_end();
    if (data == NULL) {
      wf_peer_device_give(nbytes);
      return -1;
    }
    id = wf_rpc_handles_add_data(&ep->handles, dev, data, nbytes, NULL);
    if (id == 0) {
      api->free(api->ctx, dev, data);
      wf_peer_device_give(nbytes);
      return -1;
    }
  }
  wf_rpc_handles_get(&ep->handles, id, WF_RPC_HANDLE_DATA)->counted = 1;
  ep->device_bytes += nbytes;
  return wf_rpc_reply_handle(ep, id);
}

/* Replies (or defers) a stream wait. */
static int wf_rpc_stream_sync(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  DLDevice dev;
  const WebFFIDeviceAPI* api = wf_rpc_device(p, 0, &dev);
  if (api == NULL || wf_rpc_arg_count(p, 2) != 0 || wf_rpc_check_stream(p, 1) != 0) return -1;
  if (ep->stream_sync != NULL) {
    uint64_t token = ++ep->next_token;
    int rc = ep->stream_sync(ep->stream_sync_ctx, ep, dev, 0, token);
    if (rc == WEBFFI_RPC_PENDING) {
      ep->pending = WF_RPC_WAIT_SYNC;
      ep->pending_token = token;
      return 0;
    }
    if (rc != 0) return -1;
  } else if (api->sync(api->ctx, dev, NULL) != 0) {
    return -1;
  }
  return wf_rpc_reply_none(ep);
}

/* kCopyAck with n bytes: a large payload goes out straight from where it
 * lies, after the header, instead of being copied into the output buffer;
 * `stays` (a CPU tensor's bytes, which nothing changes while the endpoint
 * waits) lets the transport keep reading them after the call (a hold). */
static int wf_rpc_send_ack(WebFFIRPCEndpoint* ep, const char* data, size_t n, int stays) {
  if (n <= ((size_t)64 << 10)) {
    wf_rpc_packet ack;
    memset(&ack, 0, sizeof(ack));
    ack.code = kWebFFIRPCCopyAck;
    ack.data.data = data;
    ack.data.size = n;
    return wf_rpc_packet_encode(&ep->out, &ack) != 0 ? -1 : wf_rpc_flush(ep);
  }
  if (wf_rpc_buf_u64(&ep->out, (uint64_t)n + 4) != 0 ||
      wf_rpc_buf_u32(&ep->out, kWebFFIRPCCopyAck) != 0 || wf_rpc_flush(ep) != 0) {
    return -1;
  }
  if (!stays || ep->send_held == NULL) return ep->send(ep->send_ctx, (const uint8_t*)data, n);
  int rc = ep->send_held(ep->send_held_ctx, (const uint8_t*)data, n);
  if (rc == WEBFFI_RPC_HELD) {
    /* nothing is served (so nothing freed or written) until the release */
    ep->pending = WF_RPC_WAIT_SEND;
    ep->pending_token = 0; /* no Complete ends it */
    return 0;
  }
  return rc;
}

static int wf_rpc_copy(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  DLTensor t;
  if (wf_rpc_resolve_tensor(ep, &p->tensor, p->nbytes, 0, &t, NULL) != 0) return -1;
  const WebFFIDeviceAPI* api = WebFFIDeviceAPIGet(t.device.device_type);
  if (api == NULL) return -1;
  DLDevice cpu = {kDLCPU, 0};
  size_t n = (size_t)p->nbytes;
  if (p->code == kWebFFIRPCCopyToRemote) {
    if (api->copy(api->ctx, p->data.data, 0, cpu, t.data, (size_t)t.byte_offset, t.device, n,
                  NULL) != 0 ||
        api->sync(api->ctx, t.device, NULL) != 0) {
      return -1;
    }
    return wf_rpc_reply_none(ep);
  }
  const char* from = NULL;
  char* tmp = NULL;
  if (t.device.device_type != kDLCPU && ep->copy_from != NULL) {
    uint64_t token = ++ep->next_token;
    int rc = ep->copy_from(ep->copy_from_ctx, ep, t.device, t.data, t.byte_offset, p->nbytes, token);
    if (rc == WEBFFI_RPC_PENDING) {
      ep->pending = WF_RPC_WAIT_COPY;
      ep->pending_token = token;
      ep->pending_nbytes = p->nbytes;
      return 0;
    }
    if (rc != 0) return -1;
    return wf_err_raise("ValueError", "RPC: the copy_from hook must defer (WEBFFI_RPC_PENDING) or fail");
  }
  if (t.device.device_type == kDLCPU) {
    from = (const char*)t.data + t.byte_offset;
  } else {
    tmp = (char*)malloc(n ? n : 1);
    if (tmp == NULL) return wf_err_raise_oom(n);
    if (api->copy(api->ctx, t.data, (size_t)t.byte_offset, t.device, tmp, 0, cpu, n, NULL) != 0 ||
        api->sync(api->ctx, t.device, NULL) != 0) {
      free(tmp);
      return -1;
    }
    from = tmp;
  }
  int rc = wf_rpc_send_ack(ep, from, n, tmp == NULL);
  free(tmp);
  return rc != 0 ? -1 : wf_rpc_flush(ep);
}

static int wf_rpc_copy_among(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  if (wf_rpc_arg_count(p, 3) != 0 || wf_rpc_arg_type(p, 0, kTVMFFIDLTensorPtr, "a tensor") != 0 ||
      wf_rpc_arg_type(p, 1, kTVMFFIDLTensorPtr, "a tensor") != 0 || wf_rpc_check_stream(p, 2) != 0) {
    return -1;
  }
  DLTensor from, to;
  if (wf_rpc_resolve_tensor(ep, (const wf_rpc_tensor*)p->args[0].v_ptr, 0, 1, &from, NULL) != 0 ||
      wf_rpc_resolve_tensor(ep, (const wf_rpc_tensor*)p->args[1].v_ptr, 0, 1, &to, NULL) != 0 ||
      WebFFIDLTensorCopy(&from, &to) != 0) {
    return -1;
  }
  return wf_rpc_reply_none(ep);
}

/* One device syscall; 0 when answered (or deferred), -1 with an error
 * raised (answered by the caller as kException). */
static int wf_rpc_syscall(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  DLDevice dev;
  const WebFFIDeviceAPI* api;
  switch (p->code) {
    case kWebFFIRPCGetGlobalFunc:
      return wf_rpc_get_global(ep, p);
    case kWebFFIRPCFreeHandle:
      if (wf_rpc_arg_count(p, 1) != 0 || wf_rpc_arg_type(p, 0, kTVMFFIOpaquePtr, "a handle") != 0 ||
          wf_rpc_handles_free(&ep->handles, p->args[0].v_uint64, WF_RPC_HANDLE_OBJECT) != 0) {
        return -1;
      }
      return wf_rpc_reply_none(ep);
    case kWebFFIRPCDevSetDevice:
      if (wf_rpc_arg_count(p, 1) != 0 || wf_rpc_device(p, 0, &dev) == NULL) return -1;
      return wf_rpc_reply_none(ep);
    case kWebFFIRPCDevGetAttr: {
      if (wf_rpc_arg_count(p, 2) != 0 || wf_rpc_arg_type(p, 0, kTVMFFIDevice, "a Device") != 0 ||
          wf_rpc_arg_type(p, 1, kTVMFFIInt, "an attribute kind") != 0) {
        return -1;
      }
      TVMFFIAny out;
      memset(&out, 0, sizeof(out));
      if (p->args[1].v_int64 == WF_RPC_ATTR_EXIST) {
        out.type_index = kTVMFFIInt;
        out.v_int64 = wf_device_api_find(p->args[0].v_device.device_type) != NULL;
      } else if (wf_rpc_device(p, 0, &dev) == NULL) {
        return -1;
      } else if (ep->device_attr != NULL) {
        int rc = ep->device_attr(ep->device_attr_ctx, dev, (int32_t)p->args[1].v_int64, &out);
        if (rc < 0) return -1;
        if (rc > 0) {
          int sent = wf_rpc_reply_result_value(ep, &p->arena, &out);
          wf_any_release(&out);
          return sent;
        }
        memset(&out, 0, sizeof(out));
      } /* unknown attributes: None, as TVM's CPU device answers them */
      return wf_rpc_reply(ep, kWebFFIRPCReturn, &out, 1);
    }
    case kWebFFIRPCDevAllocData:
      if (wf_rpc_arg_count(p, 4) != 0 || (api = wf_rpc_device(p, 0, &dev)) == NULL ||
          wf_rpc_arg_type(p, 1, kTVMFFIInt, "a byte count") != 0 ||
          wf_rpc_arg_type(p, 2, kTVMFFIInt, "an alignment") != 0 ||
          wf_rpc_arg_type(p, 3, kTVMFFIDataType, "a DataType") != 0) {
        return -1;
      }
      if (p->args[1].v_int64 < 0) {
        return wf_err_raise("ValueError", "RPC kDevAllocData: negative byte count");
      }
      return wf_rpc_alloc(ep, dev, api, p->args[1].v_uint64, p->args[2].v_uint64);
    case kWebFFIRPCDevAllocDataWithScope: {
      if (wf_rpc_arg_count(p, 2) != 0 ||
          wf_rpc_arg_type(p, 0, kTVMFFIDLTensorPtr, "a tensor") != 0) {
        return -1;
      }
      const TVMFFIAny* scope = &p->args[1];
      if (scope->type_index != kTVMFFINone &&
          !(scope->type_index == kTVMFFIRawStr && strcmp(scope->v_c_str, "global") == 0)) {
        return wf_err_raise("ValueError", "RPC kDevAllocDataWithScope: only the global memory "
                                          "scope is served");
      }
      const wf_rpc_tensor* w = (const wf_rpc_tensor*)p->args[0].v_ptr;
      DLTensor t = w->t;
      t.data = NULL;
      t.strides = NULL;
      int64_t nbytes = WebFFITensorNumBytes(&t);
      if (nbytes < 0) return -1;
      api = WebFFIDeviceAPIGet(t.device.device_type);
      if (api == NULL) return -1;
      return wf_rpc_alloc(ep, t.device, api, (uint64_t)nbytes, 64);
    }
    case kWebFFIRPCDevFreeData: {
      if (wf_rpc_arg_count(p, 2) != 0 || wf_rpc_device(p, 0, &dev) == NULL ||
          wf_rpc_arg_type(p, 1, kTVMFFIOpaquePtr, "a data handle") != 0) {
        return -1;
      }
      wf_rpc_handle* e = wf_rpc_handles_get(&ep->handles, p->args[1].v_uint64, WF_RPC_HANDLE_DATA);
      if (e == NULL) return -1;
      if (!wf_rpc_same_device(e->device, dev)) {
        return wf_err_raise("ValueError", "RPC kDevFreeData: the handle lives on another device");
      }
      uint64_t held = e->counted ? e->nbytes : 0;
      if (wf_rpc_handles_free(&ep->handles, p->args[1].v_uint64, WF_RPC_HANDLE_DATA) != 0) return -1;
      ep->device_bytes -= held;
      wf_peer_device_give(held);
      return wf_rpc_reply_none(ep);
    }
    case kWebFFIRPCDevStreamSync:
      return wf_rpc_stream_sync(ep, p);
    case kWebFFIRPCCopyAmongRemote:
      return wf_rpc_copy_among(ep, p);
    case kWebFFIRPCDevCreateStream:
    case kWebFFIRPCDevGetCurrentStream:
      if (wf_rpc_arg_count(p, 1) != 0 || wf_rpc_device(p, 0, &dev) == NULL) return -1;
      return wf_rpc_reply_handle(ep, 0);
    case kWebFFIRPCDevFreeStream:
    case kWebFFIRPCDevSetStream:
      if (wf_rpc_arg_count(p, 2) != 0 || wf_rpc_device(p, 0, &dev) == NULL ||
          wf_rpc_check_stream(p, 1) != 0) {
        return -1;
      }
      return wf_rpc_reply_none(ep);
    default:
      return wf_err_raise("ValueError", "RPC: unknown syscall %d", (int)p->code);
  }
}

/* kInitServer with a session constructor: "rpc.LocalSession" is this
 * endpoint's own session; others go to the owner's construct hook, which
 * defers the reply until the session it makes (a chained connection) is
 * ready. 0 (answered or deferred) or -1 (answer the error). */
static int wf_rpc_init_session(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  static const char local[] = "rpc.LocalSession";
  if (p->args[0].type_index != kTVMFFIRawStr) {
    return wf_err_raise("TypeError", "RPC kInitServer: the session constructor's name is a string");
  }
  const char* name = p->args[0].v_c_str;
  if (strcmp(name, local) == 0 && p->num_args == 1) {
    ep->initialized = 1;
    return wf_rpc_reply_none(ep);
  }
  for (int32_t i = 1; i < p->num_args; ++i) {
    int32_t ti = p->args[i].type_index;
    if (ti != kTVMFFINone && ti != kTVMFFIInt && ti != kTVMFFIBool && ti != kTVMFFIFloat &&
        ti != kTVMFFIRawStr) {
      return wf_err_raise("TypeError",
                          "RPC kInitServer: session constructor arguments are numbers and "
                          "strings (argument %d has type index %d)",
                          (int)i, (int)ti);
    }
  }
  if (ep->construct == NULL || ep->forward == NULL) {
    return wf_err_raise("ValueError",
                        "RPC kInitServer: this device does not serve the session constructor "
                        "%.200s (its owner enables chained sessions: the forward option)",
                        name);
  }
  uint64_t token = ++ep->next_token;
  int rc = ep->construct(ep->construct_ctx, ep, p->args, p->num_args, token);
  if (rc == WEBFFI_RPC_PENDING) {
    ep->pending = WF_RPC_WAIT_SESSION;
    ep->pending_token = token;
    return 0;
  }
  if (rc == 0) {
    return wf_err_raise("ValueError", "RPC: the construct hook must defer (WEBFFI_RPC_PENDING) or fail");
  }
  return -1;
}

/* Serves one decoded packet. 0: go on; WEBFFI_RPC_CLOSED; -1: fatal. */
static int wf_rpc_serve(WebFFIRPCEndpoint* ep, wf_rpc_packet* p) {
  int rc;
  switch (p->code) {
    case kWebFFIRPCShutdown:
      ep->state = WF_RPC_DONE;
      return WEBFFI_RPC_CLOSED;
    case kWebFFIRPCInitServer:
      if (p->version.size != strlen(WEBFFI_RPC_PROTOCOL_VERSION) ||
          memcmp(p->version.data, WEBFFI_RPC_PROTOCOL_VERSION, p->version.size) != 0) {
        wf_err_raise("ValueError",
                     "RPC: the client speaks protocol version '%.*s', this server only '%s'",
                     (int)(p->version.size > 64 ? 64 : p->version.size), p->version.data,
                     WEBFFI_RPC_PROTOCOL_VERSION);
        return wf_rpc_fatal(ep, 1);
      }
      if (ep->initialized) {
        wf_err_raise("ValueError", "RPC kInitServer: the server is already initialised");
        rc = -1;
      } else if (p->num_args != 0) {
        rc = wf_rpc_init_session(ep, p);
      } else {
        ep->initialized = 1;
        rc = wf_rpc_reply_none(ep);
      }
      break;
    case kWebFFIRPCReturn:
    case kWebFFIRPCException:
    case kWebFFIRPCCopyAck:
      wf_err_raise("ValueError", "RPC: the client sent %s, which only a server sends",
                   wf_rpc_code_name(p->code));
      return wf_rpc_fatal(ep, 1);
    default:
      if (!ep->initialized) {
        wf_err_raise("ValueError", "RPC %s before kInitServer", wf_rpc_code_name(p->code));
        rc = -1;
      } else if (p->code == kWebFFIRPCCallFunc) {
        rc = wf_rpc_call_func(ep, p);
      } else if (p->code == kWebFFIRPCCopyToRemote || p->code == kWebFFIRPCCopyFromRemote) {
        rc = wf_rpc_copy(ep, p);
      } else {
        rc = wf_rpc_syscall(ep, p);
      }
      break;
  }
  /* a failed request is answered; the session goes on */
  if (rc != 0) rc = wf_rpc_reply_error(ep);
  if (rc != 0) return wf_rpc_fatal(ep, 0); /* the send failed */
  return 0;
}

/* ------------------------------------------------------------------- input */
static uint32_t wf_rpc_le32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static int wf_rpc_handshake(WebFFIRPCEndpoint* ep, const uint8_t* key, size_t n) {
  /* the first word is "client:<key>"; options may follow after a space */
  size_t word = 0;
  while (word < n && key[word] != ' ') ++word;
  static const char prefix[] = "client:";
  size_t plen = sizeof(prefix) - 1;
  const char* want = ep->key + strlen("server:");
  size_t want_len = ep->key_len - strlen("server:");
  if (word != plen + want_len || memcmp(key, prefix, plen) != 0 ||
      memcmp(key + plen, want, want_len) != 0) {
    if (wf_rpc_handshake_encode(&ep->out, WEBFFI_RPC_MISMATCH, NULL, 0) == 0) wf_rpc_flush(ep);
    ep->state = WF_RPC_DONE;
    return wf_err_raise("ValueError", "RPC handshake: the client's key '%.*s' does not match 'client:%s'",
                        (int)(word > 200 ? 200 : word), (const char*)key, want);
  }
  if (wf_rpc_handshake_encode(&ep->out, WEBFFI_RPC_SUCCESS, ep->key, ep->key_len) != 0 ||
      wf_rpc_flush(ep) != 0) {
    ep->state = WF_RPC_DONE;
    return -1;
  }
  ep->state = WF_RPC_PACKETS;
  return 0;
}

/* Serves queued input until it runs out, a reply is deferred, or the
 * session ends. */
static int wf_rpc_serve_input(WebFFIRPCEndpoint* ep);

/* Serves the queued input as the peer's: within the runtime's peer budget
 * (peer_budget.h), whatever this session's own limits allow. */
static int wf_rpc_run(WebFFIRPCEndpoint* ep) {
  wf_peer_enter();
  int rc = wf_rpc_serve_input(ep);
  wf_peer_leave();
  return rc;
}

static int wf_rpc_serve_input(WebFFIRPCEndpoint* ep) {
  int result = WEBFFI_RPC_OPEN;
  while (result == WEBFFI_RPC_OPEN && !ep->pending && ep->state != WF_RPC_DONE) {
    const uint8_t* at = ep->in.data + ep->in_pos;
    size_t avail = ep->in.size - ep->in_pos;
    if (ep->state == WF_RPC_HS_MAGIC || ep->state == WF_RPC_HS_KEYLEN) {
      if (avail < 4) break;
      uint32_t v = wf_rpc_le32(at);
      ep->in_pos += 4;
      if (ep->state == WF_RPC_HS_MAGIC) {
        if (v != WEBFFI_RPC_MAGIC) {
          ep->state = WF_RPC_DONE;
          result = wf_err_raise("ValueError",
                                "RPC handshake: 0x%x is not TVM RPC's magic 0x%x (not a TVM RPC "
                                "client?)",
                                (unsigned)v, (unsigned)WEBFFI_RPC_MAGIC);
        } else {
          ep->state = WF_RPC_HS_KEYLEN;
        }
      } else if (v == 0 || v > WF_RPC_MAX_KEY) {
        ep->state = WF_RPC_DONE;
        result = wf_err_raise("ValueError", "RPC handshake: key length %u is outside [1, %d]",
                              (unsigned)v, WF_RPC_MAX_KEY);
      } else {
        ep->hs_key_len = v;
        ep->state = WF_RPC_HS_KEY;
      }
    } else if (ep->state == WF_RPC_HS_KEY) {
      if (avail < ep->hs_key_len) break;
      ep->in_pos += ep->hs_key_len;
      result = wf_rpc_handshake(ep, at, ep->hs_key_len);
    } else {
      if (avail < 8) break;
      uint64_t len = (uint64_t)wf_rpc_le32(at) | ((uint64_t)wf_rpc_le32(at + 4) << 32);
      if (len < 4 || len > ep->max_packet) {
        /* framing is lost: nothing after this can be read */
        ep->state = WF_RPC_DONE;
        result = wf_err_raise("ValueError",
                              "RPC packet length %llu is outside [4, %llu] (the limit is "
                              "max_packet_bytes)",
                              (unsigned long long)len, (unsigned long long)ep->max_packet);
        break;
      }
      if (avail - 8 < len) break;
      if (ep->forwarding) {
        /* the serving session is elsewhere: the packet goes there unread */
        int32_t code = (int32_t)wf_rpc_le32(at + 8);
        ep->in_pos += 8 + (size_t)len;
        if (ep->forward(ep->forward_ctx, at, 8 + (size_t)len) != 0) {
          ep->state = WF_RPC_DONE;
          result = -1;
          break;
        }
        if (code == kWebFFIRPCShutdown) ep->state = WF_RPC_DONE;
        continue;
      }
      wf_rpc_packet p;
      ep->in_pos += 8 + (size_t)len;
      if (wf_rpc_packet_decode(at + 8, (size_t)len, &p) != 0) {
        result = wf_rpc_fatal(ep, 1);
        break;
      }
      result = wf_rpc_serve(ep, &p);
      wf_rpc_packet_clear(&p);
    }
  }
  /* drop what was served */
  if (ep->in_pos == ep->in.size) {
    ep->in.size = ep->in_pos = 0;
  } else if (ep->in_pos > (1u << 16) || ep->in_pos * 2 > ep->in.size) {
    memmove(ep->in.data, ep->in.data + ep->in_pos, ep->in.size - ep->in_pos);
    ep->in.size -= ep->in_pos;
    ep->in_pos = 0;
  }
  if (result == WEBFFI_RPC_OPEN && ep->state == WF_RPC_DONE) result = WEBFFI_RPC_CLOSED;
  return result;
}

/* ------------------------------------------------------------------ public */

WebFFIRPCEndpoint* WebFFIRPCEndpointCreate(const WebFFIRPCEndpointConfig* config) {
  if (config == NULL || config->key == NULL || config->send == NULL || config->allow_count < 0 ||
      (config->allow_count > 0 && config->allow_list == NULL)) {
    wf_err_raise("ValueError", "WebFFIRPCEndpointCreate: a key and a send callback are required");
    return NULL;
  }
  size_t key_len = strlen(config->key);
  if (key_len == 0 || key_len > WF_RPC_MAX_KEY - 16 || strchr(config->key, ' ') != NULL) {
    wf_err_raise("ValueError", "WebFFIRPCEndpointCreate: the key must be 1 to %d bytes, no spaces",
                 WF_RPC_MAX_KEY - 16);
    return NULL;
  }
  WebFFIRPCEndpoint* ep = (WebFFIRPCEndpoint*)calloc(1, sizeof(WebFFIRPCEndpoint));
  if (ep == NULL) {
    wf_err_raise_oom(sizeof(WebFFIRPCEndpoint));
    return NULL;
  }
  ep->key_len = key_len + strlen("server:");
  ep->key = (char*)malloc(ep->key_len + 1);
  if (ep->key == NULL) goto oom;
  memcpy(ep->key, "server:", 7);
  memcpy(ep->key + 7, config->key, key_len + 1);
  for (int32_t i = 0; i < config->allow_count; ++i) {
    if (config->allow_list[i] == NULL) {
      WebFFIRPCEndpointDestroy(ep);
      wf_err_raise("ValueError", "WebFFIRPCEndpointCreate: allow_list[%d] is NULL", (int)i);
      return NULL;
    }
  }
  ep->max_packet = config->max_packet_bytes ? config->max_packet_bytes : WF_RPC_DEFAULT_MAX_PACKET;
  ep->policy = wf_rpc_policy_new(config->allow_list, config->allow_count, config->allow,
                                 config->allow_ctx, config->enable_upload != 0,
                                 config->max_upload_bytes, ep->max_packet);
  if (ep->policy == NULL) {
    WebFFIRPCEndpointDestroy(ep);
    return NULL;
  }
  ep->send = config->send;
  ep->send_ctx = config->send_ctx;
  ep->send_held = config->send_held;
  ep->send_held_ctx = config->send_held_ctx;
  ep->stream_sync = config->stream_sync;
  ep->stream_sync_ctx = config->stream_sync_ctx;
  ep->copy_from = config->copy_from;
  ep->copy_from_ctx = config->copy_from_ctx;
  ep->device_attr = config->device_attr;
  ep->device_attr_ctx = config->device_attr_ctx;
  ep->lookup = config->lookup;
  ep->lookup_ctx = config->lookup_ctx;
  ep->construct = config->construct;
  ep->construct_ctx = config->construct_ctx;
  ep->forward = config->forward;
  ep->forward_ctx = config->forward_ctx;
  ep->max_device_bytes = config->max_device_bytes ? config->max_device_bytes : ((uint64_t)1 << 30);
  ep->state = WF_RPC_HS_MAGIC;
  wf_rpc_handles_init(&ep->handles, config->max_handles);
  return ep;
oom:
  WebFFIRPCEndpointDestroy(ep);
  wf_err_raise_oom(0);
  return NULL;
}

static int wf_rpc_enter(WebFFIRPCEndpoint* ep, const char* fn) {
  if (ep == NULL) return wf_err_raise("ValueError", "%s: NULL endpoint", fn);
  if (ep->in_feed) return wf_err_raise("ValueError", "%s: called from inside the endpoint", fn);
  if (ep->state == WF_RPC_DONE) {
    return wf_err_raise("ValueError", "%s: the RPC session is closed", fn);
  }
  return 0;
}

uint8_t* WebFFIRPCEndpointReserve(WebFFIRPCEndpoint* ep, size_t size) {
  if (wf_rpc_enter(ep, "WebFFIRPCEndpointReserve") != 0) return NULL;
  /* queued input is bounded: one largest packet and its header, plus a
   * chunk's worth while a reply is deferred */
  size_t queued = ep->in.size - ep->in_pos;
  uint64_t bound = ep->max_packet + 16 + (ep->pending ? ep->max_packet : 0);
  if ((uint64_t)queued + size > bound && ep->pending) {
    ep->state = WF_RPC_DONE;
    wf_err_raise("ValueError", "RPC: the peer sent %llu bytes while a reply was pending",
                 (unsigned long long)(queued + size));
    return NULL;
  }
  if (size > SIZE_MAX / 2 - ep->in.size) {
    ep->state = WF_RPC_DONE;
    wf_err_raise_oom(size);
    return NULL;
  }
  if (ep->in.capacity - ep->in.size < size) {
    size_t cap = ep->in.capacity ? ep->in.capacity : 4096;
    while (cap - ep->in.size < size) cap *= 2;
    uint8_t* grown = (uint8_t*)realloc(ep->in.data, cap);
    if (grown == NULL) {
      ep->state = WF_RPC_DONE;
      wf_err_raise_oom(cap);
      return NULL;
    }
    ep->in.data = grown;
    ep->in.capacity = cap;
  }
  ep->reserved = size;
  return ep->in.data + ep->in.size;
}

int WebFFIRPCEndpointCommit(WebFFIRPCEndpoint* ep, size_t size) {
  if (wf_rpc_enter(ep, "WebFFIRPCEndpointCommit") != 0) return -1;
  if (size > ep->reserved) {
    return wf_err_raise("ValueError", "WebFFIRPCEndpointCommit: %llu bytes, %llu reserved",
                        (unsigned long long)size, (unsigned long long)ep->reserved);
  }
  ep->reserved = 0;
  ep->in.size += size;
  ep->in_feed = 1;
  int rc = wf_rpc_run(ep);
  ep->in_feed = 0;
  return rc;
}

int WebFFIRPCEndpointFeed(WebFFIRPCEndpoint* ep, const uint8_t* data, size_t size) {
  if (wf_rpc_enter(ep, "WebFFIRPCEndpointFeed") != 0) return -1;
  if (size > 0 && data == NULL) return wf_err_raise("ValueError", "WebFFIRPCEndpointFeed: NULL data");
  uint8_t* at = WebFFIRPCEndpointReserve(ep, size);
  if (at == NULL) return -1;
  if (size > 0) memcpy(at, data, size);
  ep->reserved = 0;
  ep->in.size += size;
  ep->in_feed = 1;
  int rc = wf_rpc_run(ep);
  ep->in_feed = 0;
  return rc;
}

int WebFFIRPCEndpointComplete(WebFFIRPCEndpoint* ep, uint64_t token, int status) {
  if (wf_rpc_enter(ep, "WebFFIRPCEndpointComplete") != 0) return -1;
  if (!ep->pending || ep->pending == WF_RPC_WAIT_SEND || token != ep->pending_token) {
    if (status != 0) {
      char* ignored = wf_rpc_take_error(NULL);
      free(ignored);
    }
    return wf_err_raise("ValueError", "WebFFIRPCEndpointComplete: no pending reply has token %llu",
                        (unsigned long long)token);
  }
  if (ep->pending == WF_RPC_WAIT_TIMER) {
    ep->pending = 0;
    ep->in_feed = 1;
    wf_peer_enter();
    int rc = status == 0 ? wf_rpc_timing_run(ep) : -1;
    wf_peer_leave();
    if (rc != 0) {
      wf_rpc_timing_clear(&ep->timing);
      rc = wf_rpc_reply_error(ep);
    }
    rc = rc != 0 ? wf_rpc_fatal(ep, 0) : wf_rpc_run(ep);
    ep->in_feed = 0;
    return rc;
  }
  if (status == 0 && ep->pending == WF_RPC_WAIT_COPY) {
    return wf_err_raise("ValueError", "WebFFIRPCEndpointComplete: token %llu awaits bytes: "
                                      "complete it with WebFFIRPCEndpointCompleteCopy",
                        (unsigned long long)token);
  }
  if (status == 0 && ep->pending == WF_RPC_WAIT_SESSION) {
    ep->initialized = 1;
    ep->forwarding = 1;
  }
  ep->pending = 0;
  ep->in_feed = 1;
  int rc = status == 0 ? wf_rpc_reply_none(ep) : wf_rpc_reply_error(ep);
  if (rc != 0) {
    rc = wf_rpc_fatal(ep, 0);
  } else {
    rc = wf_rpc_run(ep);
  }
  ep->in_feed = 0;
  return rc;
}

int WebFFIRPCEndpointCompleteCopy(WebFFIRPCEndpoint* ep, uint64_t token, const uint8_t* data,
                                  size_t size) {
  if (wf_rpc_enter(ep, "WebFFIRPCEndpointCompleteCopy") != 0) return -1;
  if (ep->pending != WF_RPC_WAIT_COPY || token != ep->pending_token) {
    return wf_err_raise("ValueError", "WebFFIRPCEndpointCompleteCopy: no pending copy has token %llu",
                        (unsigned long long)token);
  }
  if (size != ep->pending_nbytes || (size > 0 && data == NULL)) {
    return wf_err_raise("ValueError", "WebFFIRPCEndpointCompleteCopy: %llu bytes were asked for, "
                                      "%llu given",
                        (unsigned long long)ep->pending_nbytes, (unsigned long long)size);
  }
  ep->pending = 0;
  ep->in_feed = 1;
  int rc = wf_rpc_send_ack(ep, (const char*)data, size, 0);
  rc = rc != 0 ? wf_rpc_fatal(ep, 0) : wf_rpc_run(ep);
  ep->in_feed = 0;
  return rc;
}

int WebFFIRPCEndpointRelease(WebFFIRPCEndpoint* ep) {
  if (wf_rpc_enter(ep, "WebFFIRPCEndpointRelease") != 0) return -1;
  if (ep->pending != WF_RPC_WAIT_SEND) {
    return wf_err_raise("ValueError", "WebFFIRPCEndpointRelease: no send is held");
  }
  ep->pending = 0;
  ep->in_feed = 1;
  int rc = wf_rpc_run(ep);
  ep->in_feed = 0;
  return rc;
}

int WebFFIRPCEndpointIsPending(const WebFFIRPCEndpoint* ep) { return ep != NULL && ep->pending; }

int64_t WebFFIRPCEndpointHandleCount(const WebFFIRPCEndpoint* ep) {
  return ep == NULL ? 0 : (int64_t)ep->handles.live;
}

void WebFFIRPCEndpointDestroy(WebFFIRPCEndpoint* ep) {
  if (ep == NULL) return;
  wf_rpc_timing_clear(&ep->timing);
  wf_rpc_handles_clear(&ep->handles);
  wf_peer_device_give(ep->device_bytes); /* what the peer still held is the runtime's again */
  wf_rpc_policy_detach(ep->policy);
  wf_rpc_policy_release(ep->policy);
  free(ep->key);
  wf_rpc_buf_free(&ep->in);
  wf_rpc_buf_free(&ep->out);
  free(ep);
}
