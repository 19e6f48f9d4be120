/* Reflected object types for tests: testing.TestIntPair (fields a, b and a
 * sum method) and testing.TestIntPairDerived (adds an Any field c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "testing.h"

typedef struct {
  TVMFFIObject header;
  int64_t a;
  int64_t b;
} wf_test_int_pair;

typedef struct {
  wf_test_int_pair base;
  TVMFFIAny c;
} wf_test_int_pair_derived;

static int32_t wf_test_pair_index = -1, wf_test_derived_index = -1;

/* Objects live in the runtime's object allocator (TVMFFIGetCustomAllocator,
 * which tests replace to count and fail allocations); the space goes back
 * through the header the allocator put before the body. */
static void wf_test_free_space(void* self) {
  ((TVMFFIObjectAllocHeader*)((char*)self - sizeof(TVMFFIObjectAllocHeader)))->delete_space(self);
}

static void wf_test_pair_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_test_free_space(self);
}

static void wf_test_derived_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_testing_release(&((wf_test_int_pair_derived*)self)->c);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_test_free_space(self);
}

/* A zeroed object with one strong and one weak reference (the weak one
 * stands for the strong ones together, as the ABI counts). */
static int wf_test_alloc(size_t size, int32_t type_index, void (*deleter)(void*, int),
                         TVMFFIObjectHandle* out) {
  TVMFFICustomAllocator* a = TVMFFIGetCustomAllocator();
  TVMFFIObject* obj = (TVMFFIObject*)a->allocate(size, 8, type_index, a->context);
  if (obj == NULL) {
    char message[64];
    snprintf(message, sizeof(message), "Failed to allocate %zu bytes", size);
    TVMFFIErrorSetRaisedFromCStr("MemoryError", message);
    return -1;
  }
  memset(obj, 0, size);
  obj->combined_ref_count = 1ull | (1ull << 32);
  obj->type_index = type_index;
  obj->deleter = deleter;
  *out = obj;
  return 0;
}

static int wf_test_pair_create(TVMFFIObjectHandle* out) {
  return wf_test_alloc(sizeof(wf_test_int_pair), wf_test_pair_index, wf_test_pair_deleter, out);
}

static int wf_test_derived_create(TVMFFIObjectHandle* out) {
  return wf_test_alloc(sizeof(wf_test_int_pair_derived), wf_test_derived_index,
                       wf_test_derived_deleter, out);
}

static int wf_test_get_int64(void* field, TVMFFIAny* result) {
  wf_testing_set_int(result, *(int64_t*)field);
  return 0;
}

static int wf_test_set_int64(void* field, const TVMFFIAny* value) {
  return WebFFIArgToInt(NULL, value, 0, (int64_t*)field);
}

static int wf_test_get_any(void* field, TVMFFIAny* result) {
  return TVMFFIAnyViewToOwnedAny((const TVMFFIAny*)field, result);
}

static int wf_test_set_any(void* field, const TVMFFIAny* value) {
  TVMFFIAny owned;
  if (TVMFFIAnyViewToOwnedAny(value, &owned) != 0) return -1;
  TVMFFIAny old = *(TVMFFIAny*)field;
  *(TVMFFIAny*)field = owned;
  wf_testing_release(&old);
  return 0;
}

static const char* const wf_test_init_types[] = {"int", "int", "Any"};
static const WebFFISignature wf_test_pair_init_sig = {"testing.TestIntPair.__ffi_init__", 2,
                                                      wf_test_init_types,
                                                      "testing.TestIntPair"};
static const WebFFISignature wf_test_derived_init_sig = {
    "testing.TestIntPairDerived.__ffi_init__", 3, wf_test_init_types,
    "testing.TestIntPairDerived"};

/* __ffi_init__(a, b) and __ffi_init__(a, b, c): static constructors. */
static int wf_test_init(const WebFFISignature* sig, int (*create)(TVMFFIObjectHandle*),
                        const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  int64_t a, b;
  if (WebFFICheckNumArgs(sig, n) != 0 || WebFFIArgToInt(sig, args, 0, &a) != 0 ||
      WebFFIArgToInt(sig, args, 1, &b) != 0) {
    return -1;
  }
  TVMFFIObjectHandle obj;
  if (create(&obj) != 0) return -1;
  ((wf_test_int_pair*)obj)->a = a;
  ((wf_test_int_pair*)obj)->b = b;
  if (n == 3 && wf_test_set_any(&((wf_test_int_pair_derived*)obj)->c, &args[2]) != 0) {
    TVMFFIObjectDecRef(obj);
    return -1;
  }
  result->type_index = ((TVMFFIObject*)obj)->type_index;
  result->zero_padding = 0;
  result->v_int64 = 0; /* pointers fill only the low bytes on wasm32 */
  result->v_obj = (TVMFFIObject*)obj;
  return 0;
}

