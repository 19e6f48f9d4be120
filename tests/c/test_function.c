/* Functions, the global registry, typed-call messages and testing.*. */
#include <webffi/typed_call.h>
#include <webffi/webffi.h>

#include "harness.h"

static int deleted_self;
static void counter_deleter(void* self) { deleted_self = *(int*)self; }

static int add_ints(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char* const types[] = {"int", "int"};
  static const WebFFISignature sig = {"add", 2, types, "int"};
  int64_t a, b;
  (void)self;
  if (WebFFICheckNumArgs(&sig, n) != 0) return -1;
  if (WebFFIArgToInt(&sig, args, 0, &a) != 0 || WebFFIArgToInt(&sig, args, 1, &b) != 0) return -1;
  result->type_index = kTVMFFIInt;
  result->v_int64 = a + b;
  return 0;
}

void function_create_call_and_deleter(void) {
  static int self = 7;
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(&self, add_ints, counter_deleter, &f) == 0);
  CHECK_EQ_INT(((TVMFFIObject*)f)->type_index, kTVMFFIFunction);
  TVMFFIAny args[2] = {any_int(40), any_int(2)}, result = any_none();
  CHECK(TVMFFIFunctionCall(f, args, 2, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIInt);
  CHECK_EQ_INT(result.v_int64, 42);
  CHECK_EQ_INT(deleted_self, 0);
  TVMFFIObjectDecRef(f);
  CHECK_EQ_INT(deleted_self, 7);
}

static void* seen_self;
static int record_self(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args;
  (void)n;
  (void)result;
  seen_self = self;
  return 0;
}

/* Upstream's contract: a callback made with a `self` receives it; one made
 * without state (NULL self and deleter) is the Function's own safe_call and
 * receives the Function. */
void function_callback_receives_self_or_the_function(void) {
  static int state = 3;
  TVMFFIObjectHandle with_state = NULL, without = NULL;
  TVMFFIAny result = any_none();
  CHECK(TVMFFIFunctionCreate(&state, record_self, NULL, &with_state) == 0);
  CHECK(TVMFFIFunctionCall(with_state, NULL, 0, &result) == 0);
  CHECK(seen_self == &state);
  CHECK(TVMFFIFunctionCreate(NULL, record_self, NULL, &without) == 0);
  CHECK(TVMFFIFunctionCall(without, NULL, 0, &result) == 0);
  CHECK(seen_self == without);
  TVMFFIObjectDecRef(with_state);
  TVMFFIObjectDecRef(without);
}

void function_call_on_non_function_is_type_error(void) {
  TVMFFIByteArray in = {"not a function", 14};
  TVMFFIAny s, result = any_none();
  CHECK(TVMFFIStringFromByteArray(&in, &s) == 0);
  /* checked where handles come from JS; TVMFFIFunctionCall trusts C, as upstream's */
  CHECK(WebFFIFunctionCallWords(s.v_obj, 0, 0, 0, 0, 0, 0, &result) == -1);
  CHECK_RAISED("TypeError", "WebFFIFunctionCallWords: expected `ffi.Function` but got `ffi.String`");
  TVMFFIObjectDecRef(s.v_obj);
}

static int echo_second(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)n;
  return TVMFFIAnyViewToOwnedAny(&args[1], result);
}

