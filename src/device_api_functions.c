/* Device APIs implemented by Function objects: how a backend written in
 * the host language (the WebGPU backend in JS) serves a device type. */
#include <string.h>
#include <webffi/device_api.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "object.h"

#define WF_FN_DEVICE_LIMIT 64

typedef struct {
  TVMFFIObject* alloc; /* (Device, nbytes, alignment) -> int handle, never 0 */
  TVMFFIObject* free;  /* (Device, handle) */
  TVMFFIObject* copy;  /* (from, from_offset, from_device, to, to_offset, to_device, nbytes, stream) */
  TVMFFIObject* sync;  /* (Device, stream) */
} wf_fn_device;

static wf_fn_device wf_fn_devices[WF_FN_DEVICE_LIMIT];

static void wf_fn_any_device(TVMFFIAny* v, DLDevice d) {
  wf_any_set_none(v);
  v->type_index = kTVMFFIDevice;
  v->v_device = d;
}

static void wf_fn_any_ptr(TVMFFIAny* v, const void* p) {
  wf_any_set_none(v);
  v->type_index = kTVMFFIOpaquePtr;
  v->v_ptr = (void*)p;
}

/* Calls f; the result is released unless the caller wants it. */
static int wf_fn_call(TVMFFIObject* f, TVMFFIAny* args, int32_t n, TVMFFIAny* keep) {
  TVMFFIAny result;
  wf_any_set_none(&result);
  if (wf_func_call(f, args, n, &result) != 0) return -1;
  if (keep != NULL) {
    *keep = result;
  } else {
    wf_any_release(&result);
  }
  return 0;
}

static void* wf_fn_alloc(void* ctx, DLDevice device, size_t nbytes, size_t alignment) {
  wf_fn_device* d = (wf_fn_device*)ctx;
  TVMFFIAny args[3], result;
  wf_fn_any_device(&args[0], device);
  wf_any_set_int(&args[1], (int64_t)nbytes);
  wf_any_set_int(&args[2], (int64_t)alignment);
  if (wf_fn_call(d->alloc, args, 3, &result) != 0) return NULL;
  if ((result.type_index != kTVMFFIInt && result.type_index != kTVMFFIOpaquePtr) ||
      result.v_int64 == 0) {
    wf_any_release(&result);
    wf_err_raise("TypeError", "A device backend's alloc must return a non-zero int handle");
    return NULL;
  }
  return (void*)(uintptr_t)result.v_uint64;
}

/* A free that fails cannot be reported (it runs in deleters): the error is
 * dropped here rather than left in the raised slot for an unrelated call. */
static void wf_fn_free(void* ctx, DLDevice device, void* data) {
  wf_fn_device* d = (wf_fn_device*)ctx;
  TVMFFIAny args[2];
  wf_fn_any_device(&args[0], device);
  wf_fn_any_ptr(&args[1], data);
  if (wf_fn_call(d->free, args, 2, NULL) != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) wf_obj_decref((TVMFFIObject*)err);
  }
}

static int wf_fn_copy(void* ctx, const void* from, size_t from_offset, DLDevice from_device,
                      void* to, size_t to_offset, DLDevice to_device, size_t nbytes,
                      TVMFFIStreamHandle stream) {
  wf_fn_device* d = (wf_fn_device*)ctx;
  TVMFFIAny args[8];
  wf_fn_any_ptr(&args[0], from);
  wf_any_set_int(&args[1], (int64_t)from_offset);
  wf_fn_any_device(&args[2], from_device);
  wf_fn_any_ptr(&args[3], to);
  wf_any_set_int(&args[4], (int64_t)to_offset);
  wf_fn_any_device(&args[5], to_device);
  wf_any_set_int(&args[6], (int64_t)nbytes);
  wf_fn_any_ptr(&args[7], stream);
  return wf_fn_call(d->copy, args, 8, NULL);
}

static int wf_fn_sync(void* ctx, DLDevice device, TVMFFIStreamHandle stream) {
  wf_fn_device* d = (wf_fn_device*)ctx;
  TVMFFIAny args[2];
  wf_fn_any_device(&args[0], device);
  wf_fn_any_ptr(&args[1], stream);
  return wf_fn_call(d->sync, args, 2, NULL);
}

static void wf_fn_device_clear(wf_fn_device* d) {
  TVMFFIObject* fns[4] = {d->alloc, d->free, d->copy, d->sync};
  memset(d, 0, sizeof(*d));
  for (int i = 0; i < 4; ++i) {
    if (fns[i] != NULL) wf_obj_decref(fns[i]);
  }
}

static const char* const wf_fn_set_types[] = {"int", "ffi.Function", "ffi.Function",
                                              "ffi.Function", "ffi.Function"};
static const WebFFISignature wf_fn_set_sig = {"webffi.SetDeviceAPI", 5, wf_fn_set_types, "None"};

/* webffi.SetDeviceAPI(device_type, alloc, free, copy, sync) installs a
 * backend; webffi.SetDeviceAPI(device_type) removes it. */
static int wf_fn_set_device_api(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  int64_t device_type;
  if (n != 1 && WebFFICheckNumArgs(&wf_fn_set_sig, n) != 0) return -1;
  if (WebFFIArgToInt(&wf_fn_set_sig, args, 0, &device_type) != 0) return -1;
  if (device_type <= kDLCPU || device_type >= WF_FN_DEVICE_LIMIT) {
    return wf_err_raise("ValueError", "Invalid device type %lld for a device backend",
                        (long long)device_type);
  }
  TVMFFIObjectHandle fns[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; n == 5 && i < 4; ++i) {
    if (WebFFIArgToObject(&wf_fn_set_sig, args, i + 1, kTVMFFIFunction, &fns[i]) != 0) return -1;
  }
  wf_fn_device* d = &wf_fn_devices[device_type];
  if (n == 1) {
    if (WebFFIDeviceAPISet((int32_t)device_type, NULL) != 0) return -1;
    wf_fn_device_clear(d);
    return 0;
  }
  wf_fn_device next = {fns[0], fns[1], fns[2], fns[3]};
  WebFFIDeviceAPI api = {wf_fn_alloc, wf_fn_free, wf_fn_copy, wf_fn_sync, d};
  for (int i = 0; i < 4; ++i) wf_obj_incref((TVMFFIObject*)fns[i]);
  wf_fn_device old = *d;
  *d = next;
  if (WebFFIDeviceAPISet((int32_t)device_type, &api) != 0) {
    *d = old;
    wf_fn_device_clear(&next);
    return -1;
  }
  wf_fn_device_clear(&old);
  return 0;
}

int wf_device_api_register_builtins(void) {
  return wf_global_register("webffi.SetDeviceAPI", wf_fn_set_device_api, NULL);
}
