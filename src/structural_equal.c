/* Structural equality as upstream defines it, bounded: nesting stops at
 * WF_MAX_NESTING, and a pair of objects found equal is not compared again
 * (so a DAG costs one comparison per pair of nodes, not one per path). */
#include "structural_equal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "access_path.h"
#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "map.h"
#include "memo.h"
#include "object.h"
#include "reflection.h"
#include "seq.h"
#include "shape.h"
#include "str.h"
#include "structural_kind.h"

/* The steps from a mismatch up to the root, appended as the walk unwinds. */
typedef struct {
  TVMFFIObject** steps;
  size_t size, capacity;
} wf_step_list;

typedef struct {
  wf_memo pairs;      /* (lhs, rhs): aux 1 being compared, 2 found equal */
  wf_memo lhs_to_rhs; /* bound free vars and DAG nodes: value = the other side */
  wf_memo rhs_to_lhs;
  int def_region; /* TVMFFIDefRegionKind */
  int skip_tensor_content;
  int track; /* record the mismatch path */
  wf_step_list lhs_path, rhs_path;
  TVMFFIObject* callback; /* for __s_equal__ hooks, made on first use */
  int depth;
} wf_seq_ctx;

static int wf_seq_any(wf_seq_ctx* c, const TVMFFIAny* a, const TVMFFIAny* b);

static int wf_step_push(wf_step_list* l, int32_t kind, const TVMFFIAny* key) {
  if (l->size == l->capacity) {
    size_t cap = l->capacity ? l->capacity * 2 : 16;
    TVMFFIObject** grown = (TVMFFIObject**)realloc(l->steps, cap * sizeof(*grown));
    if (grown == NULL) return wf_err_raise_oom(cap * sizeof(*grown));
    l->steps = grown;
    l->capacity = cap;
  }
  TVMFFIObject* step = wf_access_step_new(kind, key);
  if (step == NULL) return -1;
  l->steps[l->size++] = step;
  return 0;
}

/* Records one step on both sides; returns 0 (not equal) or -1. */
static int wf_seq_mismatch(wf_seq_ctx* c, int32_t lkind, const TVMFFIAny* lkey, int32_t rkind,
                           const TVMFFIAny* rkey) {
  if (!c->track) return 0;
  if (wf_step_push(&c->lhs_path, lkind, lkey) != 0 ||
      wf_step_push(&c->rhs_path, rkind, rkey) != 0) {
    return -1;
  }
  return 0;
}

static int wf_seq_attr_mismatch(wf_seq_ctx* c, const TVMFFIByteArray* name) {
  if (!c->track) return 0;
  TVMFFIAny key;
  if (wf_str_make(0, name->data, name->size, &key) != 0) return -1;
  int rc = wf_seq_mismatch(c, WF_ACCESS_ATTR, &key, WF_ACCESS_ATTR, &key);
  wf_any_release(&key);
  return rc;
}

static int wf_seq_int_mismatch(wf_seq_ctx* c, int32_t lkind, int64_t li, int32_t rkind,
                               int64_t ri) {
  TVMFFIAny l, r;
  wf_any_set_int(&l, li);
  wf_any_set_int(&r, ri);
  return wf_seq_mismatch(c, lkind, &l, rkind, &r);
}

/* --------------------------------------------------------- containers */
static int wf_seq_sequence(wf_seq_ctx* c, TVMFFIObject* a, TVMFFIObject* b) {
  int64_t na = wf_seq_size(a), nb = wf_seq_size(b);
  if (na != nb && !c->track) return 0;
  int64_t n = na < nb ? na : nb;
  for (int64_t i = 0; i < n; ++i) {
    int rc = wf_seq_any(c, &wf_seq_data(a)[i], &wf_seq_data(b)[i]);
    if (rc != 1) {
      return rc < 0 ? rc : wf_seq_int_mismatch(c, WF_ACCESS_ARRAY_ITEM, i, WF_ACCESS_ARRAY_ITEM, i);
    }
  }
  if (na == nb) return 1;
  if (na > nb) {
    return wf_seq_int_mismatch(c, WF_ACCESS_ARRAY_ITEM, nb, WF_ACCESS_ARRAY_ITEM_MISSING, nb);
  }
  return wf_seq_int_mismatch(c, WF_ACCESS_ARRAY_ITEM_MISSING, na, WF_ACCESS_ARRAY_ITEM, na);
}

