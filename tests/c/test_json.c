/* ffi.json.Parse / ffi.json.Stringify on plain and hostile JSON. */
#include "harness.h"

/* Parse then Stringify (compact) gives `want`. */
static void check_round_trip(const char* text, const char* want) {
  TVMFFIAny arg = any_cstr(text), parsed, printed;
  CHECK(call_global("ffi.json.Parse", &arg, 1, &parsed) == 0);
  CHECK(call_global("ffi.json.Stringify", &parsed, 1, &printed) == 0);
  CHECK_EQ_STR(any_str(&printed), want);
  release(&parsed);
  release(&printed);
}

/* Parsing n bytes fails with a ValueError carrying `message`. */
static void check_parse_error(const char* text, size_t n, const char* message) {
  TVMFFIByteArray bytes = {text, n};
  TVMFFIAny arg = any_none(), r;
  arg.type_index = kTVMFFIByteArrayPtr; /* not a string view: use a String */
  CHECK(TVMFFIStringFromByteArray(&bytes, &arg) == 0);
  CHECK(call_global("ffi.json.Parse", &arg, 1, &r) == -1);
  CHECK_RAISED("ValueError", message);
  release(&arg);
}

void json_parse_and_stringify_values(void) {
  check_round_trip(" {\"a\": [1, 2.5, \"x\", true, false, null], \"b\": {\"c\": -3}} ",
                   "{\"a\":[1,2.5,\"x\",true,false,null],\"b\":{\"c\":-3}}");
  /* whole floats keep a `.0`; NaN and the infinities as upstream */
  check_round_trip("[5.0, 1e300, NaN, Infinity, -Infinity, -0.0, 1E2]",
                   "[5.0,1e+300,NaN,Infinity,-Infinity,-0.0,100.0]");
  /* the shortest text that reads back, in Python's repr forms */
  check_round_trip("[5e-324, 1e16, 1e15, 0.0001, 0.00001, 0.30000000000000004, 1e22, 2.675]",
                   "[5e-324,1e+16,1000000000000000.0,0.0001,1e-05,0.30000000000000004,1e+22,"
                   "2.675]");
  /* a repeated key keeps its first place and its last value */
  check_round_trip("{\"k\": 1, \"j\": 2, \"k\": 3}", "{\"k\":3,\"j\":2}");
  /* beyond int64 an integer reads as a float */
  check_round_trip("[9223372036854775807, 9223372036854775808]",
                   "[9223372036854775807,9.223372036854776e+18]");
  check_round_trip("\"\\u00e9\\ud83d\\ude00 \\\"q\\\" \\n\\t\\/\"",
                   "\"\xc3\xa9\xf0\x9f\x98\x80 \\\"q\\\" \\n\\t/\"");
  check_round_trip("[]", "[]");
  check_round_trip("{}", "{}");
}

void json_parse_types(void) {
  TVMFFIAny arg = any_cstr("[1, 1.0, true]"), parsed;
  CHECK(call_global("ffi.json.Parse", &arg, 1, &parsed) == 0);
  CHECK_EQ_INT(parsed.type_index, kTVMFFIArray);
  TVMFFIAny* e = (TVMFFIAny*)((TVMFFISeqCell*)((char*)parsed.v_obj + sizeof(TVMFFIObject)))->data;
  CHECK_EQ_INT(e[0].type_index, kTVMFFIInt);
  CHECK_EQ_INT(e[1].type_index, kTVMFFIFloat);
  CHECK_EQ_INT(e[2].type_index, kTVMFFIBool);
  release(&parsed);
  arg = any_cstr("{\"a\": 1}");
  CHECK(call_global("ffi.json.Parse", &arg, 1, &parsed) == 0);
  CHECK_EQ_INT(parsed.type_index, kTVMFFIMap);
  release(&parsed);
}

