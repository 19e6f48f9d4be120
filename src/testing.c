/* testing.* global functions, for tests, benchmarks and the demo. */
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "object.h"
#include "runtime_init.h"
#include "type_registry.h"

static const char* const wf_testing_any1[] = {"Any"};
static const WebFFISignature wf_testing_echo_sig = {"testing.echo", 1, wf_testing_any1, "Any"};

static int testing_echo(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (WebFFICheckNumArgs(&wf_testing_echo_sig, n) != 0) return -1;
  return TVMFFIAnyViewToOwnedAny(&args[0], result);
}

static int testing_nop(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  (void)result;
  return 0;
}

static const char* const wf_testing_int1[] = {"int"};
static const WebFFISignature wf_testing_add_one_sig = {"testing.add_one", 1, wf_testing_int1,
                                                       "int"};

static int testing_add_one(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int64_t x;
  if (WebFFICheckNumArgs(&wf_testing_add_one_sig, n) != 0) return -1;
  if (WebFFIArgToInt(&wf_testing_add_one_sig, args, 0, &x) != 0) return -1;
  wf_any_set_int(result, x + 1);
  return 0;
}

static const char* const wf_testing_str2[] = {"str", "str"};
static const WebFFISignature wf_testing_raise_sig = {"testing.test_raise_error", 2,
                                                     wf_testing_str2, "None"};

static int testing_raise_error(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIByteArray kind, message;
  if (WebFFICheckNumArgs(&wf_testing_raise_sig, n) != 0) return -1;
  if (WebFFIArgToString(&wf_testing_raise_sig, args, 0, &kind) != 0) return -1;
  if (WebFFIArgToString(&wf_testing_raise_sig, args, 1, &message) != 0) return -1;
  /* As C code raises most errors (TVMFFIErrorSetRaisedFromCStr): the
   * backtrace starts at this frame, the runtime's own frames left out. */
  return wf_err_set_raised(&kind, &message);
}

static int testing_apply(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n < 1 || !wf_any_is_object(&args[0]) ||
      !wf_type_is_instance(args[0].type_index, kTVMFFIFunction)) {
    return wf_err_raise("TypeError", "testing.apply(f, *args) expects an `ffi.Function` first");
  }
  return wf_func_call(args[0].v_obj, args + 1, n - 1, result);
}

/* Calls f with a `DLTensor*` over a float32[2, 2] on this C frame (as C
 * kernels hand out their buffers) and returns the sum of its elements after
 * the call, so a test sees what the callback read and wrote. */
static int testing_call_with_dltensor(void* self, const TVMFFIAny* args, int32_t n,
                                      TVMFFIAny* result) {
  (void)self;
  if (n != 1 || !wf_any_is_object(&args[0]) ||
      !wf_type_is_instance(args[0].type_index, kTVMFFIFunction)) {
    return wf_err_raise("TypeError", "testing.call_with_dltensor(f) expects an `ffi.Function`");
  }
  float data[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  int64_t shape[2] = {2, 2};
  DLTensor dl = {data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIAny arg = {.type_index = kTVMFFIDLTensorPtr};
  arg.v_ptr = &dl;
  TVMFFIAny ignored;
  wf_any_set_none(&ignored);
  if (wf_func_call(args[0].v_obj, &arg, 1, &ignored) != 0) return -1;
  wf_any_release(&ignored);
  wf_any_set_float(result, (double)(data[0] + data[1] + data[2] + data[3]));
  return 0;
}

static int testing_object_use_count(void* self, const TVMFFIAny* args, int32_t n,
                                    TVMFFIAny* result) {
  (void)self;
  if (n != 1 || !wf_any_is_object(&args[0])) {
    return wf_err_raise("TypeError", "testing.object_use_count expects one object");
  }
  wf_any_set_int(result, (int64_t)wf_obj_strong_count(args[0].v_obj));
  return 0;
}

int wf_testing_register(void) {
  static const struct {
    const char* name;
    TVMFFISafeCallType fn;
    const char* metadata;
  } fns[] = {
      {"testing.echo", testing_echo, NULL},
      {"testing.nop", testing_nop, NULL},
      {"testing.add_one", testing_add_one,
       "{\"type_schema\":\"{\\\"type\\\":\\\"ffi.Function\\\",\\\"args\\\":[{\\\"type\\\":"
       "\\\"int\\\"},{\\\"type\\\":\\\"int\\\"}]}\"}"},
      {"testing.test_raise_error", testing_raise_error, NULL},
      {"testing.apply", testing_apply, NULL},
      {"testing.object_use_count", testing_object_use_count, NULL},
      {"testing.call_with_dltensor", testing_call_with_dltensor, NULL},
  };
  for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); ++i) {
    if (wf_global_register(fns[i].name, fns[i].fn, fns[i].metadata) != 0) return -1;
  }
  return 0;
}