/* A key as the other side names it: bound objects map across. */
static void wf_seq_map_key(wf_memo* m, const TVMFFIAny* key, TVMFFIAny* out) {
  *out = *key;
  if (!wf_any_is_object(key)) return;
  wf_memo_entry* e = wf_memo_find(m, key->v_obj, NULL);
  if (e != NULL) wf_any_set_object(out, (TVMFFIObject*)(uintptr_t)e->value);
}

static int wf_seq_map(wf_seq_ctx* c, TVMFFIObject* a, TVMFFIObject* b) {
  if (wf_map_size(a) != wf_map_size(b) && !c->track) return 0;
  int64_t pos = 0;
  for (wf_map_entry* x; (x = wf_map_next(a, &pos)) != NULL;) {
    TVMFFIAny key;
    wf_seq_map_key(&c->lhs_to_rhs, &x->key, &key);
    wf_map_entry* y = wf_map_find(b, &key);
    if (y == NULL) return wf_seq_mismatch(c, WF_ACCESS_MAP_ITEM, &x->key, WF_ACCESS_MAP_ITEM_MISSING, &key);
    int rc = wf_seq_any(c, &x->value, &y->value);
    if (rc != 1) {
      return rc < 0 ? rc : wf_seq_mismatch(c, WF_ACCESS_MAP_ITEM, &x->key, WF_ACCESS_MAP_ITEM, &key);
    }
  }
  if (wf_map_size(a) == wf_map_size(b)) return 1;
  /* b has more keys: name one that a lacks. */
  pos = 0;
  for (wf_map_entry* y; (y = wf_map_next(b, &pos)) != NULL;) {
    TVMFFIAny key;
    wf_seq_map_key(&c->rhs_to_lhs, &y->key, &key);
    if (wf_map_find(a, &key) == NULL) {
      return wf_seq_mismatch(c, WF_ACCESS_MAP_ITEM_MISSING, &key, WF_ACCESS_MAP_ITEM, &y->key);
    }
  }
  return 0;
}

static int wf_seq_tensor(wf_seq_ctx* c, TVMFFIObject* a, TVMFFIObject* b) {
  if (a == b) return 1;
  const DLTensor* x = wf_tensor_dl(a);
  const DLTensor* y = wf_tensor_dl(b);
  if (x->ndim != y->ndim) return 0;
  for (int i = 0; i < x->ndim; ++i) {
    if (x->shape[i] != y->shape[i]) return 0;
  }
  if (x->dtype.code != y->dtype.code || x->dtype.bits != y->dtype.bits ||
      x->dtype.lanes != y->dtype.lanes) {
    return 0;
  }
  if (c->skip_tensor_content) return 1;
  const char *dx = NULL, *dy = NULL;
  size_t nx = 0, ny = 0;
  if (wf_structural_tensor_bytes(x, "compare", &dx, &nx) != 0 ||
      wf_structural_tensor_bytes(y, "compare", &dy, &ny) != 0) {
    return -1;
  }
  return nx == 0 || memcmp(dx, dy, nx) == 0;
}

/* ------------------------------------------------------------ objects */
typedef struct {
  wf_seq_ctx* c;
  TVMFFIObject* a;
  TVMFFIObject* b;
  int result;
} wf_seq_fields;

static int wf_seq_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_seq_fields* f = (wf_seq_fields*)ctx;
  if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashIgnore) return 0;
  TVMFFIAny x, y;
  wf_any_set_none(&x);
  wf_any_set_none(&y);
  if (wf_reflect_get(f->a, field, &x) != 0 || wf_reflect_get(f->b, field, &y) != 0) {
    f->result = -1;
  } else {
    int saved = f->c->def_region;
    if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashDefNonRecursive) {
      f->c->def_region = kTVMFFIDefRegionKindNonRecursive;
    } else if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashDefRecursive) {
      f->c->def_region = kTVMFFIDefRegionKindRecursive;
    }
    f->result = wf_seq_any(f->c, &x, &y);
    f->c->def_region = saved;
    if (f->result == 0 && wf_seq_attr_mismatch(f->c, &field->name) != 0) f->result = -1;
  }
  wf_any_release(&x);
  wf_any_release(&y);
  return f->result != 1;
}

