/* A type's `__any_hash__` / `__any_equal__` attributes decide how its
 * objects meet as Map and Dict keys (upstream's AnyHash / AnyEqual): an
 * opaque function pointer or a Function, in the small and the dense form;
 * ffi.StructuralKey sets both, so structurally equal keys share a slot. */
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"

typedef struct {
  TVMFFIObject header;
  int64_t value;
} test_num;

static int32_t ptr_num_index = -1; /* attributes as function pointers */
static int32_t func_num_index = -1; /* attributes as Functions */
static int32_t bad_num_index = -1; /* a hash Function that fails */

static void free_num(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static TVMFFIAny new_num(int32_t type, int64_t value) {
  test_num* obj = (test_num*)calloc(1, sizeof(test_num));
  CHECK(obj != NULL);
  obj->header.combined_ref_count = 1 | (1ull << 32); /* one strong, one weak reference */
  obj->header.type_index = type;
  obj->header.deleter = free_num;
  obj->value = value;
  return any_obj(obj);
}

static int64_t num_of(const TVMFFIAny* v) { return ((const test_num*)v->v_obj)->value; }

/* The C++ signatures int64_t(const Any&) and bool(const Any&, const Any&). */
static int64_t ptr_hash(const TVMFFIAny* v) { return num_of(v) % 7; }
static bool ptr_equal(const TVMFFIAny* a, const TVMFFIAny* b) { return num_of(a) == num_of(b); }

static int func_hash(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  CHECK_EQ_INT(n, 1);
  *result = any_int(num_of(&args[0]) % 5);
  return 0;
}

static int func_equal(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  CHECK_EQ_INT(n, 2);
  *result = any_bool(num_of(&args[0]) == num_of(&args[1]));
  return 0;
}

static int func_fail(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "no hash today");
  return -1;
}

static void set_attr(int32_t type, const char* name, TVMFFIAny value) {
  TVMFFIByteArray key = {name, strlen(name)};
  CHECK(TVMFFITypeRegisterAttr(type, &key, &value) == 0);
}

static TVMFFIAny func_any(TVMFFISafeCallType fn) {
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, fn, NULL, &f) == 0);
  return any_obj(f);
}

static int32_t define_num(const char* key) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 1, kTVMFFIObject);
  CHECK(index >= 0);
  return index;
}

static void define_nums(void) {
  if (ptr_num_index >= 0) return;
  ptr_num_index = define_num("test.map.PtrNum");
  TVMFFIAny p;
  p.type_index = kTVMFFIOpaquePtr;
  p.zero_padding = 0;
  p.v_ptr = (void*)(uintptr_t)ptr_hash;
  set_attr(ptr_num_index, "__any_hash__", p);
  p.v_ptr = (void*)(uintptr_t)ptr_equal;
  set_attr(ptr_num_index, "__any_equal__", p);

  func_num_index = define_num("test.map.FuncNum");
  TVMFFIAny h = func_any(func_hash), e = func_any(func_equal);
  set_attr(func_num_index, "__any_hash__", h);
  set_attr(func_num_index, "__any_equal__", e);
  release(&h), release(&e);

  bad_num_index = define_num("test.map.BadNum");
  TVMFFIAny f = func_any(func_fail);
  set_attr(bad_num_index, "__any_hash__", f);
  release(&f);
}

static int64_t map_size(TVMFFIAny map) {
  TVMFFIAny r;
  CHECK(call_global(map.type_index == kTVMFFIDict ? "ffi.DictSize" : "ffi.MapSize", &map, 1, &r) == 0);
  return r.v_int64;
}

