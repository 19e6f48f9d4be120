/* ffi.RecursiveLt, ffi.RecursiveLe, ffi.RecursiveGt, ffi.RecursiveGe: a
 * three-way ordering of values, as upstream's dataclass comparisons define
 * it (sequences and fields lexicographically, strings and bytes by content,
 * None first; Maps only when equal). Bounded like ffi.RecursiveEq: nesting
 * stops at WF_MAX_NESTING and a pair found equal is not compared again. */
#include <math.h>
#include <stdio.h>
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
#include "runtime_init.h"
#include "seq.h"
#include "shape.h"
#include "str.h"
#include "type_registry.h"

typedef struct {
  wf_memo pairs; /* aux 1: being compared; 2, 3, 4: compared as -1, 0, 1 */
  TVMFFIObject* callback;
  int depth;
} wf_rc_ctx;

/* 0 with *out in {-1, 0, 1}, or -1 with the error raised. */
static int wf_rc_any(wf_rc_ctx* c, const TVMFFIAny* a, const TVMFFIAny* b, int* out);

static int wf_rc_sign(int v) { return (v > 0) - (v < 0); }

static int wf_rc_text(const TVMFFIByteArray* x, const TVMFFIByteArray* y) {
  size_t n = x->size < y->size ? x->size : y->size;
  int r = n > 0 ? memcmp(x->data, y->data, n) : 0;
  if (r != 0) return wf_rc_sign(r);
  return (x->size > y->size) - (x->size < y->size);
}

/* The type a value has once held (a C string is held as a String). */
static const char* wf_rc_type_key(const TVMFFIAny* v) {
  TVMFFIByteArray text;
  if (v->type_index == kTVMFFIRawStr && wf_any_string_view(v, &text)) {
    return text.size <= WF_SMALL_STR_MAX ? "ffi.SmallStr" : "ffi.String";
  }
  if (v->type_index == kTVMFFIByteArrayPtr && wf_any_bytes_view(v, &text)) {
    return text.size <= WF_SMALL_STR_MAX ? "ffi.SmallBytes" : "ffi.Bytes";
  }
  return wf_type_key(v->type_index);
}

static int wf_rc_pod(const TVMFFIAny* a, const TVMFFIAny* b, int* out) {
  switch (a->type_index) {
    case kTVMFFIBool: *out = (a->v_int64 != 0) - (b->v_int64 != 0); return 0;
    case kTVMFFIInt: *out = (a->v_int64 > b->v_int64) - (a->v_int64 < b->v_int64); return 0;
    case kTVMFFIFloat: {
      double x = a->v_float64, y = b->v_float64;
      if (isnan(x) || isnan(y)) return wf_err_raise("TypeError", "Cannot order NaN values");
      *out = (x > y) - (x < y);
      return 0;
    }
    case kTVMFFIDataType: {
      DLDataType x = a->v_dtype, y = b->v_dtype;
      *out = x.code != y.code   ? (x.code < y.code ? -1 : 1)
             : x.bits != y.bits ? (x.bits < y.bits ? -1 : 1)
                                : (x.lanes > y.lanes) - (x.lanes < y.lanes);
      return 0;
    }
    case kTVMFFIDevice: {
      DLDevice x = a->v_device, y = b->v_device;
      *out = x.device_type != y.device_type ? (x.device_type < y.device_type ? -1 : 1)
                                            : (x.device_id > y.device_id) - (x.device_id < y.device_id);
      return 0;
    }
    default:
      if (a->zero_padding == b->zero_padding && a->v_int64 == b->v_int64) {
        *out = 0;
        return 0;
      }
      return wf_err_raise("TypeError", "Cannot order values of type %s", wf_type_key(a->type_index));
  }
}

static int wf_rc_sequence(wf_rc_ctx* c, TVMFFIObject* a, TVMFFIObject* b, int* out) {
  int64_t na = wf_seq_size(a), nb = wf_seq_size(b);
  for (int64_t i = 0; i < na && i < nb; ++i) {
    if (wf_rc_any(c, &wf_seq_data(a)[i], &wf_seq_data(b)[i], out) != 0) return -1;
    if (*out != 0) return 0;
  }
  *out = (na > nb) - (na < nb);
  return 0;
}