/* The callback an __s_equal__ hook compares parts with:
 * (lhs, rhs, def_region_kind: int, field_name) -> bool. */
static int wf_seq_hook_callback(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char* const types[] = {"Any", "Any", "int", "Any"};
  static const WebFFISignature sig = {"s_equal_callback", 4, types, "bool"};
  wf_seq_ctx* c = (wf_seq_ctx*)self;
  int64_t kind;
  if (WebFFICheckNumArgs(&sig, n) != 0 || WebFFIArgToInt(&sig, args, 2, &kind) != 0) return -1;
  int saved = c->def_region;
  if (kind != kTVMFFIDefRegionKindNone) c->def_region = (int)kind;
  int rc = wf_seq_any(c, &args[0], &args[1]);
  c->def_region = saved;
  if (rc < 0) return -1;
  if (rc == 0) {
    TVMFFIByteArray name;
    if (!wf_any_string_view(&args[3], &name)) {
      return wf_err_raise("TypeError", "s_equal_callback: field_name must be a str");
    }
    if (wf_seq_attr_mismatch(c, &name) != 0) return -1;
  }
  wf_any_set_bool(result, rc);
  return 0;
}

static const TVMFFIAny* wf_seq_hook(int32_t type_index) {
  static const TVMFFIByteArray name = {"__s_equal__", 11};
  return wf_reflect_attr_func(type_index, &name);
}

static int wf_seq_fields_of(wf_seq_ctx* c, TVMFFIObject* a, TVMFFIObject* b) {
  const TVMFFIAny* hook = wf_seq_hook(a->type_index);
  if (hook == NULL) {
    wf_seq_fields f = {c, a, b, 1};
    wf_reflect_visit_fields(a->type_index, wf_seq_field, &f);
    return f.result;
  }
  if (c->callback == NULL) {
    c->callback = wf_func_new(wf_seq_hook_callback, c, NULL);
    if (c->callback == NULL) return -1;
  }
  TVMFFIAny args[3], r;
  wf_any_set_object(&args[0], a);
  wf_any_set_object(&args[1], b);
  wf_any_set_object(&args[2], c->callback);
  wf_any_set_none(&r);
  if (wf_func_call(hook->v_obj, args, 3, &r) != 0) return -1;
  int eq = r.type_index == kTVMFFIBool || r.type_index == kTVMFFIInt ? r.v_int64 != 0 : -2;
  wf_any_release(&r);
  if (eq == -2) return wf_err_raise("TypeError", "__s_equal__ must return a bool");
  return eq;
}

static int wf_seq_bind(wf_seq_ctx* c, TVMFFIObject* a, TVMFFIObject* b) {
  wf_memo_entry* e = wf_memo_put(&c->lhs_to_rhs, a, NULL);
  if (e == NULL) return -1;
  e->value = (uint64_t)(uintptr_t)b;
  e = wf_memo_put(&c->rhs_to_lhs, b, NULL);
  if (e == NULL) return -1;
  e->value = (uint64_t)(uintptr_t)a;
  return 1;
}

