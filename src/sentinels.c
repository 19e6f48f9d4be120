/* ffi.GetInvalidObject and ffi.GetKwargsObject: two distinct singleton
 * objects that bindings compare against by identity (a missing value, the
 * marker before keyword arguments). */
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "global_registry.h"
#include "map.h"
#include "object.h"
#include "runtime_init.h"
#include "sentinels.h"

/* Never freed: the first reference is the runtime's own. */
static TVMFFIObject wf_kwargs_sentinel = {1, kTVMFFIObject, 0, {.deleter = NULL}};

TVMFFIObject* wf_kwargs_object(void) { return &wf_kwargs_sentinel; }

static TVMFFIObject wf_missing_sentinel = {1, kTVMFFIObject, 0, {.deleter = NULL}};

TVMFFIObject* wf_missing_object(void) { return &wf_missing_sentinel; }

static const WebFFISignature wf_invalid_sig = {"ffi.GetInvalidObject", 0, NULL, "ffi.Object"};
static const WebFFISignature wf_kwargs_sig = {"ffi.GetKwargsObject", 0, NULL, "ffi.Object"};

/* The invalid object is the one ffi.MapGetItemOrMissing answers for an
 * absent key (upstream's GetMissingObject serves both). */
static int wf_get_invalid(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  if (WebFFICheckNumArgs(&wf_invalid_sig, n) != 0) return -1;
  TVMFFIObject* empty = wf_map_new(kTVMFFIMap, 0);
  if (empty == NULL) return -1;
  TVMFFIByteArray name = {"ffi.MapGetItemOrMissing", 23};
  TVMFFIObjectHandle f = NULL;
  TVMFFIAny call_args[2];
  wf_any_set_object(&call_args[0], empty);
  wf_any_set_none(&call_args[1]);
  int rc = TVMFFIFunctionGetGlobal(&name, &f);
  if (rc == 0 && f == NULL) rc = wf_err_raise("RuntimeError", "ffi.MapGetItemOrMissing is missing");
  if (rc == 0) {
    rc = TVMFFIFunctionCall(f, call_args, 2, result);
    TVMFFIObjectDecRef(f);
  }
  wf_obj_decref(empty);
  return rc;
}

static int wf_get_kwargs(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  if (WebFFICheckNumArgs(&wf_kwargs_sig, n) != 0) return -1;
  wf_obj_incref(&wf_kwargs_sentinel);
  wf_any_set_object(result, &wf_kwargs_sentinel);
  return 0;
}

int wf_sentinels_register(void) {
  if (wf_global_register("ffi.GetInvalidObject", wf_get_invalid, NULL) != 0) return -1;
  return wf_global_register("ffi.GetKwargsObject", wf_get_kwargs, NULL);
}