static int wf_rc_map_error(void) { return wf_err_raise("TypeError", "Cannot order Map/Dict values"); }

/* Maps have no order: equal ones compare 0, anything else is an error. */
static int wf_rc_map(wf_rc_ctx* c, TVMFFIObject* a, TVMFFIObject* b, int* out) {
  if (wf_map_size(a) != wf_map_size(b)) return wf_rc_map_error();
  int64_t pos = 0;
  for (wf_map_entry* x; (x = wf_map_next(a, &pos)) != NULL;) {
    wf_map_entry* y = wf_map_find(b, &x->key);
    if (y == NULL) return wf_rc_map_error();
    if (wf_rc_any(c, &x->value, &y->value, out) != 0) return -1;
    if (*out != 0) return wf_rc_map_error();
  }
  *out = 0;
  return 0;
}

typedef struct {
  wf_rc_ctx* c;
  TVMFFIObject* a;
  TVMFFIObject* b;
  int* out;
} wf_rc_fields;

static int wf_rc_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_rc_fields* f = (wf_rc_fields*)ctx;
  if (field->flags & kTVMFFIFieldFlagBitMaskCompareOff) return 0;
  TVMFFIAny x, y;
  wf_any_set_none(&x);
  wf_any_set_none(&y);
  int rc = -1;
  if (wf_reflect_get(f->a, field, &x) == 0 && wf_reflect_get(f->b, field, &y) == 0) {
    rc = wf_rc_any(f->c, &x, &y, f->out);
  }
  wf_any_release(&x);
  wf_any_release(&y);
  if (rc != 0) return -1;
  return *f->out != 0; /* stop at the first difference */
}

/* (lhs, rhs) -> int, handed to __ffi_compare__ hooks. */
static int wf_rc_callback(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char* const types[] = {"Any", "Any"};
  static const WebFFISignature sig = {"fn_compare", 2, types, "int"};
  int r;
  if (WebFFICheckNumArgs(&sig, n) != 0 || wf_rc_any((wf_rc_ctx*)self, &args[0], &args[1], &r) != 0) {
    return -1;
  }
  wf_any_set_int(result, r);
  return 0;
}

static const TVMFFIAny* wf_rc_hook(int32_t type_index) {
  static const TVMFFIByteArray name = {"__ffi_compare__", 15};
  return wf_reflect_attr_func(type_index, &name);
}

static int wf_rc_object(wf_rc_ctx* c, TVMFFIObject* a, TVMFFIObject* b, int* out) {
  const TVMFFIAny* hook = a->type_index >= kTVMFFIStaticObjectEnd ? wf_rc_hook(a->type_index) : NULL;
  if (hook != NULL) {
    if (c->callback == NULL && (c->callback = wf_func_new(wf_rc_callback, c, NULL)) == NULL) {
      return -1;
    }
    TVMFFIAny args[3], r;
    wf_any_set_object(&args[0], a);
    wf_any_set_object(&args[1], b);
    wf_any_set_object(&args[2], c->callback);
    wf_any_set_none(&r);
    if (wf_func_call(hook->v_obj, args, 3, &r) != 0) return -1;
    int ok = r.type_index == kTVMFFIInt || r.type_index == kTVMFFIBool;
    *out = ok ? wf_rc_sign((int)(r.v_int64 > 0) - (int)(r.v_int64 < 0)) : 0;
    wf_any_release(&r);
    return ok ? 0 : wf_err_raise("TypeError", "__ffi_compare__ must return an int");
  }
  wf_rc_fields f = {c, a, b, out};
  *out = 0;
  return wf_reflect_visit_fields(a->type_index, wf_rc_field, &f) < 0 ? -1 : 0;
}