static int wf_seq_object(wf_seq_ctx* c, TVMFFIObject* a, TVMFFIObject* b) {
  TVMFFISEqHashKind kind = kTVMFFISEqHashKindUnsupported;
  if (wf_structural_kind(a->type_index, &kind) != 0) return -1;
  if (kind == kTVMFFISEqHashKindUniqueInstance) return a == b;
  if (kind == kTVMFFISEqHashKindConstTreeNode && a == b) return 1;
  if (kind == kTVMFFISEqHashKindDAGNode || kind == kTVMFFISEqHashKindFreeVar) {
    wf_memo_entry* e = wf_memo_find(&c->lhs_to_rhs, a, NULL);
    if (e != NULL) return (TVMFFIObject*)(uintptr_t)e->value == b;
    if (wf_memo_find(&c->rhs_to_lhs, b, NULL) != NULL) return 0;
  }
  if (kind != kTVMFFISEqHashKindFreeVar) {
    wf_memo_entry* seen = wf_memo_find(&c->pairs, a, b);
    if (seen != NULL) return seen->aux == 2 ? 1 : wf_structural_too_deep_error("StructuralEqual");
    if ((seen = wf_memo_put(&c->pairs, a, b)) == NULL) return -1;
    seen->aux = 1;
    int rc = wf_seq_fields_of(c, a, b);
    if (rc == 1) {
      wf_memo_find(&c->pairs, a, b)->aux = 2;
      if (kind == kTVMFFISEqHashKindDAGNode) rc = wf_seq_bind(c, a, b);
    }
    return rc;
  }
  /* A free variable: its own fields are compared outside a non-recursive
   * definition region; it then binds if identical or inside a region. */
  int saved = c->def_region;
  if (c->def_region == kTVMFFIDefRegionKindNonRecursive) c->def_region = kTVMFFIDefRegionKindNone;
  int rc = wf_seq_fields_of(c, a, b);
  c->def_region = saved;
  if (rc != 1) return rc;
  if (a == b || c->def_region != kTVMFFIDefRegionKindNone) return wf_seq_bind(c, a, b);
  return 0;
}

/* Containers: a pair reached again through another path is looked up. */
static int wf_seq_container(wf_seq_ctx* c, TVMFFIObject* a, TVMFFIObject* b) {
  wf_memo_entry* seen = wf_memo_find(&c->pairs, a, b);
  if (seen != NULL) return seen->aux == 2 ? 1 : wf_structural_too_deep_error("StructuralEqual");
  if ((seen = wf_memo_put(&c->pairs, a, b)) == NULL) return -1;
  seen->aux = 1;
  int32_t t = a->type_index;
  int rc = t == kTVMFFIArray || t == kTVMFFIList ? wf_seq_sequence(c, a, b) : wf_seq_map(c, a, b);
  if (rc == 1) wf_memo_find(&c->pairs, a, b)->aux = 2;
  return rc;
}

static int wf_seq_any(wf_seq_ctx* c, const TVMFFIAny* a, const TVMFFIAny* b) {
  int32_t t = a->type_index;
  TVMFFIByteArray text;
  /* Every string form (small, heap, raw) is the same value; bytes too. */
  if (wf_any_string_view(a, &text) || wf_any_bytes_view(a, &text)) return wf_any_equal(a, b);
  if (t != b->type_index) return 0;
  if (t < kTVMFFIStaticObjectBegin) {
    if (t == kTVMFFIFloat && isnan(a->v_float64)) return isnan(b->v_float64);
    return a->zero_padding == b->zero_padding && a->v_int64 == b->v_int64;
  }
  if (c->depth >= WF_MAX_NESTING) return wf_structural_too_deep_error("StructuralEqual");
  ++c->depth;
  int rc;
  switch (t) {
    case kTVMFFIArray:
    case kTVMFFIList:
    case kTVMFFIMap:
    case kTVMFFIDict: rc = wf_seq_container(c, a->v_obj, b->v_obj); break;
    case kTVMFFIShape: {
      TVMFFIShapeCell* x = wf_shape_cell(a->v_obj);
      TVMFFIShapeCell* y = wf_shape_cell(b->v_obj);
      rc = x->size == y->size &&
           (x->size == 0 || memcmp(x->data, y->data, x->size * sizeof(int64_t)) == 0);
      break;
    }
    case kTVMFFITensor: rc = wf_seq_tensor(c, a->v_obj, b->v_obj); break;
    default: rc = wf_seq_object(c, a->v_obj, b->v_obj);
  }
  --c->depth;
  return rc;
}

/* A path from the root through the recorded steps (recorded leaf first). */
static TVMFFIObject* wf_seq_path(const wf_step_list* l) {
  TVMFFIObject* path = wf_access_path_root();
  for (size_t i = l->size; path != NULL && i-- > 0;) {
    TVMFFIObject* next = wf_access_path_extend(path, l->steps[i]);
    wf_obj_decref(path);
    path = next;
  }
  return path;
}

