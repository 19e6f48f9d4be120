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
                   "[5.0,1.0000000000000001e+300,NaN,Infinity,-Infinity,-0.0,100.0]");
  /* as upstream's writer: 17 significant digits (which read back exactly),
   * whole numbers below 2^53 with `.0` */
  check_round_trip("[5e-324, 1e16, 1e15, 0.0001, 0.00001, 0.30000000000000004, 1e22, 2.675]",
                   "[4.9406564584124654e-324,10000000000000000,1000000000000000.0,0.0001,"
                   "1.0000000000000001e-05,0.30000000000000004,1e+22,2.6749999999999998]");
  /* a repeated key keeps its first place and its last value */
  check_round_trip("{\"k\": 1, \"j\": 2, \"k\": 3}", "{\"k\":3,\"j\":2}");
  /* beyond int64 an integer reads as a float */
  check_round_trip("[9223372036854775807, 9223372036854775808]",
                   "[9223372036854775807,9.2233720368547758e+18]");
  check_round_trip("\"\\u00e9\\ud83d\\ude00 \\\"q\\\" \\n\\t\\/\"",
                   "\"\xc3\xa9\xf0\x9f\x98\x80 \\\"q\\\" \\n\\t\\/\"");
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
  /* an empty container too opens a line, as upstream's writer does */
  CHECK_EQ_STR(any_str(&r), "{\n  \"a\": [\n    1,\n    {\n    }\n  ],\n  \"b\": null\n}");
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

/* The byte length of a String or small string. */
static size_t string_size(const TVMFFIAny* v) {
  if (v->type_index == kTVMFFISmallStr) return v->small_str_len;
  return ((TVMFFIByteArray*)((char*)v->v_obj + sizeof(TVMFFIObject)))->size;
}

/* Stringify escapes strings as upstream's: `/` and DEL too, raw UTF-8 not. */
void json_stringify_escapes_as_upstream(void) {
  static const struct {
    const char* text;
    size_t n;
    const char* json;
  } cases[] = {
      {"forward/slash", 13, "\"forward\\/slash\""},
      {"\"q\" \\", 5, "\"\\\"q\\\" \\\\\""},
      {"\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\""},
      {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\""},
      {"a\0b", 3, "\"a\\u0000b\""},
      {"\xc3\xa9 </script>", 12, "\"\xc3\xa9 <\\/script>\""},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    TVMFFIByteArray bytes = {cases[i].text, cases[i].n};
    TVMFFIAny s = any_none(), printed, back;
    CHECK(TVMFFIStringFromByteArray(&bytes, &s) == 0);
    CHECK(call_global("ffi.json.Stringify", &s, 1, &printed) == 0);
    CHECK_EQ_STR(any_str(&printed), cases[i].json);
    /* and it reads back as the same bytes */
    CHECK(call_global("ffi.json.Parse", &printed, 1, &back) == 0);
    CHECK_EQ_INT((long long)string_size(&back), (long long)cases[i].n);
    CHECK(memcmp(any_str(&back), cases[i].text, cases[i].n) == 0);
    release(&back);
    release(&printed);
    release(&s);
  }
}

/* Syntax errors name what was expected and where, as upstream's (and
 * Python's json module): line and column from 1, char from 0, in bytes. */
