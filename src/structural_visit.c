/* Structural visits (src/structural_visit.h) and ffi.StructuralWalk, the
 * callback walk built on them. A walk visits each object once, however many
 * paths reach it (a DAG is not unfolded), and stops at WF_MAX_NESTING. */
#include "structural_visit.h"

#include <stddef.h>
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
#include "reflect_def.h"
#include "reflection.h"
#include "runtime_init.h"
#include "seq.h"
#include "type_registry.h"

typedef struct {
  TVMFFIObject header;
  TVMFFIAny value;
} wf_visit_interrupt;

static int32_t wf_visitor_index = -1;

static void wf_interrupt_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_any_release(&((wf_visit_interrupt*)self)->value);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

static int wf_interrupt_create(TVMFFIObjectHandle* out) {
  *out = wf_obj_alloc(sizeof(wf_visit_interrupt), 8, kTVMFFIVisitInterrupt, wf_interrupt_deleter);
  return *out != NULL ? 0 : -1;
}

/* The raised error as a visit result (an owned Error in an Any). */
static TVMFFIAny wf_visit_failed(void) {
  TVMFFIAny r;
  wf_any_set_none(&r);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) wf_any_set_object(&r, (TVMFFIObject*)err);
  return r;
}

static int wf_visit_stops(const TVMFFIAny* r) {
  return r->type_index == kTVMFFIError || r->type_index == kTVMFFIVisitInterrupt;
}

static TVMFFIAny wf_visit_none(void) {
  TVMFFIAny r;
  wf_any_set_none(&r);
  return r;
}

/* ------------------------------------------- children, per kind of value */
static TVMFFIAny wf_visit_seq(wf_visitor* v, TVMFFIAny value) {
  TVMFFIObject* seq = value.v_obj;
  for (int64_t i = 0; i < wf_seq_size(seq); ++i) {
    TVMFFIAny r = v->vtable->visit(v, wf_seq_data(seq)[i]);
    if (wf_visit_stops(&r)) return r;
    wf_any_release(&r);
  }
  return wf_visit_none();
}

static TVMFFIAny wf_visit_map(wf_visitor* v, TVMFFIAny value) {
  int64_t pos = 0;
  for (wf_map_entry* e; (e = wf_map_next(value.v_obj, &pos)) != NULL;) {
    TVMFFIAny r = v->vtable->visit(v, e->key);
    if (!wf_visit_stops(&r)) {
      wf_any_release(&r);
      r = v->vtable->visit(v, e->value);
    }
    if (wf_visit_stops(&r)) return r;
    wf_any_release(&r);
  }
  return wf_visit_none();
}

typedef struct {
  wf_visitor* v;
  TVMFFIObject* obj;
  int32_t inherited;
  TVMFFIAny result;
} wf_visit_fields;

static int wf_visit_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_visit_fields* f = (wf_visit_fields*)ctx;
  if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashIgnore) return 0;
  TVMFFIAny x;
  wf_any_set_none(&x);
  if (wf_reflect_get(f->obj, field, &x) != 0) {
    f->result = wf_visit_failed();
    return 1;
  }
  int32_t kind = f->inherited;
  if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashDefNonRecursive) {
    kind = kTVMFFIDefRegionKindNonRecursive;
  } else if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashDefRecursive) {
    kind = kTVMFFIDefRegionKindRecursive;
  }
  int32_t saved = f->v->def_region_mode;
  f->v->def_region_mode = kind;
  f->result = f->v->vtable->visit(f->v, x);
  f->v->def_region_mode = saved;
  wf_any_release(&x);
  if (wf_visit_stops(&f->result)) return 1;
  wf_any_release(&f->result);
  return 0;
}

