/* Reflected object types for tests: testing.TestIntPair (fields a, b and a
 * sum method) and testing.TestIntPairDerived (adds an Any field c). */
#include <stddef.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "object.h"
#include "reflection.h"
#include "runtime_init.h"
#include "type_registry.h"

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

static void wf_test_derived_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_any_release(&((wf_test_int_pair_derived*)self)->c);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

static int wf_test_pair_create(TVMFFIObjectHandle* out) {
  *out = wf_obj_alloc(sizeof(wf_test_int_pair), 8, wf_test_pair_index, wf_obj_plain_deleter);
  return *out != NULL ? 0 : -1;
}

static int wf_test_derived_create(TVMFFIObjectHandle* out) {
  *out = wf_obj_alloc(sizeof(wf_test_int_pair_derived), 8, wf_test_derived_index,
                      wf_test_derived_deleter);
  return *out != NULL ? 0 : -1;
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
  if (n == 3 && wf_reflect_set_any(&((wf_test_int_pair_derived*)obj)->c, &args[2]) != 0) {
    wf_obj_decref((TVMFFIObject*)obj);
    return -1;
  }
  wf_any_set_object(result, (TVMFFIObject*)obj);
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
  wf_any_set_int(result, ((wf_test_int_pair*)obj)->a + ((wf_test_int_pair*)obj)->b);
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
  f.getter = any_field ? wf_reflect_get_any : wf_reflect_get_int64;
  f.setter = (void*)(any_field ? wf_reflect_set_any : wf_reflect_set_int64);
  f.field_static_type_index = any_field ? kTVMFFIAny : kTVMFFIInt;
  if (any_field) f.flags |= kTVMFFIFieldFlagBitMaskHasDefault; /* default None */
  return TVMFFITypeRegisterField(type_index, &f);
}

static int wf_test_register_method(int32_t type_index, const char* name, TVMFFISafeCallType fn,
                                   int is_static) {
  TVMFFIObject* f = wf_func_new(fn, NULL, NULL);
  if (f == NULL) return -1;
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof(m));
  m.name.data = name;
  m.name.size = strlen(name);
  m.flags = is_static ? kTVMFFIFieldFlagBitMaskIsStaticMethod : 0;
  wf_any_set_object(&m.method, f);
  int rc = TVMFFITypeRegisterMethod(type_index, &m);
  wf_obj_decref(f);
  return rc;
}

static int wf_test_register_type(const char* key, int32_t parent, int (*creator)(TVMFFIObjectHandle*),
                                 int32_t size, int32_t* out_index) {
  *out_index = wf_type_register_static(key, -1, parent);
  if (*out_index < 0) return -1;
  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.creator = creator;
  meta.total_size = size;
  return TVMFFITypeRegisterMetadata(*out_index, &meta);
}

int wf_testing_types_register(void) {
  /* Registering twice (a retried init) would duplicate fields. */
  if (wf_test_pair_index >= 0) return 0;
  int32_t pair, derived;
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