void function_call_words_status_and_result(void) {
  TVMFFIObjectHandle f = NULL, echo = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, add_ints, NULL, &f) == 0);
  TVMFFIAny result = any_int(99); /* overwritten: the result starts as None */
  const int32_t two_ints = WEBFFI_WORD_INT | (WEBFFI_WORD_INT << WEBFFI_WORD_BITS);
  CHECK_EQ_INT(WebFFIFunctionCallWords(f, 2, two_ints, 40, -42, 0, 0, &result), 1);
  CHECK_EQ_INT(result.type_index, kTVMFFIInt);
  CHECK_EQ_INT(result.v_int64, -2);
  CHECK_EQ_INT(WebFFIFunctionCallWords(f, 1, two_ints, 40, 0, 0, 0, &result), -1);
  CHECK_RAISED("TypeError", "Mismatched number of arguments when calling: `add(0: int, 1: int) -> int`. Expected 2 but got 1 arguments");
  CHECK_EQ_INT(WebFFIFunctionCallWords(f, 5, 0, 0, 0, 0, 0, &result), -1);
  CHECK_RAISED("ValueError", "WebFFIFunctionCallWords: invalid arguments (num_args 5)");
  CHECK(TVMFFIFunctionCreate(NULL, echo_second, NULL, &echo) == 0);
  const int32_t int_bool = WEBFFI_WORD_INT | (WEBFFI_WORD_BOOL << WEBFFI_WORD_BITS);
  CHECK_EQ_INT(WebFFIFunctionCallWords(echo, 2, int_bool, 0, 7, 0, 0, &result), 1);
  CHECK(result.type_index == kTVMFFIBool && result.v_int64 == 1);
  const int32_t int_none = WEBFFI_WORD_INT | (WEBFFI_WORD_NONE << WEBFFI_WORD_BITS);
  CHECK_EQ_INT(WebFFIFunctionCallWords(echo, 2, int_none, 0, 7, 0, 0, &result), 0);
  CHECK_EQ_INT(result.type_index, kTVMFFINone);
  const int32_t int_object = WEBFFI_WORD_INT | (WEBFFI_WORD_OBJECT << WEBFFI_WORD_BITS);
  CHECK_EQ_INT(WebFFIFunctionCallWords(echo, 2, int_object, 0, 0, 0, 0, &result), -1);
  CHECK_RAISED("ValueError", "WebFFIFunctionCallWords: argument 1 is a NULL handle");
  const int32_t int_str = WEBFFI_WORD_INT | (WEBFFI_WORD_RAW_STR << WEBFFI_WORD_BITS);
  CHECK_EQ_INT(WebFFIFunctionCallWords(echo, 2, int_str, 0, 0, 0, 0, &result), -1);
  CHECK_RAISED("ValueError", "WebFFIFunctionCallWords: argument 1 is a NULL string");
  const int32_t int_unknown = WEBFFI_WORD_INT | (15 << WEBFFI_WORD_BITS);
  CHECK_EQ_INT(WebFFIFunctionCallWords(echo, 2, int_unknown, 0, 7, 0, 0, &result), -1);
  CHECK_RAISED("ValueError", "WebFFIFunctionCallWords: argument 1 has an unknown kind 15");
#if UINTPTR_MAX == 0xFFFFFFFFu
  /* A string travels as its address (wasm32), as a `const char*`; the result owns a copy. */
  static const char text[] = "longer than a small string";
  CHECK_EQ_INT(WebFFIFunctionCallWords(echo, 2, int_str, 0, (int32_t)(uintptr_t)text, 0, 0, &result), 1);
  CHECK_EQ_INT(result.type_index, kTVMFFIStr);
  TVMFFIByteArray* got = TVMFFIBytesGetByteArrayPtr(result.v_obj);
  CHECK(got->size == sizeof(text) - 1 && memcmp(got->data, text, got->size) == 0);
  TVMFFIObjectDecRef(result.v_obj);
  /* A handle travels as its address (wasm32); the callee borrows it. */
  CHECK_EQ_INT(WebFFIFunctionCallWords(echo, 2, int_object, 0, (int32_t)(uintptr_t)f, 0, 0, &result), 1);
  CHECK(result.type_index == kTVMFFIFunction && result.v_obj == (TVMFFIObject*)f);
  TVMFFIObjectDecRef(result.v_obj);
#endif
  TVMFFIObjectDecRef(echo);
  TVMFFIObjectDecRef(f);
}

void global_set_get_and_duplicate(void) {
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, add_ints, NULL, &f) == 0);
  TVMFFIByteArray name = {"test.add", 8};
  CHECK(TVMFFIFunctionSetGlobal(&name, f, 0) == 0);
  CHECK(TVMFFIFunctionSetGlobal(&name, f, 0) == -1);
  CHECK_RAISED("RuntimeError", "Global Function `test.add` is already registered");
  CHECK(TVMFFIFunctionSetGlobal(&name, f, 1) == 0);
  TVMFFIObjectHandle got = NULL;
  CHECK(TVMFFIFunctionGetGlobal(&name, &got) == 0);
  CHECK(got == f);
  /* a hit is a new reference: f is held by us, the registry and got */
  CHECK_EQ_INT(((TVMFFIObject*)f)->combined_ref_count & 0xffffffffu, 3);
  TVMFFIObjectDecRef(got);
  TVMFFIObjectDecRef(f);
}

void global_get_miss_returns_null(void) {
  TVMFFIByteArray name = {"no.such.function", 16};
  TVMFFIObjectHandle got = (TVMFFIObjectHandle)1;
  CHECK(TVMFFIFunctionGetGlobal(&name, &got) == 0);
  CHECK(got == NULL);
}