/* Reflected fields, with the definition regions their flags open. */
static TVMFFIAny wf_visit_reflected(wf_visitor* v, TVMFFIObject* obj) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj->type_index);
  wf_visit_fields f = {v, obj, v->def_region_mode, wf_visit_none()};
  if (f.inherited == kTVMFFIDefRegionKindNonRecursive && info != NULL && info->metadata != NULL &&
      info->metadata->structural_eq_hash_kind == kTVMFFISEqHashKindFreeVar) {
    f.inherited = kTVMFFIDefRegionKindNone;
  }
  wf_reflect_visit_fields(obj->type_index, wf_visit_field, &f);
  return f.result;
}

/* Upstream's DefaultVisitExpected: the type's __s_visit__ hook, else the
 * reflected fields. */
static TVMFFIAny wf_visit_default(wf_visitor* v, TVMFFIAny value) {
  static const TVMFFIByteArray name = {"__s_visit__", 11};
  const TVMFFIAny* attr = wf_reflect_attr(value.type_index, &name);
  if (attr != NULL && attr->type_index == kTVMFFIOpaquePtr) {
    return ((wf_visit_fn)(uintptr_t)attr->v_ptr)(v, value);
  }
  if (attr != NULL && attr->type_index == kTVMFFIFunction) {
    TVMFFIAny args[2], r;
    wf_any_set_object(&args[0], &v->header);
    args[1] = value;
    wf_any_set_none(&r);
    if (wf_func_call(attr->v_obj, args, 2, &r) != 0) return wf_visit_failed();
    return r;
  }
  if (attr != NULL && attr->type_index != kTVMFFINone) {
    wf_err_raise("TypeError", "__s_visit__ must be an opaque function pointer or ffi.Function");
    return wf_visit_failed();
  }
  if (value.type_index < kTVMFFIStaticObjectBegin) return wf_visit_none();
  return wf_visit_reflected(v, value.v_obj);
}

/* ------------------------------------------------------------- the walk */
typedef struct {
  wf_visitor base;
  TVMFFIObject* callbacks;           /* Array<Tuple<int, Function>>: callback(value) */
  TVMFFIObject* callbacks_with_kind; /* callback(value, def_region_kind) */
  int post_order;
  int depth;
  wf_memo seen;
} wf_walker;

/* Records the node in the error's VisitErrorContext (upstream's
 * UpdateVisitErrorContext), so ffi.VisitErrorContext.FindAccessPaths can
 * name where it failed. Best effort: the error stands either way. */
static void wf_walk_note_error(TVMFFIAny* err, const TVMFFIAny* node) {
  if (err->type_index != kTVMFFIError || !wf_any_is_object(node)) return;
  TVMFFIErrorCell* cell = WF_OBJ_CELL(err->v_obj, TVMFFIErrorCell);
  static int32_t context_index = -2;
  if (context_index == -2) {
    TVMFFIByteArray key = {"ffi.VisitErrorContext", 21};
    if (TVMFFITypeKeyToIndex(&key, &context_index) != 0) {
      TVMFFIObjectHandle ignored = NULL;
      TVMFFIErrorMoveFromRaised(&ignored);
      if (ignored != NULL) TVMFFIObjectDecRef(ignored);
      context_index = -1;
    }
  }
  if (context_index < 0) return;
  TVMFFIObject* ctx = (TVMFFIObject*)cell->extra_context;
  if (ctx == NULL || ctx->type_index != context_index) {
    TVMFFIObjectHandle fresh;
    int (*creator)(TVMFFIObjectHandle*) = wf_reflect_creator(context_index);
    if (creator == NULL || creator(&fresh) != 0) return;
    /* the previous context, if any, is kept as prev_error_context */
    ((TVMFFIObject**)((char*)fresh + sizeof(TVMFFIObject)))[1] = ctx;
    cell->extra_context = fresh;
    ctx = (TVMFFIObject*)fresh;
  }
  TVMFFIObject* pattern = ((TVMFFIObject**)((char*)ctx + sizeof(TVMFFIObject)))[0];
  if (pattern != NULL && wf_seq_push(pattern, node) != 0) {
    TVMFFIObjectHandle ignored = NULL;
    TVMFFIErrorMoveFromRaised(&ignored);
    if (ignored != NULL) TVMFFIObjectDecRef(ignored);
  }
}

