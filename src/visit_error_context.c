/* ffi.VisitErrorContext (the nodes an error passed through on its way out
 * of a structural visit, innermost first) and
 * ffi.VisitErrorContext.FindAccessPaths(root, context, allow_prefix_match):
 * the access paths from root along which those nodes occur in order.
 * Bounded: nesting stops at WF_MAX_NESTING, and a node reached again with
 * the same part of the pattern matched is not searched again (so a DAG
 * costs one visit per node and pattern position, not one per path). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "access_path.h"
#include "any.h"
#include "error.h"
#include "global_registry.h"
#include "map.h"
#include "memo.h"
#include "nesting.h"
#include "object.h"
#include "reflect_def.h"
#include "reflection.h"
#include "runtime_init.h"
#include "seq.h"
#include "str.h"

typedef struct {
  TVMFFIObject header;
  TVMFFIObject* reverse_visit_pattern; /* List<Object> */
  TVMFFIObject* prev_error_context;    /* Optional<Object> */
} wf_visit_error_context;

static int32_t wf_vec_index = -1;

static void wf_vec_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_visit_error_context* c = (wf_visit_error_context*)self;
    if (c->reverse_visit_pattern != NULL) wf_obj_decref(c->reverse_visit_pattern);
    if (c->prev_error_context != NULL) wf_obj_decref(c->prev_error_context);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

static int wf_vec_create(TVMFFIObjectHandle* out) {
  TVMFFIObject* obj = wf_obj_alloc(sizeof(wf_visit_error_context), 8, wf_vec_index, wf_vec_deleter);
  if (obj == NULL) return -1;
  if ((((wf_visit_error_context*)obj)->reverse_visit_pattern = wf_seq_new(kTVMFFIList, 0)) == NULL) {
    wf_obj_decref(obj);
    return -1;
  }
  *out = obj;
  return 0;
}

/* ---------------------------------------------------------- the search */
typedef struct {
  TVMFFIObject** records; /* the pattern, innermost first, repeats folded */
  size_t num_records;
  size_t matched; /* records matched on the way down, from the outermost */
  int allow_prefix;
  TVMFFIObject** paths; /* paths[i]: the path after i + 1 steps down */
  size_t depth;
  TVMFFIObject* results; /* Array<AccessPath> */
  wf_memo seen;          /* (node, matched) searched */
} wf_find_ctx;

static int wf_find_any(wf_find_ctx* c, const TVMFFIAny* v);

static TVMFFIObject* wf_find_current(wf_find_ctx* c) {
  return c->depth == 0 ? NULL : c->paths[c->depth - 1];
}

static int wf_find_emit(wf_find_ctx* c) {
  TVMFFIObject* path = wf_find_current(c);
  TVMFFIAny v;
  if (path == NULL) {
    if ((path = wf_access_path_root()) == NULL) return -1;
    wf_any_set_object(&v, path);
    return wf_seq_push_owned(c->results, &v);
  }
  wf_any_set_object(&v, path);
  return wf_seq_push(c->results, &v);
}

static int wf_find_push(wf_find_ctx* c, int32_t kind, const TVMFFIAny* key) {
  if (c->depth >= WF_MAX_NESTING) {
    return wf_err_raise("ValueError",
                        "ffi.VisitErrorContext.FindAccessPaths: nesting deeper than %d levels",
                        WF_MAX_NESTING);
  }
  TVMFFIObject* parent = wf_find_current(c);
  TVMFFIObject* root = NULL;
  if (parent == NULL && (parent = root = wf_access_path_root()) == NULL) return -1;
  TVMFFIObject* step = wf_access_step_new(kind, key);
  TVMFFIObject* path = step != NULL ? wf_access_path_extend(parent, step) : NULL;
  if (step != NULL) wf_obj_decref(step);
  if (root != NULL) wf_obj_decref(root);
  if (path == NULL) return -1;
  c->paths[c->depth++] = path;
  return 0;
}

static void wf_find_pop(wf_find_ctx* c) { wf_obj_decref(c->paths[--c->depth]); }

typedef struct {
  wf_find_ctx* c;
  TVMFFIObject* obj;
} wf_find_fields;

static int wf_find_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_find_fields* f = (wf_find_fields*)ctx;
  TVMFFIAny value, name;
  wf_any_set_none(&value);
  if (wf_reflect_get(f->obj, field, &value) != 0) return -1;
  int rc = wf_str_make(0, field->name.data, field->name.size, &name);
  if (rc == 0) {
    rc = wf_find_push(f->c, WF_ACCESS_ATTR, &name);
    wf_any_release(&name);
  }
  if (rc == 0) {
    rc = wf_find_any(f->c, &value);
    wf_find_pop(f->c);
  }
  wf_any_release(&value);
  return rc;
}

static int wf_find_children(wf_find_ctx* c, TVMFFIObject* obj) {
  int32_t t = obj->type_index;
  if (t == kTVMFFIArray || t == kTVMFFIList) {
    for (int64_t i = 0; i < wf_seq_size(obj); ++i) {
      if (wf_seq_data(obj)[i].type_index == kTVMFFINone) continue;
      TVMFFIAny key;
      wf_any_set_int(&key, i);
      if (wf_find_push(c, WF_ACCESS_ARRAY_ITEM, &key) != 0) return -1;
      int rc = wf_find_any(c, &wf_seq_data(obj)[i]);
      wf_find_pop(c);
      if (rc != 0) return -1;
    }
    return 0;
  }
  if (t == kTVMFFIMap || t == kTVMFFIDict) {
    int64_t pos = 0;
    for (wf_map_entry* e; (e = wf_map_next(obj, &pos)) != NULL;) {
      if (e->key.type_index == kTVMFFINone || e->value.type_index == kTVMFFINone) continue;
      if (wf_find_push(c, WF_ACCESS_MAP_ITEM, &e->key) != 0) return -1;
      int rc = wf_find_any(c, &e->value);
      wf_find_pop(c);
      if (rc != 0) return -1;
    }
    return 0;
  }
  wf_find_fields f = {c, obj};
  return wf_reflect_visit_fields(t, wf_find_field, &f);
}

