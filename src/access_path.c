/* Access paths: a path is a chain of (parent, step) nodes up to a root of
 * depth 0, shared between the paths that extend it. */
#include "access_path.h"

#include <stddef.h>
#include <stdlib.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "buffer.h"
#include "error.h"
#include "function.h"
#include "object.h"
#include "reflect_def.h"
#include "seq.h"
#include "str.h"

static int32_t wf_step_index = -1, wf_path_index = -1;

int32_t wf_access_path_type_index(void) { return wf_path_index; }
int32_t wf_access_step_type_index(void) { return wf_step_index; }

static void wf_step_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) wf_any_release(&((wf_access_step*)self)->key);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

/* A long chain is released without recursing once per level: parents this
 * node holds the last reference to are unlinked here, one at a time. */
static void wf_path_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_access_path* p = (wf_access_path*)self;
    if (p->step != NULL) wf_obj_decref(p->step);
    TVMFFIObject* parent = p->parent;
    p->parent = p->step = NULL;
    while (parent != NULL && wf_obj_strong_count(parent) == 1) {
      wf_access_path* up = (wf_access_path*)parent;
      TVMFFIObject* next = up->parent;
      up->parent = NULL;
      wf_obj_decref(parent);
      parent = next;
    }
    if (parent != NULL) wf_obj_decref(parent);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

TVMFFIObject* wf_access_step_new(int32_t kind, const TVMFFIAny* key) {
  TVMFFIObject* obj = wf_obj_alloc(sizeof(wf_access_step), 8, wf_step_index, wf_step_deleter);
  if (obj == NULL) return NULL;
  wf_access_step* s = (wf_access_step*)obj;
  s->kind = kind;
  wf_any_set_none(&s->key);
  if (TVMFFIAnyViewToOwnedAny(key, &s->key) != 0) {
    wf_obj_decref(obj);
    return NULL;
  }
  return obj;
}

TVMFFIObject* wf_access_path_root(void) {
  return wf_obj_alloc(sizeof(wf_access_path), 8, wf_path_index, wf_path_deleter);
}

TVMFFIObject* wf_access_path_extend(TVMFFIObject* path, TVMFFIObject* step) {
  wf_access_path* base = (wf_access_path*)path;
  if (base->depth == INT32_MAX) {
    wf_err_raise("ValueError", "AccessPath: depth overflows int32");
    return NULL;
  }
  TVMFFIObject* obj = wf_obj_alloc(sizeof(wf_access_path), 8, wf_path_index, wf_path_deleter);
  if (obj == NULL) return NULL;
  wf_access_path* p = (wf_access_path*)obj;
  wf_obj_incref(path);
  wf_obj_incref(step);
  p->parent = path;
  p->step = step;
  p->depth = base->depth + 1;
  return obj;
}

static int wf_step_create(TVMFFIObjectHandle* out) {
  *out = wf_obj_alloc(sizeof(wf_access_step), 8, wf_step_index, wf_step_deleter);
  return *out != NULL ? 0 : -1;
}

static int wf_path_create(TVMFFIObjectHandle* out) {
  *out = wf_access_path_root();
  return *out != NULL ? 0 : -1;
}

/* ------------------------------------------------------------- methods */
static int wf_step_equal(TVMFFIObject* a, TVMFFIObject* b) {
  wf_access_step* x = (wf_access_step*)a;
  wf_access_step* y = (wf_access_step*)b;
  return a == b || (x->kind == y->kind && wf_any_equal(&x->key, &y->key));
}

static int wf_path_equal(TVMFFIObject* a, TVMFFIObject* b) {
  if (((wf_access_path*)a)->depth != ((wf_access_path*)b)->depth) return 0;
  /* Equal depths: walk both up together, stopping where they join. */
  while (a != b) {
    wf_access_path* x = (wf_access_path*)a;
    wf_access_path* y = (wf_access_path*)b;
    if (x->parent == NULL || y->parent == NULL) return x->parent == y->parent;
    if (!wf_step_equal(x->step, y->step)) return 0;
    a = x->parent;
    b = y->parent;
  }
  return 1;
}

