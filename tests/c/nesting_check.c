/* Runs the deepest values the runtime accepts through every recursive
 * operation, and deeper ones into their ValueErrors. Built as a wasm
 * command for both toolchains (run by tests/node), where stacks are small:
 * it prints one line per check and exits non-zero on the first failure. */
#include "wasm_check.h"

enum { MAX_NESTING = 256 };

/* The message of the raised error is a ValueError starting with prefix. */
static int raised_value_error(const char* prefix) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) return 0;
  TVMFFIErrorCell* cell = (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  int ok = strcmp(cell->kind.data, "ValueError") == 0 &&
           strncmp(cell->message.data, prefix, strlen(prefix)) == 0;
  TVMFFIObjectDecRef(err);
  return ok;
}

static char* nested_arrays(int depth) {
  char* text = (char*)malloc((size_t)depth * 2 + 1);
  if (text == NULL) exit(2);
  memset(text, '[', (size_t)depth);
  memset(text + depth, ']', (size_t)depth);
  text[depth * 2] = '\0';
  return text;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* every line out before a possible trap */
  char* deepest = nested_arrays(MAX_NESTING);
  TVMFFIAny arg = {0}, value, r, r2;
  arg.type_index = kTVMFFIRawStr;
  arg.v_c_str = deepest;
  expect(check_call("ffi.json.Parse", &arg, 1, &value) == 0, "parse 256 levels");
  expect(check_call("ffi.json.Stringify", &value, 1, &r) == 0, "stringify 256 levels");
  release(&r);
  TVMFFIAny pair[2] = {value, value};
  expect(check_call("ffi.RecursiveEq", pair, 2, &r) == 0, "RecursiveEq 256 levels");
  expect(check_call("ffi.RecursiveHash", &value, 1, &r) == 0, "RecursiveHash 256 levels");
  expect(check_call("ffi.ReprPrint", &value, 1, &r) == 0, "ReprPrint 256 levels");
  release(&r);
  expect(check_call("ffi.DeepCopy", &value, 1, &r) == 0, "DeepCopy 256 levels");
  release(&r);
  expect(check_call("ffi.ToJSONGraphString", &value, 1, &r) == 0, "ToJSONGraphString 256 levels");
  expect(check_call("ffi.FromJSONGraphString", &r, 1, &r2) == 0, "FromJSONGraphString 256 levels");
  release(&r);
  release(&r2);
  release(&value);
  free(deepest);

  /* reflected objects nested through their Any field, 256 deep */
  char* objects = (char*)malloc(MAX_NESTING * 96 + 64);
  if (objects == NULL) return 2;
  size_t len = (size_t)sprintf(objects, "{\"root_index\":%d,\"nodes\":[{\"type\":\"None\"}",
                               MAX_NESTING);
  for (int i = 1; i <= MAX_NESTING; ++i) {
    len += (size_t)sprintf(objects + len,
                           ",{\"type\":\"testing.TestIntPairDerived\",\"data\":{\"a\":%d,"
                           "\"b\":0,\"c\":%d}}",
                           i, i - 1);
  }
  strcpy(objects + len, "]}");
  arg.v_c_str = objects;
  expect(check_call("ffi.FromJSONGraphString", &arg, 1, &value) == 0, "256 nested objects load");
  pair[0] = pair[1] = value;
  expect(check_call("ffi.RecursiveEq", pair, 2, &r) == 0, "RecursiveEq 256 nested objects");
  expect(check_call("ffi.RecursiveHash", &value, 1, &r) == 0, "RecursiveHash 256 nested objects");
  expect(check_call("ffi.ReprPrint", &value, 1, &r) == 0, "ReprPrint 256 nested objects");
  release(&r);
  expect(check_call("ffi.DeepCopy", &value, 1, &r) == 0, "DeepCopy 256 nested objects");
  release(&r);
  expect(check_call("ffi.ToJSONGraphString", &value, 1, &r) == 0 && strlen(objects) ==
             ((TVMFFIByteArray*)((char*)r.v_obj + sizeof(TVMFFIObject)))->size,
         "ToJSONGraphString 256 nested objects gives the same text");
  release(&r);
  release(&value);
  free(objects);

  char* deeper = nested_arrays(100000);
  arg.v_c_str = deeper;
  expect(check_call("ffi.json.Parse", &arg, 1, &value) == -1 &&
             raised_value_error("Nesting deeper than 256 levels"),
         "parse 100000 levels is a ValueError");
  free(deeper);

  /* a graph whose nodes each wrap the previous one */
  enum { N = 5000 };
  char* graph = (char*)malloc(N * 40 + 64);
  if (graph == NULL) return 2;
  size_t at = (size_t)sprintf(graph, "{\"root_index\":%d,\"nodes\":[{\"type\":\"ffi.List\",\"data\":[]}", N - 1);
  for (int i = 1; i < N; ++i) at += (size_t)sprintf(graph + at, ",{\"type\":\"ffi.List\",\"data\":[%d]}", i - 1);
  strcpy(graph + at, "]}");
  arg.v_c_str = graph;
  expect(check_call("ffi.FromJSONGraphString", &arg, 1, &value) == -1 &&
             raised_value_error("Invalid JSON Object Graph: nesting deeper than 256 levels"),
         "a 5000-level graph is a ValueError");
  free(graph);
  return 0;
}