void json_malformed_input_is_value_error(void) {
  static const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "Expecting value: line 1 column 1 (char 0)"},
      {"   \t\n    ", "Expecting value: line 2 column 5 (char 9)"},
      {"nul", "Expecting value: line 1 column 1 (char 0)"},
      {"\n\nfx", "Expecting value: line 3 column 1 (char 2)"},
      {"t1", "Expecting value: line 1 column 1 (char 0)"},
      {"]", "Expecting value: line 1 column 1 (char 0)"},
      {"[", "Expecting value: line 1 column 2 (char 1)"},
      {"[1,]", "Expecting value: line 1 column 4 (char 3)"},
      {"[1, ", "Expecting value: line 1 column 5 (char 4)"},
      {"[1, 2", "Expecting ',' delimiter: line 1 column 6 (char 5)"},
      {"[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"},
      {"[1a", "Expecting ',' delimiter: line 1 column 3 (char 2)"},
      {"{\"a\":\n\n[1]", "Expecting ',' delimiter: line 3 column 4 (char 10)"},
      {"{\"a\": 1]", "Expecting ',' delimiter: line 1 column 8 (char 7)"},
      {"{\"a\":\n\n[abc]}", "Expecting value: line 3 column 2 (char 8)"},
      {"{\"a\":", "Expecting value: line 1 column 6 (char 5)"},
      {"{", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
      {"{1: 2}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
      {"{\"a\": 1, }", "Expecting property name enclosed in double quotes: line 1 column 10 (char 9)"},
      {"{\"a\" 1}", "Expecting ':' delimiter: line 1 column 6 (char 5)"},
      {"{\"incomplete\"", "Expecting ':' delimiter: line 1 column 14 (char 13)"},
      /* a number is the whole run of number characters, and must be one */
      {"123.456.789", "Expecting value: line 1 column 1 (char 0)"},
      {"123e", "Expecting value: line 1 column 1 (char 0)"},
      {"[1, 123E-]", "Expecting value: line 1 column 5 (char 4)"},
      {"1.", "Expecting value: line 1 column 1 (char 0)"},
      {"01", "Expecting value: line 1 column 1 (char 0)"},
      {"+1", "Expecting value: line 1 column 1 (char 0)"},
      {"-x", "Expecting value: line 1 column 1 (char 0)"},
      {"1-2", "Expecting value: line 1 column 1 (char 0)"},
      {"-Inf", "Expecting value: line 1 column 1 (char 0)"},
      {"-NaN", "Expecting value: line 1 column 1 (char 0)"},
      {"\"hello", "Unterminated string starting at: line 1 column 1 (char 0)"},
      {"[\"a\", \"bc", "Unterminated string starting at: line 1 column 7 (char 6)"},
      {"\"hello\x01\"", "Invalid control character at: line 1 column 7 (char 6)"},
      {"\"a\tb\"", "Invalid control character at: line 1 column 3 (char 2)"},
      {"\"hello\\uxx\"", "Invalid \\uXXXX escape: line 1 column 8 (char 7)"},
      {"\"\\u12", "Invalid \\uXXXX escape: line 1 column 3 (char 2)"},
      {"\"hello\\uDC00\\uDE04\"",
       "Invalid surrogate pair of \\uXXXX escapes: line 1 column 8 (char 7)"},
      {"\"hello\\uD800\"", "Invalid surrogate pair of \\uXXXX escapes: line 1 column 8 (char 7)"},
      {"\"\\ud800\\u0041\"", "Invalid surrogate pair of \\uXXXX escapes: line 1 column 10 (char 9)"},
      {"\"hello\\uD800\\uxx\"", "Invalid \\uXXXX escape: line 1 column 15 (char 14)"},
      {"\"hello\\a\"", "Invalid \\escape: line 1 column 8 (char 7)"},
      {"\"ab\\", "Invalid \\escape: line 1 column 5 (char 4)"},
      {"truee", "Extra data: line 1 column 5 (char 4)"},
      {"123 456", "Extra data: line 1 column 5 (char 4)"},
      {"[1]  a", "Extra data: line 1 column 6 (char 5)"},
      {"{} []", "Extra data: line 1 column 4 (char 3)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    check_parse_error(cases[i].text, strlen(cases[i].text), cases[i].message);
  }
}

/* The runtime keeps Strings valid UTF-8, so the reader checks raw bytes
 * (upstream passes them through). */
void json_invalid_utf8_is_value_error(void) {
  check_parse_error("\"\xff\"", 3, "Invalid UTF-8 at: line 1 column 2 (char 1)");
  check_parse_error("\"\xc0\xaf\"", 4, "Invalid UTF-8 at: line 1 column 2 (char 1)"); /* overlong */
  check_parse_error("\"\xed\xa0\x80\"", 5, "Invalid UTF-8 at: line 1 column 2 (char 1)");
  check_parse_error("\"\xf4\x90\x80\x80\"", 6, "Invalid UTF-8 at: line 1 column 2 (char 1)");
  check_parse_error("\"\xe2\x82", 3, "Invalid UTF-8 at: line 1 column 2 (char 1)"); /* truncated */
  check_parse_error("[\"a\", \"\x80\"]", 9, "Invalid UTF-8 at: line 1 column 8 (char 7)");
  /* a NUL byte inside the text is a control character, not the end */
  check_parse_error("\"a\0b\"", 5, "Invalid control character at: line 1 column 3 (char 2)");
  /* raw UTF-8 is taken as it is; char counts bytes, as upstream's does */
  check_round_trip("\"\xe4\xb8\xad\xe6\x96\x87\"", "\"\xe4\xb8\xad\xe6\x96\x87\"");
  check_parse_error("\"\xe4\xb8\xad\" x", 7, "Extra data: line 1 column 7 (char 6)");
}

void json_deep_nesting_is_value_error(void) {
  enum { N = 100000 };
  static char deep[N];
  memset(deep, '[', N);
  check_parse_error(deep, N, "Nesting deeper than 256 levels at: line 1 column 257 (char 256)");
  memset(deep, 0, N);
  for (int i = 0; i < 256; ++i) deep[i] = '[';
  for (int i = 0; i < 256; ++i) deep[256 + i] = ']';
  TVMFFIAny arg = any_cstr(deep), parsed; /* 256 levels are fine */
  CHECK(call_global("ffi.json.Parse", &arg, 1, &parsed) == 0);
  release(&parsed);
  /* 257, the innermost empty, are not: containers are the levels */
  memset(deep, 0, N);
  for (int i = 0; i < 257; ++i) deep[i] = '[';
  for (int i = 0; i < 257; ++i) deep[257 + i] = ']';
  check_parse_error(deep, 514, "Nesting deeper than 256 levels at: line 1 column 257 (char 256)");
}