void json_stringify_indent_and_rejects(void) {
  TVMFFIAny arg = any_cstr("{\"a\":[1,{}],\"b\":null}"), parsed, r;
  CHECK(call_global("ffi.json.Parse", &arg, 1, &parsed) == 0);
  TVMFFIAny args[2] = {parsed, any_int(2)};
  CHECK(call_global("ffi.json.Stringify", args, 2, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": null\n}");
  release(&r);
  release(&parsed);
  TVMFFIAny kv[2] = {any_int(1), any_int(2)}, map;
  CHECK(call_global("ffi.Map", kv, 2, &map) == 0);
  CHECK(call_global("ffi.json.Stringify", &map, 1, &r) == -1);
  CHECK_RAISED("TypeError", "JSON object keys must be strings, got `int`");
  release(&map);
  TVMFFIByteArray b = {"xy", 2};
  TVMFFIAny bytes;
  CHECK(TVMFFIBytesFromByteArray(&b, &bytes) == 0);
  CHECK(call_global("ffi.json.Stringify", &bytes, 1, &r) == -1);
  CHECK_RAISED("TypeError", "Type `ffi.Bytes` has no JSON form");
}

void json_malformed_input_is_value_error(void) {
  static const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "JSON: unexpected end of input"},
      {"[1, 2", "JSON: unexpected end of input"},
      {"[1 2]", "JSON: expected `,` or `]` at offset 3"},
      {"{\"a\" 1}", "JSON: expected `:` at offset 5"},
      {"{1: 2}", "JSON: expected a string key at offset 1"},
      {"[1,]", "JSON: unexpected character at offset 3"},
      {"01", "JSON: unexpected text after the value at offset 1"},
      {"1.", "JSON: unexpected end of input"},
      {"-x", "JSON: invalid number at offset 1"},
      {"tru", "JSON: unexpected character at offset 0"},
      {"\"abc", "JSON: unexpected end of input"},
      {"\"a\\x\"", "JSON: invalid escape at offset 3"},
      {"\"\\ud800\"", "JSON: unpaired surrogate escape at offset 7"},
      {"\"\\udc00\"", "JSON: unpaired surrogate escape at offset 7"},
      {"\"a\tb\"", "JSON: control character in string at offset 2"},
      {"{} {}", "JSON: unexpected text after the value at offset 3"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    check_parse_error(cases[i].text, strlen(cases[i].text), cases[i].message);
  }
}

void json_invalid_utf8_is_value_error(void) {
  check_parse_error("\"\xff\"", 3, "JSON: invalid UTF-8 at offset 1");
  check_parse_error("\"\xc0\xaf\"", 4, "JSON: invalid UTF-8 at offset 1");     /* overlong */
  check_parse_error("\"\xed\xa0\x80\"", 5, "JSON: invalid UTF-8 at offset 1"); /* surrogate */
  check_parse_error("\"\xf4\x90\x80\x80\"", 6, "JSON: invalid UTF-8 at offset 1");
  check_parse_error("\"\xe2\x82", 3, "JSON: invalid UTF-8 at offset 1"); /* truncated */
  check_parse_error("[\"a\", \"\x80\"]", 9, "JSON: invalid UTF-8 at offset 7");
  /* a NUL byte inside the text is a control character, not the end */
  check_parse_error("\"a\0b\"", 5, "JSON: control character in string at offset 2");
}

void json_deep_nesting_is_value_error(void) {
  enum { N = 100000 };
  static char deep[N];
  memset(deep, '[', N);
  check_parse_error(deep, N, "JSON: nesting deeper than 256 levels at offset 257");
  memset(deep, 0, N);
  for (int i = 0; i < 256; ++i) deep[i] = '[';
  for (int i = 0; i < 256; ++i) deep[256 + i] = ']';
  TVMFFIAny arg = any_cstr(deep), parsed; /* 256 levels are fine */
  CHECK(call_global("ffi.json.Parse", &arg, 1, &parsed) == 0);
  release(&parsed);
}
