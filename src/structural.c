/* ffi.RecursiveEq and ffi.RecursiveHash. */
#include "structural.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "map.h"
#include "memo.h"
#include "nesting.h"
#include "object.h"
#include "reflection.h"
#include "seq.h"
#include "shape.h"
#include "stable_hash.h"
#include "str.h"
#include "structural_hash.h"
#include "type_registry.h"

static int wf_structural_too_deep(const char* what) {
  return wf_err_raise("ValueError", "%s: nesting deeper than %d levels (or a cycle)", what,
                      WF_MAX_NESTING);
}

/* Reflected objects: types that have fields and are not built-in kinds. */
static int wf_structural_has_fields(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) return 0;
  for (int32_t d = 0; d <= info->type_depth; ++d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    if (t->num_fields > 0) return 1;
  }
  return 0;
}

/* Floats compare by value, with NaN equal to NaN (a value equals itself). */
static int wf_structural_float_equal(double x, double y) {
  return x == y || (isnan(x) && isnan(y));
}

/* Pairs of objects under comparison (aux 1) or found equal (aux 2): a pair
 * reached again through another path is not compared again, and one
 * reached from inside itself is a cycle. */
typedef struct {
  wf_memo pairs;
} wf_eq_ctx;

static int wf_eq(wf_eq_ctx* e, const TVMFFIAny* a, const TVMFFIAny* b, int depth);

typedef struct {
  wf_eq_ctx* e;
  TVMFFIObject* a;
  TVMFFIObject* b;
  int depth;
  int result;
} wf_eq_fields_ctx;

static int wf_eq_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_eq_fields_ctx* c = (wf_eq_fields_ctx*)ctx;
  if (field->flags & kTVMFFIFieldFlagBitMaskCompareOff) return 0; /* as upstream */
  TVMFFIAny x, y;
  wf_any_set_none(&x);
  wf_any_set_none(&y);
  if (wf_reflect_get(c->a, field, &x) != 0 || wf_reflect_get(c->b, field, &y) != 0) {
    c->result = -1;
  } else {
    c->result = wf_eq(c->e, &x, &y, c->depth + 1);
  }
  wf_any_release(&x);
  wf_any_release(&y);
  return c->result != 1; /* stop at the first difference or error */
}

static int wf_eq_children(wf_eq_ctx* e, TVMFFIObject* a, TVMFFIObject* b, int depth) {
  switch (a->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList: {
      int64_t n = wf_seq_size(a);
      if (n != wf_seq_size(b)) return 0;
      for (int64_t i = 0; i < n; ++i) {
        int rc = wf_eq(e, &wf_seq_data(a)[i], &wf_seq_data(b)[i], depth + 1);
        if (rc != 1) return rc;
      }
      return 1;
    }
    case kTVMFFIMap:
    case kTVMFFIDict: {
      if (wf_map_size(a) != wf_map_size(b)) return 0;
      int64_t pos = 0;
      for (wf_map_entry* x; (x = wf_map_next(a, &pos)) != NULL;) {
        wf_map_entry* other = wf_map_find(b, &x->key);
        if (other == NULL) return 0;
        int rc = wf_eq(e, &x->value, &other->value, depth + 1);
        if (rc != 1) return rc;
      }
      return 1;
    }
    default: {
      wf_eq_fields_ctx ctx = {e, a, b, depth, 1};
      wf_reflect_visit_fields(a->type_index, wf_eq_field, &ctx);
      return ctx.result;
    }
  }
}

static int wf_eq_objects(wf_eq_ctx* e, TVMFFIObject* a, TVMFFIObject* b, int depth) {
  int32_t t = a->type_index;
  if (t == kTVMFFIShape) {
    TVMFFIShapeCell* x = wf_shape_cell(a);
    TVMFFIShapeCell* y = wf_shape_cell(b);
    return x->size == y->size &&
           (x->size == 0 || memcmp(x->data, y->data, x->size * sizeof(int64_t)) == 0);
  }
  if (t != kTVMFFIArray && t != kTVMFFIList && t != kTVMFFIMap && t != kTVMFFIDict &&
      !wf_structural_has_fields(t)) {
    return 0; /* identity only */
  }
  wf_memo_entry* seen = wf_memo_find(&e->pairs, a, b);
  if (seen != NULL) return seen->aux == 2 ? 1 : wf_structural_too_deep("RecursiveEq");
  seen = wf_memo_put(&e->pairs, a, b);
  if (seen == NULL) return -1;
  seen->aux = 1;
  int rc = wf_eq_children(e, a, b, depth);
  /* Only equal pairs matter later: a difference or an error ends the walk. */
  if (rc == 1) wf_memo_find(&e->pairs, a, b)->aux = 2;
  return rc;
}