static int wf_rc_any(wf_rc_ctx* c, const TVMFFIAny* a, const TVMFFIAny* b, int* out) {
  int32_t ta = a->type_index, tb = b->type_index;
  if (ta == kTVMFFINone || tb == kTVMFFINone) {
    *out = (tb == kTVMFFINone) - (ta == kTVMFFINone);
    return 0;
  }
  TVMFFIByteArray x, y;
  if (wf_any_string_view(a, &x) && wf_any_string_view(b, &y)) {
    *out = wf_rc_text(&x, &y);
    return 0;
  }
  if (wf_any_bytes_view(a, &x) && wf_any_bytes_view(b, &y)) {
    *out = wf_rc_text(&x, &y);
    return 0;
  }
  if (ta != tb) {
    /* Two keys: wf_type_key's buffer serves one at a time. */
    char left[128];
    snprintf(left, sizeof(left), "%s", wf_rc_type_key(a));
    return wf_err_raise("TypeError", "Cannot compare values of different types: %s vs %s", left,
                        wf_rc_type_key(b));
  }
  if (ta < kTVMFFIStaticObjectBegin) return wf_rc_pod(a, b, out);
  TVMFFIObject *p = a->v_obj, *q = b->v_obj;
  *out = 0;
  if (p == q) return 0;
  if (ta == kTVMFFIShape) {
    TVMFFIShapeCell *s = wf_shape_cell(p), *t = wf_shape_cell(q);
    for (size_t i = 0; i < s->size && i < t->size; ++i) {
      if (s->data[i] != t->data[i]) {
        *out = s->data[i] < t->data[i] ? -1 : 1;
        return 0;
      }
    }
    *out = (s->size > t->size) - (s->size < t->size);
    return 0;
  }
  wf_memo_entry* seen = wf_memo_find(&c->pairs, p, q);
  if (seen != NULL) {
    if (seen->aux >= 2) {
      *out = (int)seen->aux - 3;
      return 0;
    }
    return wf_err_raise("ValueError", "RecursiveCompare: cyclic reference detected in ordering");
  }
  if (c->depth >= WF_MAX_NESTING) {
    return wf_err_raise("ValueError", "RecursiveCompare: maximum stack depth (%d) exceeded",
                        WF_MAX_NESTING);
  }
  if ((seen = wf_memo_put(&c->pairs, p, q)) == NULL) return -1;
  seen->aux = 1;
  ++c->depth;
  int rc;
  switch (ta) {
    case kTVMFFIArray:
    case kTVMFFIList: rc = wf_rc_sequence(c, p, q, out); break;
    case kTVMFFIMap:
    case kTVMFFIDict: rc = wf_rc_map(c, p, q, out); break;
    default: rc = wf_rc_object(c, p, q, out);
  }
  --c->depth;
  if (rc != 0) return -1;
  wf_memo_find(&c->pairs, p, q)->aux = 3 + *out; /* 2, 3 or 4: the result, known */
  return 0;
}

typedef struct {
  WebFFISignature sig;
  int want_lt, want_eq, want_gt; /* which outcomes make the result true */
} wf_rc_op;

static const char* const wf_rc_types[] = {"Any", "Any"};
static const wf_rc_op wf_rc_ops[] = {
    {{"ffi.RecursiveLt", 2, wf_rc_types, "bool"}, 1, 0, 0},
    {{"ffi.RecursiveLe", 2, wf_rc_types, "bool"}, 1, 1, 0},
    {{"ffi.RecursiveGt", 2, wf_rc_types, "bool"}, 0, 0, 1},
    {{"ffi.RecursiveGe", 2, wf_rc_types, "bool"}, 0, 1, 1},
};

static int wf_rc_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const wf_rc_op* op = (const wf_rc_op*)self;
  if (WebFFICheckNumArgs(&op->sig, n) != 0) return -1;
  wf_rc_ctx c;
  memset(&c, 0, sizeof(c));
  int r;
  int rc = wf_rc_any(&c, &args[0], &args[1], &r);
  if (c.callback != NULL) wf_obj_decref(c.callback);
  wf_memo_free(&c.pairs);
  if (rc != 0) return -1;
  wf_any_set_bool(result, r < 0 ? op->want_lt : r == 0 ? op->want_eq : op->want_gt);
  return 0;
}

int wf_recursive_compare_register(void) {
  for (size_t i = 0; i < sizeof(wf_rc_ops) / sizeof(wf_rc_ops[0]); ++i) {
    if (wf_global_register_with_self(wf_rc_ops[i].sig.name, wf_rc_global, (void*)&wf_rc_ops[i]) != 0) {
      return -1;
    }
  }
  return 0;
}
