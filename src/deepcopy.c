/* ffi.DeepCopy: copies containers and reflected objects that have a creator,
 * keeping shared and cyclic structure (each object is copied once).
 * Immutable leaves (strings, bytes, shapes) and resource handles
 * (functions, errors, tensors, modules, opaque objects) are shared. */
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "global_registry.h"
#include "map.h"
#include "nesting.h"
#include "object.h"
#include "reflection.h"
#include "runtime_init.h" /* wf_deepcopy_register */
#include "seq.h"

typedef struct {
  TVMFFIObject* memo; /* original object -> its copy */
} wf_copy_ctx;

static int wf_copy(wf_copy_ctx* c, const TVMFFIAny* v, int depth, TVMFFIAny* out);

/* Records the copy before its children are copied, so cycles find it. */
/* The memo's key is the original's address (an opaque pointer): identity is
 * all it compares, and the original itself as a key would count toward the
 * memo's nesting (a 256-level value would not fit in it). */
static void wf_copy_key(const TVMFFIObject* original, TVMFFIAny* k) {
  wf_any_set_none(k);
  k->type_index = kTVMFFIOpaquePtr;
  k->v_ptr = (void*)original;
}

static int wf_copy_remember(wf_copy_ctx* c, TVMFFIObject* original, TVMFFIObject* copy) {
  TVMFFIAny k, v;
  wf_copy_key(original, &k);
  wf_any_set_object(&v, copy);
  return wf_map_set(c->memo, &k, &v);
}

typedef struct {
  wf_copy_ctx* c;
  TVMFFIObject* from;
  TVMFFIObject* to;
  int depth;
} wf_copy_fields_ctx;

static int wf_copy_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_copy_fields_ctx* f = (wf_copy_fields_ctx*)ctx;
  TVMFFIAny value, copy;
  wf_any_set_none(&value);
  wf_any_set_none(&copy);
  int rc = wf_reflect_get(f->from, field, &value);
  if (rc == 0) rc = wf_copy(f->c, &value, f->depth + 1, &copy);
  if (rc == 0) rc = wf_reflect_set(f->to, field, &copy);
  wf_any_release(&value);
  wf_any_release(&copy);
  return rc;
}

static TVMFFIObject* wf_copy_object(wf_copy_ctx* c, TVMFFIObject* obj, int depth) {
  TVMFFIObject* copy = NULL;
  int32_t type = obj->type_index;
  if (type == kTVMFFIArray || type == kTVMFFIList) {
    copy = wf_seq_new(type, wf_seq_size(obj));
    if (copy == NULL || wf_copy_remember(c, obj, copy) != 0) goto fail;
    for (int64_t i = 0; i < wf_seq_size(obj); ++i) {
      TVMFFIAny e;
      if (wf_copy(c, &wf_seq_data(obj)[i], depth + 1, &e) != 0 ||
          wf_seq_push_owned(copy, &e) != 0) {
        goto fail;
      }
    }
    return copy;
  }
  if (type == kTVMFFIMap || type == kTVMFFIDict) {
    copy = wf_map_new(type, wf_map_size(obj));
    if (copy == NULL || wf_copy_remember(c, obj, copy) != 0) goto fail;
    int64_t pos = 0;
    for (wf_map_entry* e; (e = wf_map_next(obj, &pos)) != NULL;) {
      TVMFFIAny value;
      /* Keys stay: object keys are looked up by identity. */
      if (wf_copy(c, &e->value, depth + 1, &value) != 0) goto fail;
      int rc = wf_map_set(copy, &e->key, &value);
      wf_any_release(&value);
      if (rc != 0) goto fail;
    }
    return copy;
  }
  TVMFFIObjectHandle made = NULL;
  if (wf_reflect_creator(type)(&made) != 0) return NULL;
  copy = (TVMFFIObject*)made;
  if (wf_copy_remember(c, obj, copy) != 0) goto fail;
  wf_copy_fields_ctx f = {c, obj, copy, depth};
  if (wf_reflect_visit_fields(type, wf_copy_field, &f) != 0) goto fail;
  return copy;
fail:
  if (copy != NULL) wf_obj_decref(copy);
  return NULL;
}

static int wf_copy_is_shared(int32_t type) {
  if (type < kTVMFFIStaticObjectBegin) return 1;
  if (type == kTVMFFIArray || type == kTVMFFIList || type == kTVMFFIMap || type == kTVMFFIDict) {
    return 0;
  }
  return wf_reflect_creator(type) == NULL;
}

static int wf_copy(wf_copy_ctx* c, const TVMFFIAny* v, int depth, TVMFFIAny* out) {
  if (depth > WF_MAX_NESTING) {
    return wf_err_raise("ValueError", "DeepCopy: nesting deeper than %d levels", WF_MAX_NESTING);
  }
  if (wf_copy_is_shared(v->type_index)) return TVMFFIAnyViewToOwnedAny(v, out);
  TVMFFIAny key;
  wf_copy_key(v->v_obj, &key);
  wf_map_entry* seen = wf_map_find(c->memo, &key);
  if (seen != NULL) return TVMFFIAnyViewToOwnedAny(&seen->value, out);
  TVMFFIObject* copy = wf_copy_object(c, v->v_obj, depth);
  if (copy == NULL) return -1;
  wf_any_set_object(out, copy);
  return 0;
}

static const char* const wf_copy_any1[] = {"Any"};
static const WebFFISignature wf_copy_sig = {"ffi.DeepCopy", 1, wf_copy_any1, "Any"};

static int wf_deep_copy(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (WebFFICheckNumArgs(&wf_copy_sig, n) != 0) return -1;
  wf_copy_ctx c = {wf_map_new(kTVMFFIDict, 0)};
  if (c.memo == NULL) return -1;
  int rc = wf_copy(&c, &args[0], 0, result);
  wf_obj_decref(c.memo);
  return rc;
}

int wf_deepcopy_register(void) { return wf_global_register("ffi.DeepCopy", wf_deep_copy, NULL); }
