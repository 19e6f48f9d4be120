/*
 * A user library in the style of tvm-ffi's stable C ABI example, written
 * against the tvm-ffi headers only: add_one(x, y) writes x + 1 into y for
 * 1-D float32 tensors, raise_error(message) raises a ValueError, and
 * add_int(n) mirrors the runtime's testing.add_one (for bench/). The tests
 * build it linked into the runtime and as a module loaded at run time.
 */
#include <tvm/ffi/c_api.h>

/* A tensor argument: an ffi.Tensor object or a raw DLTensor*. */
static DLTensor* tensor_arg(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIDLTensorPtr) return (DLTensor*)arg->v_ptr;
  if (arg->type_index == kTVMFFITensor) return (DLTensor*)((char*)arg->v_obj + sizeof(TVMFFIObject));
  return NULL;
}

static int is_float32_vector(const DLTensor* t) {
  return t->ndim == 1 && t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1 &&
         t->device.device_type == kDLCPU;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_add_one(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  (void)self;
  (void)result;
  if (num_args != 2) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects two tensors (x, y)");
    return -1;
  }
  DLTensor* x = tensor_arg(&args[0]);
  DLTensor* y = tensor_arg(&args[1]);
  if (x == NULL || y == NULL || !is_float32_vector(x) || !is_float32_vector(y)) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects 1-D float32 CPU tensors");
    return -1;
  }
  if (x->shape[0] != y->shape[0]) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "add_one: x and y differ in length");
    return -1;
  }
  const float* in = (const float*)((const char*)x->data + x->byte_offset);
  float* out = (float*)((char*)y->data + y->byte_offset);
  for (int64_t i = 0; i < x->shape[0]; ++i) out[i] = in[i] + 1.0f;
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_raise_error(void* self, const TVMFFIAny* args, int32_t num_args,
                                             TVMFFIAny* result) {
  (void)self;
  (void)result;
  const char* message = num_args == 1 && args[0].type_index == kTVMFFIRawStr
                            ? args[0].v_c_str
                            : "raise_error was called";
  TVMFFIErrorSetRaisedFromCStr("ValueError", message);
  return -1;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_add_int(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_int expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}
