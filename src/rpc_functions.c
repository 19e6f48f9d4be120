/* The RPC endpoint as global functions, for hosts that reach C through
 * tvm-ffi Functions only (the JS glue: js/rpc/endpoint.js).
 *
 *   webffi.rpc.EndpointCreate(key, send, allow, enable_upload, max_packet_bytes,
 *       max_handles, max_device_bytes, max_upload_bytes,
 *       stream_sync, copy_from, device_attr, lookup, construct, forward) -> endpoint
 *
 * allow is one string, one exposed name (or "prefix*") a line; the hooks
 * are Functions or None:
 *   send(address, size)      the bytes to send: size bytes at address in this
 *                            runtime's memory, valid during the call only
 *                            (the host copies them out, into buffers it can
 *                            reuse, instead of receiving a new copy each time)
 *   send(address, size, 1)   a CPU tensor's bytes for kCopyFromRemote, which
 *                            stay put: returning 3 (WEBFFI_RPC_HELD) keeps
 *                            them there, and the endpoint idle, until ep(7)
 *   stream_sync(token, device) -> int                   0 done, 2 pending
 *   copy_from(token, device, handle, offset, nbytes) -> int   2 pending
 *   device_attr(device, kind) -> value | None
 *   lookup(name) -> Function | None
 *   construct(token, name, args...) -> int              2 pending (a chained session)
 *   forward(bytes)                                      a forwarded session's packet
 * The endpoint is a Function over its state, called with an operation:
 *   ep(0, bytes) -> status       WebFFIRPCEndpointFeed
 *   ep(1, token, kind | None, message) -> status   Complete (None: success)
 *   ep(2, token, bytes) -> status                 CompleteCopy
 *   ep(3) -> int                                  HandleCount
 *   ep(4)                                         Destroy (later calls raise)
 *   ep(5, n) -> int               Reserve: where to write n input bytes (an
 *                                 address in this runtime's memory)
 *   ep(6, n) -> status            Commit n written bytes
 *   ep(7) -> status               Release: the held bytes were sent
 *   ep(8) -> int                  1 while a reply waits (IsPending), else 0
 * A status is 0 (open) or 1 (closed); a broken protocol raises. */
#include <stdlib.h>
#include <string.h>

#include <webffi/rpc.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "object.h"
#include "str.h"

enum {
  WF_HOOK_SEND,
  WF_HOOK_SYNC,
  WF_HOOK_COPY,
  WF_HOOK_ATTR,
  WF_HOOK_LOOKUP,
  WF_HOOK_CONSTRUCT,
  WF_HOOK_FORWARD,
  WF_HOOK_COUNT
};

typedef struct {
  WebFFIRPCEndpoint* ep;
  TVMFFIObject* hooks[WF_HOOK_COUNT];
  int busy;          /* inside Feed/Complete: a close waits for the return */
  int close_pending;
} wf_rpc_glue;

static void wf_rpc_glue_destroy_ep(wf_rpc_glue* g) {
  WebFFIRPCEndpoint* ep = g->ep;
  g->ep = NULL;
  WebFFIRPCEndpointDestroy(ep);
}

static void wf_rpc_glue_free(void* self) {
  wf_rpc_glue* g = (wf_rpc_glue*)self;
  if (g == NULL) return;
  wf_rpc_glue_destroy_ep(g);
  for (int i = 0; i < WF_HOOK_COUNT; ++i) {
    if (g->hooks[i] != NULL) wf_obj_decref(g->hooks[i]);
  }
  free(g);
}

/* Calls hook i; *out (when given) receives the result, else it is released. */
static int wf_rpc_hook(wf_rpc_glue* g, int i, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIAny rv;
  wf_any_set_none(&rv);
  if (wf_func_call(g->hooks[i], args, n, &rv) != 0) return -1;
  if (out != NULL) {
    *out = rv;
  } else {
    wf_any_release(&rv);
  }
  return 0;
}