/* The first callback whose type matches: Advance (None or 0), Skip (1) or
 * an interrupt/error to stop with. */
static TVMFFIAny wf_walk_dispatch(wf_walker* w, const TVMFFIAny* value) {
  TVMFFIObject* lists[2] = {w->callbacks, w->callbacks_with_kind};
  for (int l = 0; l < 2; ++l) {
    for (int64_t i = 0; lists[l] != NULL && i < wf_seq_size(lists[l]); ++i) {
      TVMFFIObject* entry = wf_seq_data(lists[l])[i].v_obj;
      int32_t type_index = (int32_t)wf_seq_data(entry)[0].v_int64;
      if (!wf_type_is_instance(value->type_index, type_index)) continue;
      TVMFFIAny args[2], r;
      args[0] = *value;
      wf_any_set_int(&args[1], w->base.def_region_mode);
      wf_any_set_none(&r);
      if (wf_func_call(wf_seq_data(entry)[1].v_obj, args, l + 1, &r) != 0) return wf_visit_failed();
      if (r.type_index == kTVMFFINone || r.type_index == kTVMFFIInt ||
          r.type_index == kTVMFFIVisitInterrupt) {
        return r;
      }
      wf_any_release(&r);
      wf_err_raise("TypeError", "StructuralWalk: a callback must return a WalkResult");
      return wf_visit_failed();
    }
  }
  return wf_visit_none();
}

static TVMFFIAny wf_walk_visit(wf_visitor* self, TVMFFIAny value) {
  wf_walker* w = (wf_walker*)self;
  if (value.type_index == kTVMFFINone) return wf_visit_none();
  if (wf_any_is_object(&value)) {
    if (wf_memo_find(&w->seen, value.v_obj, NULL) != NULL) return wf_visit_none();
    if (wf_memo_put(&w->seen, value.v_obj, NULL) == NULL) return wf_visit_failed();
  }
  if (w->depth >= WF_MAX_NESTING) {
    wf_err_raise("ValueError", "StructuralWalk: nesting deeper than %d levels", WF_MAX_NESTING);
    return wf_visit_failed();
  }
  TVMFFIAny r;
  if (!w->post_order) {
    r = wf_walk_dispatch(w, &value);
    if (wf_visit_stops(&r)) {
      wf_walk_note_error(&r, &value);
      return r;
    }
    if (r.type_index == kTVMFFIInt && r.v_int64 == 1) return wf_visit_none(); /* Skip */
  }
  ++w->depth;
  r = wf_visit_default(self, value);
  --w->depth;
  if (wf_visit_stops(&r)) {
    wf_walk_note_error(&r, &value);
    return r;
  }
  if (w->post_order) {
    r = wf_walk_dispatch(w, &value);
    if (wf_visit_stops(&r)) {
      wf_walk_note_error(&r, &value);
      return r;
    }
  }
  return wf_visit_none();
}

static const wf_visitor_vtable wf_walk_vtable = {wf_walk_visit};

static void wf_walker_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) wf_memo_free(&((wf_walker*)self)->seen);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

/* Array<Tuple<int, Function>>, checked before the walk relies on it. */
static int wf_walk_check_callbacks(const TVMFFIAny* v, int i) {
  int ok = v->type_index == kTVMFFIArray;
  for (int64_t k = 0; ok && k < wf_seq_size(v->v_obj); ++k) {
    const TVMFFIAny* e = &wf_seq_data(v->v_obj)[k];
    ok = e->type_index == kTVMFFIArray && wf_seq_size(e->v_obj) == 2 &&
         wf_seq_data(e->v_obj)[0].type_index == kTVMFFIInt &&
         wf_seq_data(e->v_obj)[1].type_index == kTVMFFIFunction;
  }
  return ok ? 0
            : wf_err_raise("TypeError",
                           "ffi.StructuralWalk: argument #%d must be an Array of (type_index, "
                           "Function) pairs",
                           i);
}