static int wf_eq(wf_eq_ctx* e, const TVMFFIAny* a, const TVMFFIAny* b, int depth) {
  if (depth > WF_MAX_NESTING) return wf_structural_too_deep("RecursiveEq");
  if (a->type_index == kTVMFFIFloat && b->type_index == kTVMFFIFloat) {
    return wf_structural_float_equal(a->v_float64, b->v_float64);
  }
  if (wf_any_equal(a, b)) return 1;
  if (!wf_any_is_object(a) || a->type_index != b->type_index) return 0;
  return wf_eq_objects(e, a->v_obj, b->v_obj, depth);
}

int wf_structural_equal(const TVMFFIAny* a, const TVMFFIAny* b) {
  wf_eq_ctx e = {{0}};
  int rc = wf_eq(&e, a, b, 0);
  wf_memo_free(&e.pairs);
  return rc;
}

/* ------------------------------------------------------------------ hash */
/* ffi.RecursiveHash, with upstream tvm-ffi's values: containers fold their
 * type key's hash and size, then their elements (with their positions) or
 * their entries (sorted, so order does not matter); reflected objects fold
 * their type key's hash and their fields; a type's __ffi_hash__ hook
 * (self, fn_hash) -> int hashes it instead. Objects are hashed once per
 * call (memo aux 2, value); one reached from inside itself (aux 1) hashes
 * as its type key, as upstream's does. */
typedef struct {
  wf_memo done;
  TVMFFIObject* fn_hash; /* the hooks' callback, made on first use */
} wf_hash_ctx;

static int wf_hash(wf_hash_ctx* hc, const TVMFFIAny* v, int depth, uint64_t* out);

static uint64_t wf_hash_key_of(int32_t type_index) {
  return TVMFFIGetTypeInfo(type_index)->type_key_hash;
}

typedef struct {
  wf_hash_ctx* hc;
  TVMFFIObject* obj;
  int depth;
  uint64_t h;
} wf_hash_fields_ctx;

static int wf_hash_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_hash_fields_ctx* c = (wf_hash_fields_ctx*)ctx;
  if (field->flags & (kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff)) return 0;
  TVMFFIAny x;
  uint64_t h = 0;
  wf_any_set_none(&x);
  int rc = wf_reflect_get(c->obj, field, &x) != 0 ? -1 : wf_hash(c->hc, &x, c->depth + 1, &h);
  wf_any_release(&x);
  c->h = wf_stable_combine(c->h, h);
  return rc;
}