static int wf_rpc_hook_int(wf_rpc_glue* g, int i, TVMFFIAny* args, int32_t n, const char* what) {
  TVMFFIAny rv;
  if (wf_rpc_hook(g, i, args, n, &rv) != 0) return -1;
  if (rv.type_index != kTVMFFIInt) {
    wf_any_release(&rv);
    return wf_err_raise("TypeError", "RPC endpoint: the %s hook must return an int", what);
  }
  return (int)rv.v_int64;
}

static void wf_rpc_set_device(TVMFFIAny* v, DLDevice d) {
  wf_any_set_none(v);
  v->type_index = kTVMFFIDevice;
  v->v_device = d;
}

static int wf_rpc_glue_send(void* ctx, const uint8_t* data, size_t size) {
  TVMFFIAny a[2];
  wf_any_set_int(&a[0], (int64_t)(uintptr_t)data);
  wf_any_set_int(&a[1], (int64_t)size);
  return wf_rpc_hook((wf_rpc_glue*)ctx, WF_HOOK_SEND, a, 2, NULL);
}

static int wf_rpc_glue_send_held(void* ctx, const uint8_t* data, size_t size) {
  TVMFFIAny a[3], rv;
  wf_any_set_int(&a[0], (int64_t)(uintptr_t)data);
  wf_any_set_int(&a[1], (int64_t)size);
  wf_any_set_int(&a[2], 1);
  if (wf_rpc_hook((wf_rpc_glue*)ctx, WF_HOOK_SEND, a, 3, &rv) != 0) return -1;
  int held = rv.type_index == kTVMFFIInt && rv.v_int64 == WEBFFI_RPC_HELD;
  wf_any_release(&rv);
  return held ? WEBFFI_RPC_HELD : 0;
}

static int wf_rpc_glue_forward(void* ctx, const uint8_t* data, size_t size) {
  TVMFFIByteArray view = {(const char*)data, size};
  TVMFFIAny a;
  wf_any_set_none(&a);
  a.type_index = kTVMFFIByteArrayPtr;
  a.v_ptr = &view;
  return wf_rpc_hook((wf_rpc_glue*)ctx, WF_HOOK_FORWARD, &a, 1, NULL);
}

/* The constructor's arguments are plain values (the endpoint checked): they
 * go to the hook after the token. */
static int wf_rpc_glue_construct(void* ctx, WebFFIRPCEndpoint* ep, const TVMFFIAny* args, int32_t n,
                                 uint64_t token) {
  (void)ep;
  if (n > 63) return wf_err_raise("ValueError", "RPC kInitServer: %d session constructor arguments", (int)n);
  TVMFFIAny a[64];
  wf_any_set_int(&a[0], (int64_t)token);
  for (int32_t i = 0; i < n; ++i) a[i + 1] = args[i];
  return wf_rpc_hook_int((wf_rpc_glue*)ctx, WF_HOOK_CONSTRUCT, a, n + 1, "construct");
}

static int wf_rpc_glue_sync(void* ctx, WebFFIRPCEndpoint* ep, DLDevice device, uint64_t stream,
                            uint64_t token) {
  (void)ep;
  (void)stream;
  TVMFFIAny a[2];
  wf_any_set_int(&a[0], (int64_t)token);
  wf_rpc_set_device(&a[1], device);
  return wf_rpc_hook_int((wf_rpc_glue*)ctx, WF_HOOK_SYNC, a, 2, "stream_sync");
}

static int wf_rpc_glue_copy(void* ctx, WebFFIRPCEndpoint* ep, DLDevice device, void* data,
                            uint64_t offset, uint64_t nbytes, uint64_t token) {
  (void)ep;
  TVMFFIAny a[5];
  wf_any_set_int(&a[0], (int64_t)token);
  wf_rpc_set_device(&a[1], device);
  wf_any_set_int(&a[2], (int64_t)(uintptr_t)data);
  wf_any_set_int(&a[3], (int64_t)offset);
  wf_any_set_int(&a[4], (int64_t)nbytes);
  return wf_rpc_hook_int((wf_rpc_glue*)ctx, WF_HOOK_COPY, a, 5, "copy_from");
}