static void wf_step_list_free(wf_step_list* l) {
  for (size_t i = 0; i < l->size; ++i) wf_obj_decref(l->steps[i]);
  free(l->steps);
}

int wf_structural_equal_ex(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int map_free_vars,
                           int skip_tensor_content, TVMFFIObject** mismatch) {
  wf_seq_ctx c;
  memset(&c, 0, sizeof(c));
  c.def_region = map_free_vars ? kTVMFFIDefRegionKindRecursive : kTVMFFIDefRegionKindNone;
  c.skip_tensor_content = skip_tensor_content;
  c.track = mismatch != NULL;
  if (mismatch != NULL) *mismatch = NULL;
  int rc = wf_seq_any(&c, lhs, rhs);
  if (rc == 0 && mismatch != NULL) {
    TVMFFIObject* lp = wf_seq_path(&c.lhs_path);
    TVMFFIObject* rp = lp != NULL ? wf_seq_path(&c.rhs_path) : NULL;
    TVMFFIObject* pair = rp != NULL ? wf_seq_new(kTVMFFIArray, 2) : NULL;
    TVMFFIAny x, y;
    if (pair != NULL) {
      wf_any_set_object(&x, lp);
      wf_any_set_object(&y, rp);
      if (wf_seq_push(pair, &x) != 0 || wf_seq_push(pair, &y) != 0) {
        wf_obj_decref(pair);
        pair = NULL;
      }
    }
    if (lp != NULL) wf_obj_decref(lp);
    if (rp != NULL) wf_obj_decref(rp);
    if (pair == NULL) rc = -1;
    *mismatch = pair;
  }
  wf_step_list_free(&c.lhs_path);
  wf_step_list_free(&c.rhs_path);
  if (c.callback != NULL) wf_obj_decref(c.callback);
  wf_memo_free(&c.pairs);
  wf_memo_free(&c.lhs_to_rhs);
  wf_memo_free(&c.rhs_to_lhs);
  return rc;
}

/* ------------------------------------------------------ global functions */
static const char* const wf_seq_types[] = {"Any", "Any", "bool", "bool"};
static const WebFFISignature wf_seq_sig = {"ffi.StructuralEqual", 4, wf_seq_types, "bool"};
static const WebFFISignature wf_mismatch_sig = {"ffi.GetFirstStructuralMismatch", 4, wf_seq_types,
                                                "Optional<Tuple<ffi.reflection.AccessPath, "
                                                "ffi.reflection.AccessPath>>"};

static int wf_seq_args(const WebFFISignature* sig, const TVMFFIAny* args, int32_t n, int* map_free,
                       int* skip) {
  return WebFFICheckNumArgs(sig, n) != 0 || WebFFIArgToBool(sig, args, 2, map_free) != 0 ||
                 WebFFIArgToBool(sig, args, 3, skip) != 0
             ? -1
             : 0;
}

static int wf_seq_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int map_free, skip;
  if (wf_seq_args(&wf_seq_sig, args, n, &map_free, &skip) != 0) return -1;
  int rc = wf_structural_equal_ex(&args[0], &args[1], map_free, skip, NULL);
  if (rc < 0) return -1;
  wf_any_set_bool(result, rc);
  return 0;
}

static int wf_mismatch_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int map_free, skip;
  if (wf_seq_args(&wf_mismatch_sig, args, n, &map_free, &skip) != 0) return -1;
  TVMFFIObject* pair;
  if (wf_structural_equal_ex(&args[0], &args[1], map_free, skip, &pair) < 0) return -1;
  if (pair == NULL) {
    wf_any_set_none(result);
  } else {
    wf_any_set_object(result, pair);
  }
  return 0;
}

int wf_structural_equal_register(void) {
  if (wf_global_register("ffi.StructuralEqual", wf_seq_global, NULL) != 0) return -1;
  return wf_global_register("ffi.GetFirstStructuralMismatch", wf_mismatch_global, NULL);
}