static int wf_test_pair_init(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_test_init(&wf_test_pair_init_sig, wf_test_pair_create, args, n, result);
}

static int wf_test_derived_init(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_test_init(&wf_test_derived_init_sig, wf_test_derived_create, args, n, result);
}

static const char* const wf_test_sum_types[] = {"testing.TestIntPair"};
static const WebFFISignature wf_test_sum_sig = {"testing.TestIntPair.sum", 1, wf_test_sum_types,
                                                "int"};

static int wf_test_pair_sum(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle obj;
  if (WebFFICheckNumArgs(&wf_test_sum_sig, n) != 0 ||
      WebFFIArgToObject(&wf_test_sum_sig, args, 0, wf_test_pair_index, &obj) != 0) {
    return -1;
  }
  wf_testing_set_int(result, ((wf_test_int_pair*)obj)->a + ((wf_test_int_pair*)obj)->b);
  return 0;
}

static int wf_test_register_field(int32_t type_index, const char* name, int64_t offset,
                                  int any_field) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  f.flags = kTVMFFIFieldFlagBitMaskWritable;
  f.size = any_field ? (int64_t)sizeof(TVMFFIAny) : 8;
  f.alignment = 8;
  f.offset = offset;
  f.getter = any_field ? wf_test_get_any : wf_test_get_int64;
  f.setter = (void*)(any_field ? wf_test_set_any : wf_test_set_int64);
  f.field_static_type_index = any_field ? kTVMFFIAny : kTVMFFIInt;
  if (any_field) f.flags |= kTVMFFIFieldFlagBitMaskHasDefault; /* default None */
  return TVMFFITypeRegisterField(type_index, &f);
}

static int wf_test_register_method(int32_t type_index, const char* name, TVMFFISafeCallType fn,
                                   int is_static) {
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof(m));
  if (TVMFFIFunctionCreate(NULL, fn, NULL, (TVMFFIObjectHandle*)&m.method.v_obj) != 0) return -1;
  m.method.type_index = kTVMFFIFunction;
  m.name.data = name;
  m.name.size = strlen(name);
  m.flags = is_static ? kTVMFFIFieldFlagBitMaskIsStaticMethod : 0;
  int rc = TVMFFITypeRegisterMethod(type_index, &m);
  TVMFFIObjectDecRef(m.method.v_obj);
  return rc;
}

static int wf_test_register_type(const char* key, int32_t parent, int (*creator)(TVMFFIObjectHandle*),
                                 int32_t size, int32_t* out_index) {
  TVMFFIByteArray k = {key, strlen(key)};
  const TVMFFITypeInfo* parent_info = TVMFFIGetTypeInfo(parent);
  int32_t depth = parent_info != NULL ? parent_info->type_depth + 1 : 0;
  *out_index = TVMFFITypeGetOrAllocIndex(&k, -1, depth, 0, 1, parent);
  if (*out_index < 0) return -1;
  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.creator = creator;
  meta.total_size = size;
  return TVMFFITypeRegisterMetadata(*out_index, &meta);
}

/* The index of a type already registered, or -1 (no error left raised). */
static int32_t wf_test_find_type(const char* key) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index;
  if (TVMFFITypeKeyToIndex(&k, &index) == 0) return index;
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) TVMFFIObjectDecRef(err);
  return -1;
}

int wf_testing_types_register(void) {
  /* The types outlive a module loaded again ({ replace: true }): their
   * fields and methods are registered once, by the first. */
  int32_t pair = wf_test_find_type("testing.TestIntPair");
  int32_t derived = wf_test_find_type("testing.TestIntPairDerived");
  if (pair >= 0 && derived >= 0) {
    wf_test_pair_index = pair;
    wf_test_derived_index = derived;
    return 0;
  }
  if (wf_test_register_type("testing.TestIntPair", kTVMFFIObject, wf_test_pair_create,
                            sizeof(wf_test_int_pair), &pair) != 0 ||
      wf_test_register_type("testing.TestIntPairDerived", pair, wf_test_derived_create,
                            sizeof(wf_test_int_pair_derived), &derived) != 0) {
    return -1;
  }
  wf_test_pair_index = pair;
  wf_test_derived_index = derived;
  if (wf_test_register_field(pair, "a", offsetof(wf_test_int_pair, a), 0) != 0 ||
      wf_test_register_field(pair, "b", offsetof(wf_test_int_pair, b), 0) != 0 ||
      wf_test_register_field(derived, "c", offsetof(wf_test_int_pair_derived, c), 1) != 0 ||
      wf_test_register_method(pair, "__ffi_init__", wf_test_pair_init, 1) != 0 ||
      wf_test_register_method(pair, "sum", wf_test_pair_sum, 0) != 0 ||
      wf_test_register_method(derived, "__ffi_init__", wf_test_derived_init, 1) != 0) {
    return -1;
  }
  return 0;
}
