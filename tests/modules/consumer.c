/*
 * A module that uses objects made elsewhere (by tests/modules/producer.c
 * or the runtime): it sums a float32 tensor and calls a function object.
 */
#include <tvm/ffi/c_api.h>

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