static int wf_rpc_glue_attr(void* ctx, DLDevice device, int32_t kind, TVMFFIAny* out) {
  TVMFFIAny a[2];
  wf_rpc_set_device(&a[0], device);
  wf_any_set_int(&a[1], kind);
  if (wf_rpc_hook((wf_rpc_glue*)ctx, WF_HOOK_ATTR, a, 2, out) != 0) return -1;
  return out->type_index != kTVMFFINone;
}

static int wf_rpc_glue_lookup(void* ctx, const char* name, size_t size, TVMFFIObjectHandle* out) {
  TVMFFIAny a, rv;
  if (wf_str_make(0, name, size, &a) != 0) return -1;
  int rc = wf_rpc_hook((wf_rpc_glue*)ctx, WF_HOOK_LOOKUP, &a, 1, &rv);
  wf_any_release(&a);
  if (rc != 0) return -1;
  if (rv.type_index == kTVMFFINone) return 0;
  if (rv.type_index != kTVMFFIFunction) {
    wf_any_release(&rv);
    return wf_err_raise("TypeError", "RPC endpoint: the lookup hook must return a Function or None");
  }
  *out = rv.v_obj;
  return 0;
}

/* Exposed: what lookup resolves (the time evaluator asks by name). */
static int wf_rpc_glue_allow(void* ctx, const char* name, size_t size) {
  TVMFFIObjectHandle f = NULL;
  if (wf_rpc_glue_lookup(ctx, name, size, &f) != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err); /* a failing lookup exposes nothing */
    if (err != NULL) TVMFFIObjectDecRef(err);
    return 0;
  }
  if (f == NULL) return 0;
  TVMFFIObjectDecRef(f);
  return 1;
}

/* ------------------------------------------------------------- the endpoint */
static int wf_rpc_op_int(const TVMFFIAny* args, int32_t n, int32_t i, int64_t* out) {
  if (i >= n || args[i].type_index != kTVMFFIInt) {
    return wf_err_raise("TypeError", "webffi.rpc endpoint: argument %d must be an int", (int)i);
  }
  *out = args[i].v_int64;
  return 0;
}

static int wf_rpc_op_bytes(const TVMFFIAny* args, int32_t n, int32_t i, TVMFFIByteArray* out) {
  if (i >= n || !wf_any_bytes_view(&args[i], out)) {
    return wf_err_raise("TypeError", "webffi.rpc endpoint: argument %d must be bytes", (int)i);
  }
  return 0;
}

