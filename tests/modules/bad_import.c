/* A module that needs a function the runtime does not export: loading it
 * must fail cleanly. */
#include <tvm/ffi/c_api.h>

extern int webffi_test_function_nobody_exports(int);

TVM_FFI_DLL_EXPORT int __tvm_ffi_broken(void* self, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  (void)self;
  (void)num_args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = webffi_test_function_nobody_exports((int)args[0].v_int64);
  return 0;
}