static const char* const wf_path_types[] = {"ffi.reflection.AccessPath",
                                            "ffi.reflection.AccessPath"};
static const char* const wf_path_extend_types[] = {"ffi.reflection.AccessPath",
                                                   "ffi.reflection.AccessStep"};
static const char* const wf_path_str_types[] = {"ffi.reflection.AccessPath", "str"};
static const char* const wf_path_int_types[] = {"ffi.reflection.AccessPath", "int"};
static const char* const wf_path_any_types[] = {"ffi.reflection.AccessPath", "Any"};

static const WebFFISignature wf_sig_root = {"ffi.reflection.AccessPath._root", 0, NULL,
                                            "ffi.reflection.AccessPath"};
static const WebFFISignature wf_sig_extend = {"ffi.reflection.AccessPath._extend", 2,
                                              wf_path_extend_types, "ffi.reflection.AccessPath"};
static const WebFFISignature wf_sig_to_steps = {"ffi.reflection.AccessPath._to_steps", 1,
                                                wf_path_types, "Array<ffi.reflection.AccessStep>"};
static const WebFFISignature wf_sig_is_prefix = {"ffi.reflection.AccessPath._is_prefix_of", 2,
                                                 wf_path_types, "bool"};
static const WebFFISignature wf_sig_path_equal = {"ffi.reflection.AccessPath._path_equal", 2,
                                                  wf_path_types, "bool"};

typedef struct {
  WebFFISignature sig;
  int32_t kind;
} wf_path_step_method;

static const wf_path_step_method wf_step_methods[] = {
    {{"ffi.reflection.AccessPath._attr", 2, wf_path_str_types, "ffi.reflection.AccessPath"},
     WF_ACCESS_ATTR},
    {{"ffi.reflection.AccessPath._array_item", 2, wf_path_int_types, "ffi.reflection.AccessPath"},
     WF_ACCESS_ARRAY_ITEM},
    {{"ffi.reflection.AccessPath._map_item", 2, wf_path_any_types, "ffi.reflection.AccessPath"},
     WF_ACCESS_MAP_ITEM},
    {{"ffi.reflection.AccessPath._attr_missing", 2, wf_path_str_types,
      "ffi.reflection.AccessPath"},
     WF_ACCESS_ATTR_MISSING},
    {{"ffi.reflection.AccessPath._array_item_missing", 2, wf_path_int_types,
      "ffi.reflection.AccessPath"},
     WF_ACCESS_ARRAY_ITEM_MISSING},
    {{"ffi.reflection.AccessPath._map_item_missing", 2, wf_path_any_types,
      "ffi.reflection.AccessPath"},
     WF_ACCESS_MAP_ITEM_MISSING},
};

static int wf_path_self(const WebFFISignature* sig, const TVMFFIAny* args, int32_t n, int32_t i,
                        TVMFFIObject** out) {
  TVMFFIObjectHandle h;
  if ((i == 0 && WebFFICheckNumArgs(sig, n) != 0) ||
      WebFFIArgToObject(sig, args, i, wf_path_index, &h) != 0) {
    return -1;
  }
  *out = (TVMFFIObject*)h;
  return 0;
}

static int wf_path_set_result(TVMFFIObject* obj, TVMFFIAny* result) {
  if (obj == NULL) return -1;
  wf_any_set_object(result, obj);
  return 0;
}

static int wf_method_root(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  if (WebFFICheckNumArgs(&wf_sig_root, n) != 0) return -1;
  return wf_path_set_result(wf_access_path_root(), result);
}