static int wf_hash_u64_order(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

static int wf_hash_children(wf_hash_ctx* hc, TVMFFIObject* obj, int depth, uint64_t* out) {
  uint64_t h = wf_hash_key_of(obj->type_index);
  switch (obj->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList:
      h = wf_stable_combine(h, (uint64_t)wf_seq_size(obj));
      for (int64_t i = 0; i < wf_seq_size(obj); ++i) {
        uint64_t e = 0;
        if (wf_hash(hc, &wf_seq_data(obj)[i], depth + 1, &e) != 0) return -1;
        h = wf_stable_combine(h, wf_stable_combine(e, (uint64_t)i));
      }
      break;
    case kTVMFFIMap:
    case kTVMFFIDict: {
      int64_t size = wf_map_size(obj), n = 0, pos = 0;
      h = wf_stable_combine(h, (uint64_t)size);
      uint64_t* entries = (uint64_t*)malloc((size_t)(size > 0 ? size : 1) * sizeof(uint64_t));
      if (entries == NULL) return wf_err_raise_oom((size_t)size * sizeof(uint64_t));
      for (wf_map_entry* e; n < size && (e = wf_map_next(obj, &pos)) != NULL; ++n) {
        uint64_t k = 0, v = 0;
        if (wf_hash(hc, &e->key, depth + 1, &k) != 0 || wf_hash(hc, &e->value, depth + 1, &v) != 0) {
          free(entries);
          return -1;
        }
        entries[n] = wf_stable_combine(k, v);
      }
      qsort(entries, (size_t)n, sizeof(uint64_t), wf_hash_u64_order);
      for (int64_t i = 0; i < n; ++i) h = wf_stable_combine(h, entries[i]);
      free(entries);
      break;
    }
    default: {
      wf_hash_fields_ctx ctx = {hc, obj, depth, h};
      if (wf_reflect_visit_fields(obj->type_index, wf_hash_field, &ctx) != 0) return -1;
      h = ctx.h;
    }
  }
  *out = h;
  return 0;
}

/* fn_hash(value) -> int, the callback __ffi_hash__ hooks hash parts with. */
static int wf_hash_part(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char* const types[] = {"Any"};
  static const WebFFISignature sig = {"fn_hash", 1, types, "int"};
  uint64_t h;
  if (WebFFICheckNumArgs(&sig, n) != 0 || wf_hash((wf_hash_ctx*)self, &args[0], 0, &h) != 0) {
    return -1;
  }
  wf_any_set_int(result, (int64_t)h);
  return 0;
}

static int wf_hash_attr_set(int32_t type_index, const char* name) {
  TVMFFIByteArray n = {name, strlen(name)};
  return wf_reflect_attr_func(type_index, &n) != NULL;
}

/* The __ffi_hash__ hook's value: 1 with *out, 0 when the type has none. */
static int wf_hash_hook(wf_hash_ctx* hc, TVMFFIObject* obj, uint64_t* out) {
  static const TVMFFIByteArray name = {"__ffi_hash__", 12};
  const TVMFFIAny* hook = wf_reflect_attr_func(obj->type_index, &name);
  if (hook == NULL) {
    /* as upstream: equality of its own needs a hash of its own */
    if (obj->type_index >= kTVMFFIStaticObjectEnd &&
        (wf_hash_attr_set(obj->type_index, "__ffi_eq__") ||
         wf_hash_attr_set(obj->type_index, "__ffi_compare__"))) {
      return wf_err_raise("ValueError",
                          "RecursiveHash: type '%s' defines __ffi_eq__ or __ffi_compare__ but "
                          "not __ffi_hash__. Add a __ffi_hash__ hook to maintain the invariant "
                          "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).",
                          wf_type_key(obj->type_index));
    }
    return 0;
  }
  if (hc->fn_hash == NULL && (hc->fn_hash = wf_func_new(wf_hash_part, hc, NULL)) == NULL) return -1;
  TVMFFIAny args[2], r;
  wf_any_set_object(&args[0], obj);
  wf_any_set_object(&args[1], hc->fn_hash);
  wf_any_set_none(&r);
  if (wf_func_call(hook->v_obj, args, 2, &r) != 0) return -1;
  if (r.type_index != kTVMFFIInt && r.type_index != kTVMFFIBool) {
    int32_t t = r.type_index;
    wf_any_release(&r);
    return wf_err_raise("TypeError", "__ffi_hash__ must return an int, got `%s`", wf_type_key(t));
  }
  *out = (uint64_t)r.v_int64;
  return 1;
}

static int wf_hash_object(wf_hash_ctx* hc, TVMFFIObject* obj, int depth, uint64_t* out) {
  wf_memo_entry* seen = wf_memo_find(&hc->done, obj, NULL);
  if (seen != NULL) {
    *out = seen->aux == 2 ? seen->value : wf_hash_key_of(obj->type_index);
    return 0;
  }
  seen = wf_memo_put(&hc->done, obj, NULL);
  if (seen == NULL) return -1;
  seen->aux = 1;
  int rc;
  if (obj->type_index == kTVMFFIShape) {
    TVMFFIShapeCell* s = wf_shape_cell(obj);
    uint64_t h = wf_stable_combine(wf_hash_key_of(kTVMFFIShape), s->size);
    for (size_t i = 0; i < s->size; ++i) h = wf_stable_combine(h, (uint64_t)s->data[i]);
    *out = h;
    rc = 0;
  } else {
    rc = wf_hash_hook(hc, obj, out);
    rc = rc == 0 ? wf_hash_children(hc, obj, depth, out) : rc < 0 ? -1 : 0;
  }
  if (rc != 0) return -1;
  seen = wf_memo_find(&hc->done, obj, NULL); /* the table may have grown */
  seen->aux = 2;
  seen->value = *out;
  return 0;
}

static int wf_hash(wf_hash_ctx* hc, const TVMFFIAny* v, int depth, uint64_t* out) {
  if (depth > WF_MAX_NESTING) return wf_structural_too_deep("RecursiveHash");
  TVMFFIByteArray b;
  int32_t t = v->type_index;
  if (wf_any_string_view(v, &b) || wf_any_bytes_view(v, &b)) {
    *out = wf_stable_combine(wf_any_string_view(v, &b) ? kTVMFFIStr : kTVMFFIBytes,
                             wf_stable_bytes(b.data, b.size));
    return 0;
  }
  if (t >= kTVMFFIStaticObjectBegin) return wf_hash_object(hc, v->v_obj, depth, out);
  uint64_t h;
  switch (t) {
    case kTVMFFINone: h = wf_stable_combine(0, 0); break;
    case kTVMFFIFloat: {
      /* equal floats hash alike: one NaN, and -0.0 as 0.0 */
      double x = isnan(v->v_float64) ? NAN : v->v_float64 == 0 ? 0.0 : v->v_float64;
      uint64_t bits;
      memcpy(&bits, &x, sizeof(bits));
      h = wf_stable_combine(kTVMFFIFloat, bits);
      break;
    }
    case kTVMFFIDataType:
      h = wf_stable_combine(wf_stable_combine(wf_stable_combine(kTVMFFIDataType, v->v_dtype.code),
                                              v->v_dtype.bits),
                            v->v_dtype.lanes);
      break;
    case kTVMFFIDevice:
      h = wf_stable_combine(wf_stable_combine(kTVMFFIDevice, (uint64_t)(int64_t)v->v_device.device_type),
                            (uint64_t)(int64_t)v->v_device.device_id);
      break;
    default: h = wf_stable_combine((uint64_t)(uint32_t)t, wf_structural_pod_bits(v));
  }
  *out = h;
  return 0;
}

int wf_structural_hash(const TVMFFIAny* v, uint64_t* out) {
  wf_hash_ctx hc = {{0}, NULL};
  int rc = wf_hash(&hc, v, 0, out);
  if (hc.fn_hash != NULL) wf_obj_decref(hc.fn_hash);
  wf_memo_free(&hc.done);
  return rc;
}

/* ------------------------------------------------------ global functions */
static const char* const wf_structural_any2[] = {"Any", "Any"};
static const WebFFISignature wf_eq_sig = {"ffi.RecursiveEq", 2, wf_structural_any2, "bool"};
static const WebFFISignature wf_hash_sig = {"ffi.RecursiveHash", 1, wf_structural_any2, "int"};

static int wf_recursive_eq(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (WebFFICheckNumArgs(&wf_eq_sig, n) != 0) return -1;
  int rc = wf_structural_equal(&args[0], &args[1]);
  if (rc < 0) return -1;
  wf_any_set_bool(result, rc);
  return 0;
}

static int wf_recursive_hash(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  uint64_t h;
  if (WebFFICheckNumArgs(&wf_hash_sig, n) != 0 || wf_structural_hash(&args[0], &h) != 0) return -1;
  wf_any_set_int(result, (int64_t)h);
  return 0;
}

int wf_structural_register(void) {
  if (wf_global_register("ffi.RecursiveEq", wf_recursive_eq, NULL) != 0) return -1;
  return wf_global_register("ffi.RecursiveHash", wf_recursive_hash, NULL);
}
