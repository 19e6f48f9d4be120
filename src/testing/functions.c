/* testing.* global functions, for tests, benchmarks and the demo. */
#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>
#include <webffi/webffi.h>

#include "testing.h"

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
  wf_testing_set_int(result, x + 1);
  return 0;
}

static const char* const wf_testing_str2[] = {"str", "str"};
static const WebFFISignature wf_testing_raise_sig = {"testing.test_raise_error", 2,
                                                     wf_testing_str2, "None"};

/* A NUL-terminated copy of s in small, or on the heap when it does not fit
 * (the caller frees what differs from small); NULL when out of memory. */
static char* wf_testing_cstr(const TVMFFIByteArray* s, char* small, size_t small_size) {
  char* out = s->size < small_size ? small : (char*)malloc(s->size + 1);
  if (out == NULL) return NULL;
  if (s->size > 0) memcpy(out, s->data, s->size);
  out[s->size] = '\0';
  return out;
}

/* (no memchr: the runtime exports only the libc functions its modules need) */
static int wf_testing_has_nul(const TVMFFIByteArray* s) {
  for (size_t i = 0; i < s->size; ++i) {
    if (s->data[i] == '\0') return 1;
  }
  return 0;
}

static int testing_raise_error(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIByteArray kind, message;
  if (WebFFICheckNumArgs(&wf_testing_raise_sig, n) != 0) return -1;
  if (WebFFIArgToString(&wf_testing_raise_sig, args, 0, &kind) != 0) return -1;
  if (WebFFIArgToString(&wf_testing_raise_sig, args, 1, &message) != 0) return -1;
  if (wf_testing_has_nul(&kind) || wf_testing_has_nul(&message)) {
    /* Text with NUL bytes is kept whole: a C string would end at the first. */
    TVMFFIObjectHandle err = NULL;
    const TVMFFIByteArray* bt = TVMFFIBacktrace(__FILE__, __LINE__, __func__, 0);
    TVMFFIByteArray none = {"", 0};
    if (TVMFFIErrorCreate(&kind, &message, bt != NULL ? bt : &none, &err) != 0) return -1;
    TVMFFIErrorSetRaised(err);
    TVMFFIObjectDecRef(err);
    return -1;
  }
  /* As C code raises most errors: the backtrace starts at this frame, the
   * runtime's own frames left out. */
  char kind_small[64], message_small[256];
  char* k = wf_testing_cstr(&kind, kind_small, sizeof(kind_small));
  char* m = wf_testing_cstr(&message, message_small, sizeof(message_small));
  if (k != NULL && m != NULL) {
    TVMFFIErrorSetRaisedFromCStr(k, m);
  } else {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "testing.test_raise_error: out of memory");
  }
  if (k != kind_small) free(k);
  if (m != message_small) free(m);
  return -1;
}

static const char* const wf_testing_chained_types[] = {"str", "str", "str", "str", "Object"};
static const WebFFISignature wf_testing_chained_sig = {"testing.raise_chained", 5,
                                                       wf_testing_chained_types, "None"};

/*
 * raise_chained(kind, message, cause_kind, cause_message, extra): raises
 * kind/message with a cause chain (an error cause_kind/cause_message) and
 * extra (an object, or None) as its extra context. Its backtrace starts with
 * a frame it names itself, as upstream's TestRaiseError does
 * (TVMFFIBacktrace with file, line and function).
 */
