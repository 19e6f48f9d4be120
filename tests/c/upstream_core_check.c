/* What upstream's core registers, in wasm: the structural functions on the
 * deepest values the runtime accepts (wasm stacks are small), on a DAG with
 * 2^60 paths (bounded work), and the visitor's C hooks called through the
 * table. Built as a wasm command for both toolchains (run by
 * tests/node/wasm_upstream_core.test.mjs): one line per check, a non-zero
 * exit on the first failure. */
#include "wasm_check.h"

static int call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  int rc = check_call(name, args, n, result);
  if (rc != 0 && rc != -2) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) TVMFFIObjectDecRef(err);
  }
  return rc;
}

static TVMFFIAny num(int64_t v) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}

static TVMFFIAny flag(int v) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIBool;
  a.v_int64 = v;
  return a;
}

/* depth Arrays nested one in the next around leaf. */
static TVMFFIAny nested(int depth, int64_t leaf) {
  TVMFFIAny v = num(leaf), next;
  for (int i = 0; i < depth; ++i) {
    if (call("ffi.Array", &v, 1, &next) != 0) exit(2);
    release(&v);
    v = next;
  }
  return v;
}

/* levels Arrays, each holding the one below twice. */
static TVMFFIAny dag(int levels, int64_t leaf) {
  TVMFFIAny v = num(leaf), next, two[2];
  for (int i = 0; i < levels; ++i) {
    two[0] = two[1] = v;
    if (call("ffi.Array", two, 2, &next) != 0) exit(2);
    release(&v);
    v = next;
  }
  return v;
}

static int path_depth(TVMFFIAny pair, int i) {
  TVMFFIAny get[2] = {pair, num(i)}, path;
  if (call("ffi.ArrayGetItem", get, 2, &path) != 0) return -1;
  int depth = *(int32_t*)((char*)path.v_obj + sizeof(TVMFFIObject) + 2 * sizeof(void*));
  release(&path);
  return depth;
}

static int leaves;
static int count_leaf(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  ++leaves;
  result->type_index = kTVMFFINone;
  return 0;
}

/* leaf_visits: ints are visited where they occur; each Array once. */
static void checks_on(const char* what, TVMFFIAny a, TVMFFIAny b, TVMFFIAny c, int diff_depth,
                      int leaf_visits) {
  char line[160];
  TVMFFIAny r, args[4] = {a, b, flag(0), flag(0)};
  snprintf(line, sizeof(line), "StructuralEqual %s", what);
  expect(call("ffi.StructuralEqual", args, 4, &r) == 0 && r.v_int64 == 1, line);
  TVMFFIAny h1, h2, hargs[3] = {a, flag(0), flag(0)};
  int ok = call("ffi.StructuralHash", hargs, 3, &h1) == 0;
  hargs[0] = b;
  ok = ok && call("ffi.StructuralHash", hargs, 3, &h2) == 0 && h1.v_int64 == h2.v_int64;
  snprintf(line, sizeof(line), "StructuralHash %s", what);
  expect(ok, line);
  args[1] = c;
  snprintf(line, sizeof(line), "GetFirstStructuralMismatch %s", what);
  expect(call("ffi.GetFirstStructuralMismatch", args, 4, &r) == 0 &&
             r.type_index == kTVMFFIArray && path_depth(r, 0) == diff_depth &&
             path_depth(r, 1) == diff_depth,
         line);
  release(&r);
  snprintf(line, sizeof(line), "RecursiveLt %s", what);
  expect(call("ffi.RecursiveLt", args, 2, &r) == 0 && r.v_int64 == 1, line);
  TVMFFIAny key;
  snprintf(line, sizeof(line), "StructuralKey %s", what);
  expect(call("ffi.StructuralKey", &a, 1, &key) == 0, line);
  release(&key);
  snprintf(line, sizeof(line), "ContainerFindFirstNonCPUDevice %s", what);
  expect(call("ffi.ContainerFindFirstNonCPUDevice", &a, 1, &r) == 0 &&
             r.type_index == kTVMFFIDevice && r.v_device.device_type == kDLCPU,
         line);
  /* a walk over every node, through the containers' C visit hooks */
  TVMFFIObjectHandle f = NULL;
  TVMFFIAny pair[2], entry = {0}, cbs = {0}, none = {0};
  ok = TVMFFIFunctionCreate(NULL, count_leaf, NULL, &f) == 0;
  pair[0] = num(kTVMFFIInt);
  pair[1].type_index = kTVMFFIFunction;
  pair[1].zero_padding = 0;
  pair[1].v_uint64 = 0;
  pair[1].v_obj = (TVMFFIObject*)f;
  ok = ok && call("ffi.Array", pair, 2, &entry) == 0 && call("ffi.Array", &entry, 1, &cbs) == 0 &&
       call("ffi.Array", NULL, 0, &none) == 0;
  TVMFFIAny walk[4] = {a, cbs, none, num(0)};
  leaves = 0;
  ok = ok && call("ffi.StructuralWalk", walk, 4, &r) == 0 && r.type_index == kTVMFFINone &&
       leaves == leaf_visits;
  snprintf(line, sizeof(line), "StructuralWalk %s", what);
  expect(ok, line);
  release(&entry), release(&cbs), release(&none);
  TVMFFIObjectDecRef(f);
}

/* FromJSONGraph with every reference pointing forwards (upstream reads
 * nodes lazily, in any order) at the deepest nesting: node i is an Array
 * around node i + 1, the last one the leaf. Read without recursion. */
static void forward_graph_check(void) {
  enum { N = 256 };
  static char json[N * 40 + 64];
  size_t at = (size_t)snprintf(json, sizeof(json), "{\"root_index\":0,\"nodes\":[");
  for (int i = 0; i + 1 < N; ++i) {
    at += (size_t)snprintf(json + at, sizeof(json) - at, "{\"type\":\"ffi.Array\",\"data\":[%d]},",
                           i + 1);
  }
  snprintf(json + at, sizeof(json) - at, "{\"type\":\"int\",\"data\":1}]}");
  TVMFFIByteArray text = {json, strlen(json)};
  TVMFFIAny arg, graph, want = nested(N - 1, 1), r;
  int ok = TVMFFIStringFromByteArray(&text, &arg) == 0 &&
           call("ffi.FromJSONGraphString", &arg, 1, &graph) == 0;
  if (ok) {
    TVMFFIAny args[4] = {graph, want, flag(0), flag(0)};
    ok = call("ffi.StructuralEqual", args, 4, &r) == 0 && r.v_int64 == 1;
    release(&graph);
  }
  expect(ok, "FromJSONGraph of 255 levels, every reference forwards");
  release(&arg), release(&want);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* every line out before a possible trap */
  /* 255 Arrays around the leaf: the deepest nesting containers accept */
  TVMFFIAny a = nested(255, 1), b = nested(255, 1), c = nested(255, 2);
  checks_on("at 255 levels", a, b, c, 255, 1);
  release(&a), release(&b), release(&c);
  a = dag(60, 1), b = dag(60, 1), c = dag(60, 2);
  checks_on("of a DAG with 2^60 paths", a, b, c, 60, 2);
  release(&a), release(&b), release(&c);
  TVMFFIAny none, kw, inv;
  expect(call("ffi.GetKwargsObject", &none, 0, &kw) == 0 &&
             call("ffi.GetInvalidObject", &none, 0, &inv) == 0 && kw.v_obj != inv.v_obj,
         "GetKwargsObject and GetInvalidObject are distinct");
  release(&kw), release(&inv);
  forward_graph_check();
  return 0;
}
