/* ffi.FunctionFromExternC(self, safe_call, deleter): a Function over a C
 * callback given as raw pointers (as TVMFFIFunctionCreate takes them), for
 * bindings that hold function pointers as opaque values. */
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "runtime_init.h"

static const char* const wf_extern_types[] = {"void*", "void*", "void*"};
static const WebFFISignature wf_extern_sig = {"ffi.FunctionFromExternC", 3, wf_extern_types,
                                              "ffi.Function"};

/* void* arguments: an opaque pointer, or None for NULL. */
static int wf_extern_ptr(const TVMFFIAny* args, int32_t i, void** out) {
  if (args[i].type_index == kTVMFFINone) {
    *out = NULL;
    return 0;
  }
  if (args[i].type_index != kTVMFFIOpaquePtr) {
    return wf_err_raise("TypeError",
                        "Mismatched type on argument #%d when calling: "
                        "`ffi.FunctionFromExternC(0: void*, 1: void*, 2: void*) -> ffi.Function`. "
                        "Expected `void*` but got `%s`",
                        (int)i, TVMFFIGetTypeInfo(args[i].type_index) != NULL
                                    ? TVMFFIGetTypeInfo(args[i].type_index)->type_key.data
                                    : "?");
  }
  *out = args[i].v_ptr;
  return 0;
}

static int wf_function_from_extern_c(void* self, const TVMFFIAny* args, int32_t n,
                                     TVMFFIAny* result) {
  (void)self;
  void *handle = NULL, *call = NULL, *deleter = NULL;
  if (WebFFICheckNumArgs(&wf_extern_sig, n) != 0 || wf_extern_ptr(args, 0, &handle) != 0 ||
      wf_extern_ptr(args, 1, &call) != 0 || wf_extern_ptr(args, 2, &deleter) != 0) {
    return -1;
  }
  if (call == NULL) {
    return wf_err_raise("ValueError", "ffi.FunctionFromExternC: safe_call must not be NULL");
  }
  /* Function pointers travel as data pointers here, as upstream passes them. */
  TVMFFIObject* f = wf_func_new((TVMFFISafeCallType)(uintptr_t)call, handle,
                                (void (*)(void*))(uintptr_t)deleter);
  if (f == NULL) return -1;
  wf_any_set_object(result, f);
  return 0;
}

int wf_function_extern_register(void) {
  return wf_global_register("ffi.FunctionFromExternC", wf_function_from_extern_c, NULL);
}