static int wf_method_extend(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObject* path;
  TVMFFIObjectHandle step;
  if (wf_path_self(&wf_sig_extend, args, n, 0, &path) != 0 ||
      WebFFIArgToObject(&wf_sig_extend, args, 1, wf_step_index, &step) != 0) {
    return -1;
  }
  return wf_path_set_result(wf_access_path_extend(path, (TVMFFIObject*)step), result);
}

static int wf_method_step(const wf_path_step_method* m, const TVMFFIAny* args, int32_t n,
                          TVMFFIAny* result) {
  TVMFFIObject* path;
  if (wf_path_self(&m->sig, args, n, 0, &path) != 0) return -1;
  TVMFFIAny key = args[1];
  int64_t index;
  TVMFFIByteArray name;
  if (m->kind == WF_ACCESS_ATTR || m->kind == WF_ACCESS_ATTR_MISSING) {
    if (WebFFIArgToString(&m->sig, args, 1, &name) != 0) return -1;
  } else if (m->kind == WF_ACCESS_ARRAY_ITEM || m->kind == WF_ACCESS_ARRAY_ITEM_MISSING) {
    if (WebFFIArgToInt(&m->sig, args, 1, &index) != 0) return -1;
    wf_any_set_int(&key, index);
  }
  TVMFFIObject* step = wf_access_step_new(m->kind, &key);
  if (step == NULL) return -1;
  TVMFFIObject* out = wf_access_path_extend(path, step);
  wf_obj_decref(step);
  return wf_path_set_result(out, result);
}