static const char* const wf_walk_types[] = {"Any", "Array<Tuple<int, ffi.Function>>",
                                            "Array<Tuple<int, ffi.Function>>", "int"};
static const WebFFISignature wf_walk_sig = {"ffi.StructuralWalk", 4, wf_walk_types,
                                            "Optional<ffi.VisitInterrupt>"};

static int wf_walk_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int64_t order;
  if (WebFFICheckNumArgs(&wf_walk_sig, n) != 0 || wf_walk_check_callbacks(&args[1], 1) != 0 ||
      wf_walk_check_callbacks(&args[2], 2) != 0 || WebFFIArgToInt(&wf_walk_sig, args, 3, &order) != 0) {
    return -1;
  }
  TVMFFIObject* obj = wf_obj_alloc(sizeof(wf_walker), 8, wf_visitor_index, wf_walker_deleter);
  if (obj == NULL) return -1;
  wf_walker* w = (wf_walker*)obj;
  w->base.vtable = &wf_walk_vtable;
  w->callbacks = args[1].v_obj;
  w->callbacks_with_kind = args[2].v_obj;
  w->post_order = order == 1;
  TVMFFIAny r = wf_walk_visit(&w->base, args[0]);
  wf_obj_decref(obj);
  if (r.type_index == kTVMFFIError) {
    TVMFFIErrorSetRaised(r.v_obj);
    wf_any_release(&r);
    return -1;
  }
  *result = r;
  return 0;
}

/* ------------------------------------------------- visitor functions */
static const char* const wf_visitor_types[] = {"ffi.StructuralVisitor", "Any", "ffi.Function"};
static const char* const wf_visitor_kind_types[] = {"ffi.StructuralVisitor", "int", "ffi.Function"};
static const WebFFISignature wf_visit_sig = {"ffi.StructuralVisitorVisit", 2, wf_visitor_types,
                                             "Optional<ffi.VisitInterrupt>"};
static const WebFFISignature wf_kind_sig = {"ffi.StructuralVisitorDefRegionKind", 1,
                                            wf_visitor_types, "int"};
static const WebFFISignature wf_with_kind_sig = {"ffi.StructuralVisitorWithDefRegionKind", 3,
                                                 wf_visitor_kind_types, "Any"};
static const char* const wf_interrupt_types[] = {"Any"};
static const WebFFISignature wf_interrupt_sig = {"ffi.VisitInterrupt", 1, wf_interrupt_types,
                                                 "ffi.VisitInterrupt"};

static int wf_visitor_arg(const WebFFISignature* sig, const TVMFFIAny* args, int32_t n,
                          wf_visitor** out) {
  TVMFFIObjectHandle h;
  if (WebFFICheckNumArgs(sig, n) != 0 ||
      WebFFIArgToObject(sig, args, 0, wf_visitor_index, &h) != 0) {
    return -1;
  }
  *out = (wf_visitor*)h;
  return 0;
}

static int wf_visitor_visit_global(void* self, const TVMFFIAny* args, int32_t n,
                                   TVMFFIAny* result) {
  (void)self;
  wf_visitor* v;
  if (wf_visitor_arg(&wf_visit_sig, args, n, &v) != 0) return -1;
  TVMFFIAny r = v->vtable->visit(v, args[1]);
  if (r.type_index == kTVMFFIError) {
    TVMFFIErrorSetRaised(r.v_obj);
    wf_any_release(&r);
    return -1;
  }
  *result = r;
  return 0;
}