static int testing_raise_chained(void* self, const TVMFFIAny* args, int32_t n,
                                 TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIByteArray kind, message, cause_kind, cause_message;
  const WebFFISignature* sig = &wf_testing_chained_sig;
  if (WebFFICheckNumArgs(sig, n) != 0) return -1;
  if (WebFFIArgToString(sig, args, 0, &kind) != 0 ||
      WebFFIArgToString(sig, args, 1, &message) != 0 ||
      WebFFIArgToString(sig, args, 2, &cause_kind) != 0 ||
      WebFFIArgToString(sig, args, 3, &cause_message) != 0) {
    return -1;
  }
  TVMFFIObjectHandle extra = NULL;
  if (args[4].type_index >= kTVMFFIStaticObjectBegin) {
    extra = args[4].v_obj;
  } else if (args[4].type_index != kTVMFFINone) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "testing.raise_chained: extra is an object or None");
    return -1;
  }
  TVMFFIObjectHandle cause = NULL, err = NULL;
  if (TVMFFIErrorCreate(&cause_kind, &cause_message, NULL, &cause) != 0) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "testing.raise_chained: out of memory");
    return -1;
  }
  const TVMFFIByteArray* bt = TVMFFIBacktrace(__FILE__, __LINE__, "testing_raise_chained", 0);
  int rc = TVMFFIErrorCreateWithCauseAndExtraContext(&kind, &message, bt, cause, extra, &err);
  TVMFFIObjectDecRef(cause);
  if (rc != 0) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "testing.raise_chained: out of memory");
    return -1;
  }
  TVMFFIErrorSetRaised(err);
  TVMFFIObjectDecRef(err);
  return -1;
}

static int testing_apply(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n < 1 || !wf_testing_is_function(&args[0])) {
    TVMFFIErrorSetRaisedFromCStr("TypeError",
                                 "testing.apply(f, *args) expects an `ffi.Function` first");
    return -1;
  }
  /* the callee only reads its arguments (the ABI passes them as non-const) */
  return TVMFFIFunctionCall(args[0].v_obj, (TVMFFIAny*)(args + 1), n - 1, result);
}

/* Calls f with a `DLTensor*` over a float32[2, 2] on this C frame (as C
 * kernels hand out their buffers) and returns the sum of its elements after
 * the call, so a test sees what the callback read and wrote. */
static int testing_call_with_dltensor(void* self, const TVMFFIAny* args, int32_t n,
                                      TVMFFIAny* result) {
  (void)self;
  if (n != 1 || !wf_testing_is_function(&args[0])) {
    TVMFFIErrorSetRaisedFromCStr("TypeError",
                                 "testing.call_with_dltensor(f) expects an `ffi.Function`");
    return -1;
  }
  float data[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  int64_t shape[2] = {2, 2};
  DLTensor dl = {data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIAny arg = {.type_index = kTVMFFIDLTensorPtr};
  arg.v_ptr = &dl;
  TVMFFIAny ignored = {.type_index = kTVMFFINone};
  if (TVMFFIFunctionCall(args[0].v_obj, &arg, 1, &ignored) != 0) return -1;
  wf_testing_release(&ignored);
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = (double)(data[0] + data[1] + data[2] + data[3]);
  return 0;
}

static int testing_object_use_count(void* self, const TVMFFIAny* args, int32_t n,
                                    TVMFFIAny* result) {
  (void)self;
  if (n != 1 || args[0].type_index < kTVMFFIStaticObjectBegin) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "testing.object_use_count expects one object");
    return -1;
  }
  wf_testing_set_int(result, (int64_t)WebFFIObjectStrongCount(args[0].v_obj));
  return 0;
}

int wf_testing_register_global(const char* name, TVMFFISafeCallType fn, const char* metadata) {
  TVMFFIMethodInfo info;
  memset(&info, 0, sizeof(info));
  if (TVMFFIFunctionCreate(NULL, fn, NULL, (TVMFFIObjectHandle*)&info.method.v_obj) != 0) return -1;
  info.method.type_index = kTVMFFIFunction;
  info.name.data = name;
  info.name.size = strlen(name);
  info.metadata.data = metadata != NULL ? metadata : "";
  info.metadata.size = metadata != NULL ? strlen(metadata) : 0;
  /* override: the module loaded again ({ replace: true }) registers again */
  int rc = TVMFFIFunctionSetGlobalFromMethodInfo(&info, 1);
  TVMFFIObjectDecRef(info.method.v_obj);
  return rc;
}

int wf_testing_functions_register(void) {
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
      {"testing.raise_chained", testing_raise_chained, NULL},
      {"testing.object_use_count", testing_object_use_count, NULL},
      {"testing.call_with_dltensor", testing_call_with_dltensor, NULL},
  };
  for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); ++i) {
    if (wf_testing_register_global(fns[i].name, fns[i].fn, fns[i].metadata) != 0) return -1;
  }
  return 0;
}