/* Containers take part in the pattern too (a walk records them on the way
 * out as it does other nodes); other objects need reflection metadata. */
static int wf_find_node(wf_find_ctx* c, TVMFFIObject* obj) {
  int32_t t = obj->type_index;
  int container = t == kTVMFFIArray || t == kTVMFFIList || t == kTVMFFIMap || t == kTVMFFIDict;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(t);
  if (!container && (info == NULL || info->metadata == NULL)) return 0;
  int matched = c->matched < c->num_records && obj == c->records[c->num_records - 1 - c->matched];
  if (matched && ++c->matched == c->num_records) {
    --c->matched;
    return wf_find_emit(c);
  }
  int rc = 0;
  const void* state = (const void*)(uintptr_t)(c->matched + 1);
  if (wf_memo_find(&c->seen, obj, state) == NULL) {
    if (wf_memo_put(&c->seen, obj, state) == NULL) {
      rc = -1;
    } else {
      int64_t before = wf_seq_size(c->results);
      rc = wf_find_children(c, obj);
      /* A partial match ends at the deepest object on the way (containers
       * only lead there). */
      if (rc == 0 && !container && c->allow_prefix && c->matched > 0 &&
          c->matched < c->num_records && c->depth > 0 && wf_seq_size(c->results) == before) {
        rc = wf_find_emit(c);
      }
    }
  }
  if (matched) --c->matched;
  return rc;
}

static int wf_find_any(wf_find_ctx* c, const TVMFFIAny* v) {
  return v->type_index >= kTVMFFIStaticObjectBegin ? wf_find_node(c, v->v_obj) : 0;
}

static const char* const wf_find_types[] = {"ffi.Object", "ffi.VisitErrorContext", "bool"};
static const WebFFISignature wf_find_sig = {"ffi.VisitErrorContext.FindAccessPaths", 3,
                                            wf_find_types, "Array<ffi.reflection.AccessPath>"};

static int wf_find_access_paths(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle root, context;
  int allow_prefix;
  if (WebFFICheckNumArgs(&wf_find_sig, n) != 0 ||
      WebFFIArgToObject(&wf_find_sig, args, 0, kTVMFFIObject, &root) != 0 ||
      WebFFIArgToObject(&wf_find_sig, args, 1, wf_vec_index, &context) != 0 ||
      WebFFIArgToBool(&wf_find_sig, args, 2, &allow_prefix) != 0) {
    return -1;
  }
  TVMFFIObject* pattern = ((wf_visit_error_context*)context)->reverse_visit_pattern;
  int64_t size = pattern != NULL && (pattern->type_index == kTVMFFIList ||
                                     pattern->type_index == kTVMFFIArray)
                     ? wf_seq_size(pattern)
                     : 0;
  wf_find_ctx c;
  memset(&c, 0, sizeof(c));
  c.allow_prefix = allow_prefix;
  c.records = (TVMFFIObject**)malloc((size_t)(size > 0 ? size : 1) * sizeof(TVMFFIObject*));
  c.paths = (TVMFFIObject**)malloc(WF_MAX_NESTING * sizeof(TVMFFIObject*));
  c.results = wf_seq_new(kTVMFFIArray, 0);
  int rc = c.records == NULL || c.paths == NULL ? wf_err_raise_oom(WF_MAX_NESTING * sizeof(void*))
           : c.results == NULL                  ? -1
                                                : 0;
  for (int64_t i = 0; rc == 0 && i < size; ++i) {
    const TVMFFIAny* e = &wf_seq_data(pattern)[i];
    if (!(e->type_index >= kTVMFFIStaticObjectBegin)) continue;
    if (c.num_records > 0 && c.records[c.num_records - 1] == e->v_obj) continue;
    c.records[c.num_records++] = e->v_obj;
  }
  if (rc == 0) {
    TVMFFIAny r;
    wf_any_set_object(&r, (TVMFFIObject*)root);
    rc = wf_find_any(&c, &r);
  }
  while (c.depth > 0) wf_find_pop(&c);
  free(c.records);
  free(c.paths);
  wf_memo_free(&c.seen);
  if (rc != 0) {
    if (c.results != NULL) wf_obj_decref(c.results);
    return -1;
  }
  wf_any_set_object(result, c.results);
  return 0;
}

int wf_visit_error_context_register(void) {
  if (wf_vec_index >= 0) return 0;
  int32_t t = wf_def_type("ffi.VisitErrorContext", -1, kTVMFFIObject,
                          sizeof(wf_visit_error_context), kTVMFFISEqHashKindUnsupported,
                          wf_vec_create);
  if (t < 0) return -1;
  wf_vec_index = t;
  if (wf_def_field(t, "reverse_visit_pattern", offsetof(wf_visit_error_context, reverse_visit_pattern),
                   WF_DEF_OBJ, 0) != 0 ||
      wf_def_field(t, "prev_error_context", offsetof(wf_visit_error_context, prev_error_context),
                   WF_DEF_OBJ, 0) != 0) {
    return -1;
  }
  return wf_global_register("ffi.VisitErrorContext.FindAccessPaths", wf_find_access_paths, NULL);
}