static int wf_visitor_kind_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  wf_visitor* v;
  if (wf_visitor_arg(&wf_kind_sig, args, n, &v) != 0) return -1;
  wf_any_set_int(result, v->def_region_mode);
  return 0;
}

static int wf_visitor_with_kind_global(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  (void)self;
  wf_visitor* v;
  int64_t kind;
  TVMFFIObjectHandle callback;
  if (wf_visitor_arg(&wf_with_kind_sig, args, n, &v) != 0 ||
      WebFFIArgToInt(&wf_with_kind_sig, args, 1, &kind) != 0 ||
      WebFFIArgToObject(&wf_with_kind_sig, args, 2, kTVMFFIFunction, &callback) != 0) {
    return -1;
  }
  if (kind < kTVMFFIDefRegionKindNone || kind > kTVMFFIDefRegionKindNonRecursive) {
    return wf_err_raise("ValueError", "ffi.StructuralVisitorWithDefRegionKind: unknown kind %lld",
                        (long long)kind);
  }
  int32_t saved = v->def_region_mode;
  v->def_region_mode = (int32_t)kind;
  int rc = wf_func_call((TVMFFIObject*)callback, NULL, 0, result);
  v->def_region_mode = saved;
  return rc;
}

static int wf_interrupt_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle obj;
  if (WebFFICheckNumArgs(&wf_interrupt_sig, n) != 0 || wf_interrupt_create(&obj) != 0) return -1;
  if (TVMFFIAnyViewToOwnedAny(&args[0], &((wf_visit_interrupt*)obj)->value) != 0) {
    wf_obj_decref((TVMFFIObject*)obj);
    return -1;
  }
  wf_any_set_object(result, (TVMFFIObject*)obj);
  return 0;
}

int wf_structural_visit_register(void) {
  if (wf_visitor_index >= 0) return 0;
  int32_t interrupt =
      wf_def_type("ffi.VisitInterrupt", kTVMFFIVisitInterrupt, kTVMFFIObject,
                  sizeof(wf_visit_interrupt), kTVMFFISEqHashKindTreeNode, wf_interrupt_create);
  /* Visitors are made by code that implements one (no creator). */
  int32_t visitor = interrupt < 0 ? -1
                                  : wf_def_type("ffi.StructuralVisitor", -1, kTVMFFIObject,
                                                sizeof(wf_visitor), kTVMFFISEqHashKindUnsupported,
                                                NULL);
  if (visitor < 0) return -1;
  wf_visitor_index = visitor;
  if (wf_def_field(interrupt, "value", offsetof(wf_visit_interrupt, value), WF_DEF_ANY, 0) != 0 ||
      wf_def_attr_column("__s_visit__") != 0 ||
      wf_def_attr_ptr(kTVMFFIArray, "__s_visit__", (void*)(uintptr_t)wf_visit_seq) != 0 ||
      wf_def_attr_ptr(kTVMFFIList, "__s_visit__", (void*)(uintptr_t)wf_visit_seq) != 0 ||
      wf_def_attr_ptr(kTVMFFIMap, "__s_visit__", (void*)(uintptr_t)wf_visit_map) != 0 ||
      wf_def_attr_ptr(kTVMFFIDict, "__s_visit__", (void*)(uintptr_t)wf_visit_map) != 0) {
    return -1;
  }
  static const struct {
    const char* name;
    TVMFFISafeCallType fn;
  } fns[] = {
      {"ffi.VisitInterrupt", wf_interrupt_global},
      {"ffi.StructuralVisitorVisit", wf_visitor_visit_global},
      {"ffi.StructuralVisitorDefRegionKind", wf_visitor_kind_global},
      {"ffi.StructuralVisitorWithDefRegionKind", wf_visitor_with_kind_global},
      {"ffi.StructuralWalk", wf_walk_global},
  };
  for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); ++i) {
    if (wf_global_register(fns[i].name, fns[i].fn, NULL) != 0) return -1;
  }
  return 0;
}