static int wf_rpc_endpoint_call(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  wf_rpc_glue* g = (wf_rpc_glue*)wf_func_self(func);
  int64_t op = 0, token = 0;
  TVMFFIByteArray bytes, kind, message;
  if (wf_rpc_op_int(args, n, 0, &op) != 0) return -1;
  if (op == 4) {
    if (g->busy) {
      g->close_pending = 1;
    } else {
      wf_rpc_glue_destroy_ep(g);
    }
    return 0;
  }
  if (g->ep == NULL || g->close_pending) {
    return wf_err_raise("ValueError", "webffi.rpc endpoint: the endpoint is closed");
  }
  if (op == 3) {
    wf_any_set_int(result, WebFFIRPCEndpointHandleCount(g->ep));
    return 0;
  }
  if (op == 8) {
    wf_any_set_int(result, WebFFIRPCEndpointIsPending(g->ep));
    return 0;
  }
  if (g->busy) return wf_err_raise("ValueError", "webffi.rpc endpoint: called from inside itself");
  int rc;
  g->busy = 1;
  switch (op) {
    case 0:
      rc = wf_rpc_op_bytes(args, n, 1, &bytes);
      if (rc == 0) rc = WebFFIRPCEndpointFeed(g->ep, (const uint8_t*)bytes.data, bytes.size);
      break;
    case 1:
      rc = wf_rpc_op_int(args, n, 1, &token);
      if (rc == 0 && n == 4 && args[2].type_index != kTVMFFINone) {
        if (!wf_any_string_view(&args[2], &kind) || !wf_any_string_view(&args[3], &message)) {
          rc = wf_err_raise("TypeError", "webffi.rpc endpoint: an error is (kind, message)");
        } else {
          char k[64]; /* the kind the host gave, bounded */
          size_t kn = kind.size < sizeof(k) - 1 ? kind.size : sizeof(k) - 1;
          memcpy(k, kind.data, kn);
          k[kn] = '\0';
          wf_err_raise(k, "%.*s", (int)message.size, message.data);
          rc = WebFFIRPCEndpointComplete(g->ep, (uint64_t)token, -1);
        }
      } else if (rc == 0) {
        rc = WebFFIRPCEndpointComplete(g->ep, (uint64_t)token, 0);
      }
      break;
    case 2:
      rc = wf_rpc_op_int(args, n, 1, &token);
      if (rc == 0) rc = wf_rpc_op_bytes(args, n, 2, &bytes);
      if (rc == 0) {
        rc = WebFFIRPCEndpointCompleteCopy(g->ep, (uint64_t)token, (const uint8_t*)bytes.data,
                                           bytes.size);
      }
      break;
    case 5: {
      int64_t size = 0;
      rc = wf_rpc_op_int(args, n, 1, &size);
      if (rc == 0 && size < 0) rc = wf_err_raise("ValueError", "webffi.rpc endpoint: negative size");
      if (rc == 0) {
        uint8_t* at = WebFFIRPCEndpointReserve(g->ep, (size_t)size);
        if (at == NULL) {
          rc = -1;
        } else {
          g->busy = 0;
          wf_any_set_int(result, (int64_t)(uintptr_t)at);
          return 0;
        }
      }
      break;
    }
    case 6: {
      int64_t size = 0;
      rc = wf_rpc_op_int(args, n, 1, &size);
      if (rc == 0 && size < 0) rc = wf_err_raise("ValueError", "webffi.rpc endpoint: negative size");
      if (rc == 0) rc = WebFFIRPCEndpointCommit(g->ep, (size_t)size);
      break;
    }
    case 7:
      rc = WebFFIRPCEndpointRelease(g->ep);
      break;
    default:
      rc = wf_err_raise("ValueError", "webffi.rpc endpoint: unknown operation %lld", (long long)op);
      break;
  }
  g->busy = 0;
  if (g->close_pending) wf_rpc_glue_destroy_ep(g);
  if (rc < 0) return -1;
  wf_any_set_int(result, rc);
  return 0;
}