static int64_t map_get(TVMFFIAny map, TVMFFIAny key) {
  TVMFFIAny args[2] = {map, key}, r;
  CHECK(call_global(map.type_index == kTVMFFIDict ? "ffi.DictGetItem" : "ffi.MapGetItem", args, 2, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIInt);
  return r.v_int64;
}

/* n distinct values, each inserted twice as two objects: the second
 * replaces the first, so a Dict keeps n pairs and every fresh object with
 * one of the values finds the last one stored. */
static void check_type(int32_t type, int64_t n) {
  TVMFFIAny dict;
  CHECK(call_global("ffi.Dict", NULL, 0, &dict) == 0);
  for (int round = 0; round < 2; ++round) {
    for (int64_t v = 0; v < n; ++v) {
      TVMFFIAny k = new_num(type, v), args[3] = {dict, k, any_int(v * 10 + round)}, r;
      CHECK(call_global("ffi.DictSetItem", args, 3, &r) == 0);
      release(&k);
    }
  }
  CHECK_EQ_INT(map_size(dict), n);
  for (int64_t v = 0; v < n; ++v) {
    TVMFFIAny k = new_num(type, v);
    CHECK_EQ_INT(map_get(dict, k), v * 10 + 1);
    TVMFFIAny args[2] = {dict, k}, r;
    CHECK(call_global("ffi.DictErase", args, 2, &r) == 0);
    release(&k);
  }
  CHECK_EQ_INT(map_size(dict), 0);
  release(&dict);
}

void map_keys_use_type_any_hash_pointer(void) {
  define_nums();
  check_type(ptr_num_index, 3);  /* small form */
  check_type(ptr_num_index, 40); /* dense form, chains shared (hash mod 7) */
}

void map_keys_use_type_any_hash_function(void) {
  define_nums();
  check_type(func_num_index, 3);
  check_type(func_num_index, 40);
  /* ffi.Map's initialiser too: the later of two equal keys wins */
  TVMFFIAny a = new_num(func_num_index, 4), b = new_num(func_num_index, 4), c = new_num(func_num_index, 9);
  TVMFFIAny args[6] = {a, any_int(1), b, any_int(2), c, any_int(3)}, map;
  CHECK(call_global("ffi.Map", args, 6, &map) == 0);
  CHECK_EQ_INT(map_size(map), 2);
  CHECK_EQ_INT(map_get(map, a), 2);
  release(&map), release(&a), release(&b), release(&c);
}

void map_key_hash_function_error_is_raised(void) {
  define_nums();
  TVMFFIAny dict;
  CHECK(call_global("ffi.Dict", NULL, 0, &dict) == 0);
  /* past the small form, where keys are hashed */
  for (int64_t v = 0; v < 8; ++v) {
    TVMFFIAny args[3] = {dict, any_int(v), any_int(v)}, r;
    CHECK(call_global("ffi.DictSetItem", args, 3, &r) == 0);
  }
  TVMFFIAny k = new_num(bad_num_index, 1), args[3] = {dict, k, any_int(0)}, r;
  CHECK(call_global("ffi.DictSetItem", args, 3, &r) != 0);
  CHECK_RAISED("RuntimeError", "no hash today");
  CHECK(call_global("ffi.DictGetItem", args, 2, &r) != 0);
  CHECK_RAISED("RuntimeError", "no hash today");
  CHECK(call_global("ffi.DictCount", args, 2, &r) != 0);
  CHECK_RAISED("RuntimeError", "no hash today");
  /* the map keeps working for other keys */
  CHECK_EQ_INT(map_get(dict, any_int(3)), 3);
  release(&k), release(&dict);
}

void map_structural_keys_meet_by_structure(void) {
  for (int dense = 0; dense < 2; ++dense) {
    TVMFFIAny dict;
    CHECK(call_global("ffi.Dict", NULL, 0, &dict) == 0);
    int64_t distinct = dense ? 12 : 3;
    for (int round = 0; round < 2; ++round) {
      for (int64_t v = 0; v < distinct; ++v) {
        TVMFFIAny e[2] = {any_int(v), any_cstr("x")}, arr, key;
        CHECK(call_global("ffi.Array", e, 2, &arr) == 0);
        CHECK(call_global("ffi.StructuralKey", &arr, 1, &key) == 0);
        TVMFFIAny args[3] = {dict, key, any_int(v + 100 * round)}, r;
        CHECK(call_global("ffi.DictSetItem", args, 3, &r) == 0);
        release(&key), release(&arr);
      }
    }
    CHECK_EQ_INT(map_size(dict), distinct);
    TVMFFIAny e[2] = {any_int(2), any_cstr("x")}, arr, key;
    CHECK(call_global("ffi.Array", e, 2, &arr) == 0);
    CHECK(call_global("ffi.StructuralKey", &arr, 1, &key) == 0);
    CHECK_EQ_INT(map_get(dict, key), 102);
    release(&key), release(&arr), release(&dict);
  }
}
