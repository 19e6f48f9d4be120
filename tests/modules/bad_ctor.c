/* A module whose constructor traps with a stack frame open: loading it
 * must fail cleanly and leave the runtime's stack pointer as it was. */
#include <string.h>
#include <tvm/ffi/c_api.h>

__attribute__((noinline)) static void bad_ctor_fill(volatile char* buf, size_t n) {
  memset((char*)buf, 1, n);
  if (buf[n - 1] == 1) __builtin_trap();
}

__attribute__((constructor)) static void bad_ctor_init(void) {
  volatile char buf[256];
  bad_ctor_fill(buf, sizeof(buf));
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_never(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  (void)result;
  return 0;
}
