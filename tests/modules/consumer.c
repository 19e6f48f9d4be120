/*
 * A module that uses objects made elsewhere (by tests/modules/producer.c
 * or the runtime): it sums a float32 tensor and calls a function object.
 */
#include <stddef.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* sum(t) -> float: the sum of a 1-D float32 tensor */
TVM_FFI_DLL_EXPORT int __tvm_ffi_sum(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFITensor) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "sum expects one ffi.Tensor");
    return -1;
  }
  const DLTensor* t = (const DLTensor*)((const char*)args[0].v_obj + sizeof(TVMFFIObject));
  if (t->ndim != 1 || t->dtype.code != kDLFloat || t->dtype.bits != 32) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "sum expects a 1-D float32 tensor");
    return -1;
  }
  double total = 0;
  const float* data = (const float*)((const char*)t->data + t->byte_offset);
  for (int64_t i = 0; i < t->shape[0]; ++i) total += data[i];
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = total;
  return 0;
}

/* apply(f, x) -> f(x) */
TVM_FFI_DLL_EXPORT int __tvm_ffi_apply(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "apply expects (ffi.Function, value)");
    return -1;
  }
  TVMFFIAny arg = args[1];
  return TVMFFIFunctionCall(args[0].v_obj, &arg, 1, result);
}

/* Calls global NAME with args; 0, or -1 with the error raised. */
static int call_global(const char* name, size_t len, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIByteArray key = {name, len};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &f) != 0) return -1;
  if (f == NULL) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "a global function is missing");
    return -1;
  }
  out->type_index = kTVMFFINone;
  out->zero_padding = 0;
  out->v_int64 = 0;
  int rc = TVMFFIFunctionCall(f, args, n, out);
  TVMFFIObjectDecRef(f);
  return rc;
}

/* system_lib_call(name, x) -> ffi.SystemLib().name(x), looked up from C */
TVM_FFI_DLL_EXPORT int __tvm_ffi_system_lib_call(void* self, const TVMFFIAny* args,
                                                 int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIRawStr) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "system_lib_call expects (str, value)");
    return -1;
  }
  TVMFFIAny lib;
  if (call_global("ffi.SystemLib", 13, NULL, 0, &lib) != 0) return -1;
  TVMFFIAny lookup[2] = {lib, args[0]};
  TVMFFIAny f;
  int rc = call_global("ffi.ModuleGetFunction", 21, lookup, 2, &f);
  TVMFFIObjectDecRef(lib.v_obj);
  if (rc != 0) return -1;
  if (f.type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("AttributeError", "the system library has no such function");
    return -1;
  }
  TVMFFIAny arg = args[1];
  rc = TVMFFIFunctionCall(f.v_obj, &arg, 1, result);
  TVMFFIObjectDecRef(f.v_obj);
  return rc;
}

/* Set by the loader to this module's handle: the key to its imports. */
TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = NULL;

/* call_import(name, x) -> NAME(x), NAME found in the modules this one
 * imports (ffi.ModuleImportModule), as compiled code finds its callees */
TVM_FFI_DLL_EXPORT int __tvm_ffi_call_import(void* self, const TVMFFIAny* args, int32_t num_args,
                                             TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIRawStr) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "call_import expects (str, value)");
    return -1;
  }
  TVMFFIObjectHandle f = NULL; /* borrowed from the module's cache */
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, args[0].v_c_str, &f) != 0) return -1;
  TVMFFIAny arg = args[1];
  return TVMFFIFunctionCall(f, &arg, 1, result);
}
