/* ffi.StructuralKey: a value wrapped with its structural hash, so that
 * structurally equal values can meet as keys (ffi.StructuralKeyEqual). */
#include <stddef.h>
#include <stdint.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "global_registry.h"
#include "object.h"
#include "reflect_def.h"
#include "runtime_init.h"
#include "structural_equal.h"
#include "structural_hash.h"

typedef struct {
  TVMFFIObject header;
  TVMFFIAny key;
  int64_t hash_i64;
} wf_structural_key;

static int32_t wf_skey_index = -1;

static void wf_skey_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_any_release(&((wf_structural_key*)self)->key);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

static int wf_skey_create(TVMFFIObjectHandle* out) {
  *out = wf_obj_alloc(sizeof(wf_structural_key), 8, wf_skey_index, wf_skey_deleter);
  return *out != NULL ? 0 : -1;
}

static const char* const wf_skey_types[] = {"Any"};
static const char* const wf_skey_eq_types[] = {"ffi.StructuralKey", "ffi.StructuralKey"};
static const WebFFISignature wf_skey_sig = {"ffi.StructuralKey", 1, wf_skey_types,
                                            "ffi.StructuralKey"};
static const WebFFISignature wf_skey_eq_sig = {"ffi.StructuralKeyEqual", 2, wf_skey_eq_types,
                                               "bool"};

static int wf_skey_new(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  uint64_t h;
  if (WebFFICheckNumArgs(&wf_skey_sig, n) != 0 || wf_structural_hash_ex(&args[0], 0, 0, &h) != 0) {
    return -1;
  }
  TVMFFIObjectHandle obj;
  if (wf_skey_create(&obj) != 0) return -1;
  wf_structural_key* k = (wf_structural_key*)obj;
  k->hash_i64 = (int64_t)h;
  if (TVMFFIAnyViewToOwnedAny(&args[0], &k->key) != 0) {
    wf_obj_decref((TVMFFIObject*)obj);
    return -1;
  }
  wf_any_set_object(result, (TVMFFIObject*)obj);
  return 0;
}

static int wf_skey_equal(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle a, b;
  if (WebFFICheckNumArgs(&wf_skey_eq_sig, n) != 0 ||
      WebFFIArgToObject(&wf_skey_eq_sig, args, 0, wf_skey_index, &a) != 0 ||
      WebFFIArgToObject(&wf_skey_eq_sig, args, 1, wf_skey_index, &b) != 0) {
    return -1;
  }
  wf_structural_key* x = (wf_structural_key*)a;
  wf_structural_key* y = (wf_structural_key*)b;
  int eq = 1;
  if (a != b) {
    eq = x->hash_i64 == y->hash_i64 ? wf_structural_equal_ex(&x->key, &y->key, 0, 0, NULL) : 0;
    if (eq < 0) return -1;
  }
  wf_any_set_bool(result, eq);
  return 0;
}

/* `__any_hash__` / `__any_equal__` (C++ signatures int64_t(const Any&) and
 * bool(const Any&, const Any&), as upstream registers them): a Map or
 * Dict keyed by StructuralKeys, ours or one C++ code probes, matches keys
 * by structure. An equality that fails to compare counts as unequal. */
static int64_t wf_skey_any_hash(const TVMFFIAny* key) {
  return ((const wf_structural_key*)key->v_obj)->hash_i64;
}

static _Bool wf_skey_any_equal(const TVMFFIAny* a, const TVMFFIAny* b) {
  if (a->v_obj == b->v_obj) return 1;
  const wf_structural_key* x = (const wf_structural_key*)a->v_obj;
  const wf_structural_key* y = (const wf_structural_key*)b->v_obj;
  if (b->type_index != wf_skey_index || x->hash_i64 != y->hash_i64) return 0;
  return wf_structural_equal_ex(&x->key, &y->key, 0, 0, NULL) == 1;
}

int wf_structural_key_register(void) {
  if (wf_skey_index >= 0) return 0;
  int32_t t = wf_def_type("ffi.StructuralKey", -1, kTVMFFIObject, sizeof(wf_structural_key),
                          kTVMFFISEqHashKindTreeNode, wf_skey_create);
  if (t < 0) return -1;
  wf_skey_index = t;
  if (wf_def_field(t, "key", offsetof(wf_structural_key, key), WF_DEF_ANY, 0) != 0 ||
      wf_def_field(t, "hash_i64", offsetof(wf_structural_key, hash_i64), WF_DEF_INT64, 0) != 0 ||
      wf_def_method(t, "__ffi_init__", wf_skey_new, 1) != 0 ||
      wf_def_attr_ptr(t, "__any_hash__", (void*)(uintptr_t)wf_skey_any_hash) != 0 ||
      wf_def_attr_ptr(t, "__any_equal__", (void*)(uintptr_t)wf_skey_any_equal) != 0 ||
      wf_global_register("ffi.StructuralKey", wf_skey_new, NULL) != 0) {
    return -1;
  }
  return wf_global_register("ffi.StructuralKeyEqual", wf_skey_equal, NULL);
}
