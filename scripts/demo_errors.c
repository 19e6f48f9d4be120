/*
 * The Node demo's errors (scripts/demo.mjs): a C module built with
 * `webffi build --module -gline-tables-only`, so every C frame of an error
 * names its file, line and function.
 *
 *   checked_sqrt(x) -> sqrt(x)   a ValueError from a helper for x < 0
 *   apply(f, a, b)   -> f(a, b)   calls a JS function back; what it throws
 *                                 comes back out through this C frame
 */
#include <math.h>

#include <tvm/ffi/c_api.h>
#include <webffi/typed_call.h>

static const char* const kFloat[] = {"float"};
static const WebFFISignature kSqrt = {"checked_sqrt", 1, kFloat, "float"};

static int check_non_negative(double x) {
  if (x < 0) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "checked_sqrt: x must not be negative");
    return -1;
  }
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_checked_sqrt(void* self, const TVMFFIAny* args, int32_t num_args,
                                              TVMFFIAny* result) {
  double x;
  (void)self;
  if (WebFFICheckNumArgs(&kSqrt, num_args) != 0) return -1;
  if (WebFFIArgToFloat(&kSqrt, args, 0, &x) != 0) return -1;
  if (check_non_negative(x) != 0) return -1;
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = sqrt(x);
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_apply(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)self;
  if (num_args < 1 || args[0].type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "apply(f, ...args) expects a function first");
    return -1;
  }
  /* the callee only reads its arguments (the ABI passes them as non-const) */
  return TVMFFIFunctionCall(args[0].v_obj, (TVMFFIAny*)(args + 1), num_args - 1, result);
}