static int wf_rpc_endpoint_create(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  static const char fn[] = "webffi.rpc.EndpointCreate";
  if (n != 14) return wf_err_raise("TypeError", "%s takes 14 arguments, got %d", fn, (int)n);
  TVMFFIByteArray key, allow;
  if (!wf_any_string_view(&args[0], &key) || !wf_any_string_view(&args[2], &allow)) {
    return wf_err_raise("TypeError", "%s: the key and the allow list are strings", fn);
  }
  int64_t nums[5];
  for (int i = 0; i < 5; ++i) {
    const TVMFFIAny* a = &args[3 + i];
    if ((a->type_index != kTVMFFIInt && a->type_index != kTVMFFIBool) || a->v_int64 < 0) {
      return wf_err_raise("TypeError", "%s: argument %d must be an int >= 0", fn, 3 + i);
    }
    nums[i] = a->v_int64;
  }
  const int hook_arg[WF_HOOK_COUNT] = {1, 8, 9, 10, 11, 12, 13};
  for (int i = 0; i < WF_HOOK_COUNT; ++i) {
    int32_t ti = args[hook_arg[i]].type_index;
    if (ti != kTVMFFIFunction && !(i != WF_HOOK_SEND && ti == kTVMFFINone)) {
      return wf_err_raise("TypeError", "%s: argument %d must be a Function%s", fn, hook_arg[i],
                          i == WF_HOOK_SEND ? "" : " or None");
    }
  }
  wf_rpc_glue* g = (wf_rpc_glue*)calloc(1, sizeof(wf_rpc_glue));
  char* key_z = (char*)malloc(key.size + 1);
  char* allow_z = (char*)malloc(allow.size + 1);
  const char** list = (const char**)calloc(allow.size / 2 + 2, sizeof(char*));
  int rc = -1;
  if (g == NULL || key_z == NULL || allow_z == NULL || list == NULL) {
    wf_err_raise_oom(allow.size);
    goto done;
  }
  memcpy(key_z, key.data, key.size);
  key_z[key.size] = '\0';
  memcpy(allow_z, allow.data, allow.size);
  allow_z[allow.size] = '\0';
  int32_t count = 0;
  for (char* line = allow_z; *line != '\0';) {
    char* end = strchr(line, '\n');
    if (end != NULL) *end = '\0';
    if (*line != '\0') list[count++] = line;
    if (end == NULL) break;
    line = end + 1;
  }
  for (int i = 0; i < WF_HOOK_COUNT; ++i) {
    if (args[hook_arg[i]].type_index == kTVMFFIFunction) {
      g->hooks[i] = args[hook_arg[i]].v_obj;
      wf_obj_incref(g->hooks[i]);
    }
  }
  WebFFIRPCEndpointConfig cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.key = key_z;
  cfg.send = wf_rpc_glue_send;
  cfg.send_ctx = g;
  cfg.send_held = wf_rpc_glue_send_held;
  cfg.send_held_ctx = g;
  cfg.allow_list = list;
  cfg.allow_count = count;
  cfg.enable_upload = nums[0] != 0;
  cfg.max_packet_bytes = (uint64_t)nums[1];
  cfg.max_handles = (uint32_t)(nums[2] > 0xffffffffLL ? 0xffffffffLL : nums[2]);
  cfg.max_device_bytes = (uint64_t)nums[3];
  cfg.max_upload_bytes = (uint64_t)nums[4];
  if (g->hooks[WF_HOOK_SYNC] != NULL) {
    cfg.stream_sync = wf_rpc_glue_sync;
    cfg.stream_sync_ctx = g;
  }
  if (g->hooks[WF_HOOK_COPY] != NULL) {
    cfg.copy_from = wf_rpc_glue_copy;
    cfg.copy_from_ctx = g;
  }
  if (g->hooks[WF_HOOK_ATTR] != NULL) {
    cfg.device_attr = wf_rpc_glue_attr;
    cfg.device_attr_ctx = g;
  }
  if (g->hooks[WF_HOOK_LOOKUP] != NULL) {
    cfg.lookup = wf_rpc_glue_lookup;
    cfg.lookup_ctx = g;
    cfg.allow = wf_rpc_glue_allow;
    cfg.allow_ctx = g;
  }
  if (g->hooks[WF_HOOK_CONSTRUCT] != NULL && g->hooks[WF_HOOK_FORWARD] != NULL) {
    cfg.construct = wf_rpc_glue_construct;
    cfg.construct_ctx = g;
    cfg.forward = wf_rpc_glue_forward;
    cfg.forward_ctx = g;
  }
  g->ep = WebFFIRPCEndpointCreate(&cfg);
  if (g->ep == NULL) goto done;
  TVMFFIObject* f = wf_func_new_direct(wf_rpc_endpoint_call, g, wf_rpc_glue_free);
  if (f == NULL) goto done;
  g = NULL; /* the Function owns it */
  wf_any_set_object(result, f);
  rc = 0;
done:
  wf_rpc_glue_free(g);
  free(key_z);
  free(allow_z);
  free(list);
  return rc;
}

int wf_rpc_register(void) {
  return wf_global_register("webffi.rpc.EndpointCreate", wf_rpc_endpoint_create, NULL);
}
