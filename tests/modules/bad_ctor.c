/* A module whose constructor traps: loading it must fail cleanly. */
#include <tvm/ffi/c_api.h>

__attribute__((constructor)) static void bad_ctor_init(void) { __builtin_trap(); }

TVM_FFI_DLL_EXPORT int __tvm_ffi_never(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  (void)result;
  return 0;
}
