/*
 * A module that makes objects for others (tests/modules/consumer.c uses
 * them): a float32 tensor and a function object that owns C state.
 */
#include <stdlib.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* Set by the loader to this module's handle. */
TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = NULL;

/* make_range(n) -> ffi.Tensor float32 [0, 1, ..., n-1] */
TVM_FFI_DLL_EXPORT int __tvm_ffi_make_range(void* self, const TVMFFIAny* args, int32_t num_args,
                                            TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt || args[0].v_int64 < 0) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "make_range expects one non-negative int");
    return -1;
  }
  int64_t shape[1] = {args[0].v_int64};
  DLTensor proto = {0};
  proto.device.device_type = kDLCPU;
  proto.ndim = 1;
  proto.dtype.code = kDLFloat;
  proto.dtype.bits = 32;
  proto.dtype.lanes = 1;
  proto.shape = shape;
  TVMFFIObjectHandle tensor = NULL;
  if (TVMFFIEnvTensorAlloc(&proto, &tensor) != 0) return -1;
  DLTensor* t = (DLTensor*)((char*)tensor + sizeof(TVMFFIObject));
  for (int64_t i = 0; i < shape[0]; ++i) ((float*)t->data)[i] = (float)i;
  result->type_index = kTVMFFITensor;
  result->zero_padding = 0;
  result->v_int64 = 0;
  result->v_obj = (TVMFFIObject*)tensor;
  return 0;
}

static int scale_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 1 || (args[0].type_index != kTVMFFIFloat && args[0].type_index != kTVMFFIInt)) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "scale expects one number");
    return -1;
  }
  double x = args[0].type_index == kTVMFFIInt ? (double)args[0].v_int64 : args[0].v_float64;
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = x * *(double*)self;
  return 0;
}

/* make_scale(k) -> a function f with f(x) = k * x; k lives on the heap */
TVM_FFI_DLL_EXPORT int __tvm_ffi_make_scale(void* self, const TVMFFIAny* args, int32_t num_args,
                                            TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIFloat) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "make_scale expects one float");
    return -1;
  }
  double* k = (double*)malloc(sizeof(double));
  if (k == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "make_scale: out of memory");
    return -1;
  }
  *k = args[0].v_float64;
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionCreate(k, scale_call, free, &f) != 0) {
    free(k);
    return -1;
  }
  result->type_index = kTVMFFIFunction;
  result->zero_padding = 0;
  result->v_int64 = 0;
  result->v_obj = (TVMFFIObject*)f;
  return 0;
}

/* library_ctx() -> bool: whether the loader set __tvm_ffi__library_ctx */
TVM_FFI_DLL_EXPORT int __tvm_ffi_has_library_ctx(void* self, const TVMFFIAny* args,
                                                 int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFIBool;
  result->zero_padding = 0;
  result->v_int64 = __tvm_ffi__library_ctx != NULL;
  return 0;
}
