/* A C module whose error is raised two helpers deep, for the backtrace
 * tests (tests/support/debug_suite.mjs): built with -g at -O0 (three real
 * frames) and at -O2 (the helpers inlined), with -gline-tables-only, plain,
 * and linked in. The suite finds the lines it expects by their `line:`
 * comments. */
#include <tvm/ffi/c_api.h>

static int check_positive(int64_t n) {
  if (n < 0) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "n must not be negative"); /* line: raise */
    return -1;
  }
  return 0;
}

static int validate(int64_t n) {
  if (check_positive(n) != 0) return -1; /* line: validate */
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_traced(void* self, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "traced(n) takes one int");
    return -1;
  }
  if (validate(args[0].v_int64) != 0) return -1; /* line: entry */
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}