void global_list_and_remove(void) {
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, add_ints, NULL, &f) == 0);
  TVMFFIByteArray name = {"test.removable", 14};
  CHECK(TVMFFIFunctionSetGlobal(&name, f, 0) == 0);
  TVMFFIObjectDecRef(f);

  TVMFFIAny result;
  CHECK(call_global("ffi.FunctionListGlobalNamesFunctor", NULL, 0, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIFunction);
  TVMFFIObjectHandle names = result.v_obj;
  TVMFFIAny arg = any_int(-1), count = any_none();
  CHECK(TVMFFIFunctionCall(names, &arg, 1, &count) == 0);
  CHECK(count.v_int64 >= 7);
  int seen_echo = 0, seen_removable = 0;
  for (int64_t i = 0; i < count.v_int64; ++i) {
    TVMFFIAny idx = any_int(i), name_any = any_none();
    CHECK(TVMFFIFunctionCall(names, &idx, 1, &name_any) == 0);
    seen_echo |= strcmp(any_str(&name_any), "testing.echo") == 0;
    seen_removable |= strcmp(any_str(&name_any), "test.removable") == 0;
    if (name_any.type_index == kTVMFFIStr) TVMFFIObjectDecRef(name_any.v_obj);
  }
  CHECK(seen_echo && seen_removable);
  TVMFFIAny out_of_range = any_int(count.v_int64), ignored = any_none();
  CHECK(TVMFFIFunctionCall(names, &out_of_range, 1, &ignored) == -1);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK_EQ_STR(((TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject)))->kind.data, "IndexError");
  TVMFFIObjectDecRef(err);
  TVMFFIObjectDecRef(names);

  TVMFFIAny remove_arg = any_cstr("test.removable");
  CHECK(call_global("ffi.FunctionRemoveGlobal", &remove_arg, 1, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIBool);
  CHECK_EQ_INT(result.v_int64, 1);
  CHECK(call_global("ffi.FunctionRemoveGlobal", &remove_arg, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 0);
  TVMFFIObjectHandle got = (TVMFFIObjectHandle)1;
  CHECK(TVMFFIFunctionGetGlobal(&name, &got) == 0);
  CHECK(got == NULL);
}

void global_metadata(void) {
  TVMFFIAny arg = any_cstr("testing.add_one"), result;
  CHECK(call_global("ffi.GetGlobalFuncMetadata", &arg, 1, &result) == 0);
  CHECK(strstr(any_str(&result), "\"type_schema\"") != NULL);
  if (result.type_index == kTVMFFIStr) TVMFFIObjectDecRef(result.v_obj);
  arg = any_cstr("testing.nop");
  CHECK(call_global("ffi.GetGlobalFuncMetadata", &arg, 1, &result) == 0);
  CHECK_EQ_STR(any_str(&result), "{}");
  arg = any_cstr("no.such.function");
  CHECK(call_global("ffi.GetGlobalFuncMetadata", &arg, 1, &result) == -1);
  CHECK_RAISED("RuntimeError", "Global Function `no.such.function` is not registered");
}

void typed_call_wrong_type_message(void) {
  TVMFFIAny arg = any_float(1.5), result;
  CHECK(call_global("testing.add_one", &arg, 1, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. "
               "Expected `int` but got `float`");
  arg = any_none();
  CHECK(call_global("testing.add_one", &arg, 1, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. "
               "Expected `int` but got `None`");
}

void typed_call_wrong_count_message(void) {
  TVMFFIAny result, args[2] = {any_int(1), any_int(2)};
  CHECK(call_global("testing.add_one", NULL, 0, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `testing.add_one(0: int) -> int`. "
               "Expected 1 but got 0 arguments");
  CHECK(call_global("testing.add_one", args, 2, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `testing.add_one(0: int) -> int`. "
               "Expected 1 but got 2 arguments");
}

void typed_call_conversions(void) {
  TVMFFIAny arg = any_bool(1), result;
  CHECK(call_global("testing.add_one", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 2);
  double d;
  TVMFFIAny ints[1] = {any_int(3)};
  CHECK(WebFFIArgToFloat(NULL, ints, 0, &d) == 0);
  CHECK(d == 3.0);
  int64_t i;
  TVMFFIAny none[1] = {any_none()};
  CHECK(WebFFIArgToInt(NULL, none, 0, &i) == -1);
  CHECK_RAISED("TypeError", "Cannot convert from type `None` to `int`");
}

void testing_echo_nop_add_one(void) {
  TVMFFIAny arg = any_cstr("echoed string"), result;
  CHECK(call_global("testing.echo", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIStr);
  CHECK_EQ_STR(any_str(&result), "echoed string");
  TVMFFIObjectDecRef(result.v_obj);
  CHECK(call_global("testing.nop", NULL, 0, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFINone);
  arg = any_int(41);
  CHECK(call_global("testing.add_one", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 42);
  CHECK(call_global("testing.echo", NULL, 0, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `testing.echo(0: Any) -> Any`. "
               "Expected 1 but got 0 arguments");
}

void testing_raise_error_raises_given_kind(void) {
  TVMFFIAny args[2] = {any_cstr("ValueError"), any_cstr("something went wrong")}, result;
  CHECK(call_global("testing.test_raise_error", args, 2, &result) == -1);
  CHECK_RAISED("ValueError", "something went wrong");
}

void testing_apply_calls_function(void) {
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, add_ints, NULL, &f) == 0);
  TVMFFIAny args[3] = {any_obj(f), any_int(5), any_int(6)}, result;
  CHECK(call_global("testing.apply", args, 3, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 11);
  /* errors raised by the inner function come out unchanged */
  args[2] = any_float(1.0);
  CHECK(call_global("testing.apply", args, 3, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #1 when calling: `add(0: int, 1: int) -> int`. "
               "Expected `int` but got `float`");
  TVMFFIObjectDecRef(f);
}

void testing_object_use_count(void) {
  TVMFFIByteArray in = {"counted object", 14};
  TVMFFIAny s, result;
  CHECK(TVMFFIStringFromByteArray(&in, &s) == 0);
  CHECK(call_global("testing.object_use_count", &s, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 1);
  TVMFFIObjectIncRef(s.v_obj);
  CHECK(call_global("testing.object_use_count", &s, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 2);
  TVMFFIObjectDecRef(s.v_obj);
  TVMFFIObjectDecRef(s.v_obj);
}

void typed_call_names_string_forms_str(void) {
  TVMFFIAny arg = any_cstr("x"), result;
  CHECK(call_global("testing.add_one", &arg, 1, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. "
               "Expected `int` but got `str`");
}

/* A C signature as the metadata upstream records for a typed function
 * (what an exported __tvm_ffi__metadata_NAME returns), in its spellings. */
void typed_call_signature_metadata_is_upstreams(void) {
  static const char* const types[] = {"Tensor", "Optional[int]", "Array<str>", "bytes", "Any"};
  const WebFFISignature sig = {"f", 5, types, "str"};
  TVMFFIAny r;
  CHECK(WebFFISignatureMetadata(&sig, &r) == 0);
  CHECK_EQ_STR(any_str(&r),
               "{\"type_schema\":\"{\\\"type\\\":\\\"ffi.Function\\\",\\\"args\\\":["
               "{\\\"type\\\":\\\"ffi.String\\\"},{\\\"type\\\":\\\"ffi.Tensor\\\"},"
               "{\\\"type\\\":\\\"Optional\\\",\\\"args\\\":[{\\\"type\\\":\\\"int\\\"}]},"
               "{\\\"type\\\":\\\"ffi.Array\\\",\\\"args\\\":[{\\\"type\\\":\\\"ffi.String\\\"}]},"
               "{\\\"type\\\":\\\"ffi.Bytes\\\"},{\\\"type\\\":\\\"Any\\\"}]}\"}");
  release(&r);
  /* no arguments and no return type given: () -> Any */
  const WebFFISignature none = {"g", 0, NULL, NULL};
  CHECK(WebFFISignatureMetadata(&none, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "{\"type_schema\":\"{\\\"type\\\":\\\"ffi.Function\\\",\\\"args\\\":["
                            "{\\\"type\\\":\\\"Any\\\"}]}\"}");
  release(&r);
  /* a malformed type still gives text (and ends) */
  static const char* const odd[] = {"Map<int", "<>,", ""};
  const WebFFISignature bad = {"h", 3, odd, "]"};
  CHECK(WebFFISignatureMetadata(&bad, &r) == 0);
  release(&r);
  CHECK(WebFFISignatureMetadata(NULL, &r) == -1);
  CHECK_RAISED("ValueError", "WebFFISignatureMetadata: NULL or bad signature");
}
