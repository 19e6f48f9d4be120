/* What upstream's core registers, in wasm: the structural functions on the
 * deepest values the runtime accepts (wasm stacks are small), on a DAG with
 * 2^60 paths (bounded work), and the visitor's C hooks called through the
 * table. Built as a wasm command for both toolchains (run by
 * tests/node/wasm_upstream_core.test.mjs): one line per check, a non-zero
 * exit on the first failure. */
#include <stdint.h>

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

/* A type's __any_hash__ / __any_equal__ as function pointers, called
 * through the table with the C++ signatures (const Any& is a pointer). */
typedef struct {
  TVMFFIObject header;
  int64_t value;
} num_obj;
static void free_num(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}
static int64_t num_hash(const TVMFFIAny* v) { return ((num_obj*)v->v_obj)->value % 3; }
static _Bool num_equal(const TVMFFIAny* a, const TVMFFIAny* b) {
  return ((num_obj*)a->v_obj)->value == ((num_obj*)b->v_obj)->value;
}
static TVMFFIAny new_num(int32_t type, int64_t value) {
  num_obj* o = (num_obj*)calloc(1, sizeof(num_obj));
  if (o == NULL) exit(2);
  o->header.combined_ref_count = 1 | (1ull << 32);
  o->header.type_index = type;
  o->header.deleter = free_num;
  o->value = value;
  TVMFFIAny a = {0};
  a.type_index = type;
  a.v_obj = (TVMFFIObject*)o;
  return a;
}

/* Key v: an object of type (type >= 0), else a StructuralKey of [v]. */
static int make_key(int32_t type, int64_t v, TVMFFIAny* key) {
  if (type >= 0) {
    *key = new_num(type, v);
    return 1;
  }
  TVMFFIAny arr = {0}, leaf = num(v);
  int ok = call("ffi.Array", &leaf, 1, &arr) == 0 && call("ffi.StructuralKey", &arr, 1, key) == 0;
  release(&arr);
  return ok;
}

/* Sets 2 * n keys (each of n values twice, as two objects, or as two
 * StructuralKeys of equal Arrays) in a Dict: n pairs, the later value wins. */
static int dict_keys_meet(int32_t type, int64_t n) {
  TVMFFIAny dict, r;
  if (call("ffi.Dict", NULL, 0, &dict) != 0) return 0;
  int ok = 1;
  for (int round = 0; round < 2 && ok; ++round) {
    for (int64_t v = 0; v < n && ok; ++v) {
      TVMFFIAny key;
      if (!(ok = make_key(type, v, &key))) break;
      TVMFFIAny args[3] = {dict, key, num(v + 100 * round)};
      ok = call("ffi.DictSetItem", args, 3, &r) == 0;
      release(&key);
    }
  }
  ok = ok && call("ffi.DictSize", &dict, 1, &r) == 0 && r.v_int64 == n;
  for (int64_t v = 0; v < n && ok; ++v) {
    TVMFFIAny key;
    if (!(ok = make_key(type, v, &key))) break;
    TVMFFIAny args[2] = {dict, key};
    ok = call("ffi.DictGetItem", args, 2, &r) == 0 && r.v_int64 == v + 100;
    release(&key);
  }
  release(&dict);
  return ok;
}

static void map_key_checks(void) {
  expect(dict_keys_meet(-1, 3) && dict_keys_meet(-1, 20),
         "Dict keys: StructuralKeys of equal values meet");
  const char* name = "check.NumWithAnyHash";
  TVMFFIByteArray key = {name, strlen(name)};
  int32_t type = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  TVMFFIAny p = {0};
  p.type_index = kTVMFFIOpaquePtr;
  TVMFFIByteArray h = {"__any_hash__", 12}, e = {"__any_equal__", 13};
  p.v_ptr = (void*)(uintptr_t)num_hash;
  int ok = type >= 0 && TVMFFITypeRegisterAttr(type, &h, &p) == 0;
  p.v_ptr = (void*)(uintptr_t)num_equal;
  ok = ok && TVMFFITypeRegisterAttr(type, &e, &p) == 0;
  expect(ok && dict_keys_meet(type, 3) && dict_keys_meet(type, 20),
         "Dict keys: a type's __any_hash__ / __any_equal__ pointers decide");
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
  map_key_checks();
  forward_graph_check();
  return 0;
}