#define WF_STEP_METHOD(fn, i)                                                         \
  static int fn(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {    \
    (void)self;                                                                       \
    return wf_method_step(&wf_step_methods[i], args, n, result);                      \
  }
WF_STEP_METHOD(wf_method_attr, 0)
WF_STEP_METHOD(wf_method_array_item, 1)
WF_STEP_METHOD(wf_method_map_item, 2)
WF_STEP_METHOD(wf_method_attr_missing, 3)
WF_STEP_METHOD(wf_method_array_item_missing, 4)
WF_STEP_METHOD(wf_method_map_item_missing, 5)

static int wf_method_to_steps(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObject* path;
  if (wf_path_self(&wf_sig_to_steps, args, n, 0, &path) != 0) return -1;
  int32_t depth = ((wf_access_path*)path)->depth;
  TVMFFIObject* arr = wf_seq_new(kTVMFFIArray, depth);
  if (arr == NULL) return -1;
  /* Filled from the end: the path links from its last step upwards. */
  TVMFFIAny none, step;
  wf_any_set_none(&none);
  for (int32_t i = 0; i < depth; ++i) {
    if (wf_seq_push(arr, &none) != 0) {
      wf_obj_decref(arr);
      return -1;
    }
  }
  TVMFFIObject* cur = path;
  for (int32_t i = depth - 1; i >= 0; --i) {
    wf_access_path* p = (wf_access_path*)cur;
    wf_any_set_object(&step, p->step);
    if (wf_seq_set(arr, i, &step) != 0) {
      wf_obj_decref(arr);
      return -1;
    }
    cur = p->parent;
  }
  wf_any_set_object(result, arr);
  return 0;
}

static int wf_method_path_equal(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObject *a, *b;
  if (wf_path_self(&wf_sig_path_equal, args, n, 0, &a) != 0 ||
      wf_path_self(&wf_sig_path_equal, args, n, 1, &b) != 0) {
    return -1;
  }
  wf_any_set_bool(result, wf_path_equal(a, b));
  return 0;
}

static int wf_method_is_prefix_of(void* self, const TVMFFIAny* args, int32_t n,
                                  TVMFFIAny* result) {
  (void)self;
  TVMFFIObject *a, *b;
  if (wf_path_self(&wf_sig_is_prefix, args, n, 0, &a) != 0 ||
      wf_path_self(&wf_sig_is_prefix, args, n, 1, &b) != 0) {
    return -1;
  }
  int32_t want = ((wf_access_path*)a)->depth;
  while (((wf_access_path*)b)->depth > want) b = ((wf_access_path*)b)->parent;
  wf_any_set_bool(result, ((wf_access_path*)b)->depth == want && wf_path_equal(a, b));
  return 0;
}

/* ------------------------------------------------------------- repr */
/* fn_repr(value) as text appended to out; 0 or -1. */
static int wf_repr_part(TVMFFIObject* fn_repr, const TVMFFIAny* value, wf_buf* out) {
  TVMFFIAny r;
  wf_any_set_none(&r);
  if (wf_func_call(fn_repr, value, 1, &r) != 0) return -1;
  TVMFFIByteArray text;
  int ok = wf_any_string_view(&r, &text);
  if (ok) wf_buf_append(out, text.data, text.size);
  wf_any_release(&r);
  return ok ? 0 : wf_err_raise("TypeError", "fn_repr must return a str");
}

/* One step as upstream prints it: .name, [index], [key], [<missing:...>]. */
static int wf_step_text(TVMFFIObject* step, TVMFFIObject* fn_repr, wf_buf* out) {
  wf_access_step* s = (wf_access_step*)step;
  TVMFFIByteArray name;
  switch (s->kind) {
    case WF_ACCESS_ATTR:
      if (!wf_any_string_view(&s->key, &name)) break;
      wf_buf_puts(out, ".");
      wf_buf_append(out, name.data, name.size);
      return 0;
    case WF_ACCESS_ARRAY_ITEM:
    case WF_ACCESS_ARRAY_ITEM_MISSING:
      if (s->key.type_index != kTVMFFIInt) break;
      wf_buf_printf(out, s->kind == WF_ACCESS_ARRAY_ITEM ? "[%lld]" : "[<missing:%lld>]",
                    (long long)s->key.v_int64);
      return 0;
    case WF_ACCESS_MAP_ITEM:
      wf_buf_puts(out, "[");
      if (wf_repr_part(fn_repr, &s->key, out) != 0) return -1;
      wf_buf_puts(out, "]");
      return 0;
    case WF_ACCESS_ATTR_MISSING:
    case WF_ACCESS_MAP_ITEM_MISSING:
      wf_buf_puts(out, "[<missing:");
      if (wf_repr_part(fn_repr, &s->key, out) != 0) return -1;
      wf_buf_puts(out, ">]");
      return 0;
    default: break;
  }
  return wf_err_raise("ValueError", "AccessStep: kind %d does not fit its key", (int)s->kind);
}

static const char* const wf_step_repr_types[] = {"ffi.reflection.AccessStep", "ffi.Function"};
static const char* const wf_path_repr_types[] = {"ffi.reflection.AccessPath", "ffi.Function"};
static const WebFFISignature wf_step_repr_sig = {"ffi.reflection.AccessStep.__ffi_repr__", 2,
                                                 wf_step_repr_types, "str"};
static const WebFFISignature wf_path_repr_sig = {"ffi.reflection.AccessPath.__ffi_repr__", 2,
                                                 wf_path_repr_types, "str"};

static int wf_repr_finish(wf_buf* out, int rc, TVMFFIAny* result) {
  if (rc == 0) {
    rc = out->failed ? wf_err_raise_oom(out->capacity * 2)
                     : wf_str_make(0, out->data != NULL ? out->data : "", out->size, result);
  }
  wf_buf_free(out);
  return rc;
}

static int wf_step_repr(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle step, fn;
  if (WebFFICheckNumArgs(&wf_step_repr_sig, n) != 0 ||
      WebFFIArgToObject(&wf_step_repr_sig, args, 0, wf_step_index, &step) != 0 ||
      WebFFIArgToObject(&wf_step_repr_sig, args, 1, kTVMFFIFunction, &fn) != 0) {
    return -1;
  }
  wf_buf out = {0};
  return wf_repr_finish(&out, wf_step_text(step, fn, &out), result);
}

/* <root> then every step, from the root down. */
static int wf_path_repr(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle path, fn;
  if (WebFFICheckNumArgs(&wf_path_repr_sig, n) != 0 ||
      WebFFIArgToObject(&wf_path_repr_sig, args, 0, wf_path_index, &path) != 0 ||
      WebFFIArgToObject(&wf_path_repr_sig, args, 1, kTVMFFIFunction, &fn) != 0) {
    return -1;
  }
  int32_t depth = ((wf_access_path*)path)->depth;
  TVMFFIObject** steps = (TVMFFIObject**)malloc(((size_t)depth + 1) * sizeof(TVMFFIObject*));
  if (steps == NULL) return wf_err_raise_oom(((size_t)depth + 1) * sizeof(TVMFFIObject*));
  TVMFFIObject* cur = (TVMFFIObject*)path;
  for (int32_t i = depth - 1; i >= 0; --i) {
    steps[i] = ((wf_access_path*)cur)->step;
    cur = ((wf_access_path*)cur)->parent;
  }
  wf_buf out = {0};
  wf_buf_puts(&out, "<root>");
  int rc = 0;
  for (int32_t i = 0; rc == 0 && i < depth; ++i) rc = wf_step_text(steps[i], fn, &out);
  free(steps);
  return wf_repr_finish(&out, rc, result);
}

int wf_access_path_register(void) {
  if (wf_path_index >= 0) return 0;
  int32_t step = wf_def_type("ffi.reflection.AccessStep", -1, kTVMFFIObject,
                             sizeof(wf_access_step), kTVMFFISEqHashKindConstTreeNode,
                             wf_step_create);
  int32_t path = step < 0 ? -1
                          : wf_def_type("ffi.reflection.AccessPath", -1, kTVMFFIObject,
                                        sizeof(wf_access_path), kTVMFFISEqHashKindConstTreeNode,
                                        wf_path_create);
  if (path < 0) return -1;
  wf_step_index = step;
  wf_path_index = path;
  if (wf_def_field(step, "kind", offsetof(wf_access_step, kind), WF_DEF_INT32, 0) != 0 ||
      wf_def_field(step, "key", offsetof(wf_access_step, key), WF_DEF_ANY, 0) != 0 ||
      wf_def_field(path, "parent", offsetof(wf_access_path, parent), WF_DEF_OBJ, 0) != 0 ||
      wf_def_field(path, "step", offsetof(wf_access_path, step), WF_DEF_OBJ, 0) != 0 ||
      wf_def_field(path, "depth", offsetof(wf_access_path, depth), WF_DEF_INT32, 0) != 0) {
    return -1;
  }
  static const struct {
    const char* name;
    TVMFFISafeCallType fn;
    int is_static;
  } methods[] = {
      {"_root", wf_method_root, 1},
      {"_extend", wf_method_extend, 0},
      {"_attr", wf_method_attr, 0},
      {"_array_item", wf_method_array_item, 0},
      {"_map_item", wf_method_map_item, 0},
      {"_attr_missing", wf_method_attr_missing, 0},
      {"_array_item_missing", wf_method_array_item_missing, 0},
      {"_map_item_missing", wf_method_map_item_missing, 0},
      {"_is_prefix_of", wf_method_is_prefix_of, 0},
      {"_to_steps", wf_method_to_steps, 0},
      {"_path_equal", wf_method_path_equal, 0},
  };
  for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); ++i) {
    if (wf_def_method(path, methods[i].name, methods[i].fn, methods[i].is_static) != 0) return -1;
  }
  if (wf_def_attr_column("__ffi_repr__") != 0 ||
      wf_def_attr_func(step, "__ffi_repr__", wf_step_repr) != 0) {
    return -1;
  }
  return wf_def_attr_func(path, "__ffi_repr__", wf_path_repr);
}
