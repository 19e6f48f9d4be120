/* Bounded work in wasm's small stacks and memory: a chain of 10^6 nested
 * Lists is released without recursing per level, and a DAG with 2^60 paths
 * goes through every structural operation, and memory grows geometrically.
 * Built as a wasm command for both
 * toolchains (run by tests/node/wasm_bounded.test.mjs): one line per check,
 * a non-zero exit on the first failure. */
#include "wasm_check.h"

/* A call whose raised error, if any, is dropped: these checks look only at the code. */
static int call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  int rc = check_call(name, args, n, result);
  if (rc != 0 && rc != -2) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) TVMFFIObjectDecRef(err);
  }
  return rc;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  /* First, on fresh memory: 100 MB in 200,000 small blocks grow memory
   * geometrically, a few times, where growing by the exact deficit took
   * thousands of steps. */
  TVMFFIAny before, after;
  expect(call("testing.heap_growth", NULL, 0, &before) == 0, "testing.heap_growth counts");
  enum { BLOCKS = 200000 };
  char** blocks = (char**)malloc(BLOCKS * sizeof(char*));
  int allocated = blocks != NULL;
  for (int i = 0; allocated && i < BLOCKS; ++i) {
    blocks[i] = (char*)malloc(500);
    if (blocks[i] == NULL) allocated = 0;
  }
  expect(allocated && call("testing.heap_growth", NULL, 0, &after) == 0 &&
             after.v_int64 - before.v_int64 <= 16,
         "100 MB of small blocks grow memory at most 16 times");
  for (int i = 0; i < BLOCKS; ++i) free(blocks[i]);
  free(blocks);
  /* a chain built top-down, which nothing limits in depth */
  TVMFFIAny head, cur, next, r, args[2];
  expect(call("ffi.List", NULL, 0, &head) == 0, "make a List");
  cur = head;
  int built = 1;
  for (int i = 0; i < 1000000; ++i) {
    if (call("ffi.List", NULL, 0, &next) != 0) break;
    args[0] = cur;
    args[1] = next;
    int rc = call("ffi.ListAppend", args, 2, &r);
    release(&next);
    if (rc != 0) break;
    cur = next;
    ++built;
  }
  expect(built == 1000001, "a chain of 10^6 nested Lists");
  expect(call("ffi.RecursiveHash", &head, 1, &r) == -1, "hashing it stops at the nesting limit");
  expect(call("ffi.ReprPrint", &head, 1, &r) == 0, "printing it stops at the nesting limit");
  release(&r);
  release(&head);
  expect(1, "releasing it returns");

  TVMFFIAny v = {0};
  v.type_index = kTVMFFIInt;
  v.v_int64 = 1;
  for (int i = 0; i < 60; ++i) {
    args[0] = args[1] = v;
    if (call("ffi.Array", args, 2, &next) != 0) break;
    release(&v);
    v = next;
  }
  expect(v.type_index == kTVMFFIArray, "a DAG of 60 levels (2^60 paths)");
  expect(call("ffi.RecursiveHash", &v, 1, &r) == 0, "RecursiveHash of the DAG");
  args[0] = args[1] = v;
  expect(call("ffi.DeepCopy", &v, 1, &next) == 0, "DeepCopy of the DAG");
  args[1] = next;
  expect(call("ffi.RecursiveEq", args, 2, &r) == 0 && r.v_int64 == 1,
         "RecursiveEq of the DAG and its copy");
  release(&next);
  expect(call("ffi.ReprPrint", &v, 1, &r) == 0, "ReprPrint of the DAG");
  release(&r);
  expect(call("ffi.ToJSONGraphString", &v, 1, &r) == 0, "ToJSONGraphString of the DAG");
  expect(call("ffi.FromJSONGraphString", &r, 1, &next) == 0, "FromJSONGraphString of it");
  release(&r);
  release(&next);
  expect(call("ffi.json.Stringify", &v, 1, &r) == -1, "json.Stringify of the DAG is refused");
  release(&v);

  return 0;
}
