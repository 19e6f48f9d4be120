/* Structural hashing, bounded: nesting stops at WF_MAX_NESTING and every
 * object is hashed once per call however many paths reach it. */
#include "structural_hash.h"

#include <math.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "hash.h"
#include "map.h"
#include "memo.h"
#include "object.h"
#include "reflection.h"
#include "seq.h"
#include "shape.h"
#include "str.h"
#include "structural_kind.h"

typedef struct {
  wf_memo done; /* object: aux 1 being hashed, 2 hashed (value) */
  int def_region;
  int skip_tensor_content;
  uint64_t free_vars; /* free variables bound so far: they hash by order */
  TVMFFIObject* callback;
  int depth;
} wf_sh_ctx;

static int wf_sh_any(wf_sh_ctx* c, const TVMFFIAny* v, uint64_t* out);

static uint64_t wf_sh_combine(uint64_t seed, uint64_t h) {
  return wf_hash_mix(seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)));
}

static uint64_t wf_sh_bytes(const char* data, size_t n) { return wf_hash_bytes(data, n); }

typedef struct {
  wf_sh_ctx* c;
  TVMFFIObject* obj;
  uint64_t h;
} wf_sh_fields;

static int wf_sh_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_sh_fields* f = (wf_sh_fields*)ctx;
  if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashIgnore) return 0;
  TVMFFIAny x;
  wf_any_set_none(&x);
  uint64_t h = 0;
  int rc = wf_reflect_get(f->obj, field, &x);
  if (rc == 0) {
    int saved = f->c->def_region;
    if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashDefNonRecursive) {
      f->c->def_region = kTVMFFIDefRegionKindNonRecursive;
    } else if (field->flags & kTVMFFIFieldFlagBitMaskSEqHashDefRecursive) {
      f->c->def_region = kTVMFFIDefRegionKindRecursive;
    }
    rc = wf_sh_any(f->c, &x, &h);
    f->c->def_region = saved;
  }
  wf_any_release(&x);
  f->h = wf_sh_combine(f->h, h);
  return rc;
}

/* The callback an __s_hash__ hook hashes parts with:
 * (value, init: int, def_region_kind: int) -> int. */
static int wf_sh_hook_callback(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char* const types[] = {"Any", "int", "int"};
  static const WebFFISignature sig = {"s_hash_callback", 3, types, "int"};
  wf_sh_ctx* c = (wf_sh_ctx*)self;
  int64_t init, kind;
  if (WebFFICheckNumArgs(&sig, n) != 0 || WebFFIArgToInt(&sig, args, 1, &init) != 0 ||
      WebFFIArgToInt(&sig, args, 2, &kind) != 0) {
    return -1;
  }
  int saved = c->def_region;
  if (kind != kTVMFFIDefRegionKindNone) c->def_region = (int)kind;
  uint64_t h;
  int rc = wf_sh_any(c, &args[0], &h);
  c->def_region = saved;
  if (rc != 0) return -1;
  wf_any_set_int(result, (int64_t)wf_sh_combine((uint64_t)init, h));
  return 0;
}

static const TVMFFIAny* wf_sh_hook(int32_t type_index) {
  static const TVMFFIByteArray name = {"__s_hash__", 10};
  return wf_reflect_attr_func(type_index, &name);
}

static int wf_sh_fields_of(wf_sh_ctx* c, TVMFFIObject* obj, uint64_t* h) {
  const TVMFFIAny* hook = wf_sh_hook(obj->type_index);
  if (hook == NULL) {
    wf_sh_fields f = {c, obj, *h};
    if (wf_reflect_visit_fields(obj->type_index, wf_sh_field, &f) != 0) return -1;
    *h = f.h;
    return 0;
  }
  if (c->callback == NULL) {
    c->callback = wf_func_new(wf_sh_hook_callback, c, NULL);
    if (c->callback == NULL) return -1;
  }
  TVMFFIAny args[3], r;
  wf_any_set_object(&args[0], obj);
  wf_any_set_int(&args[1], (int64_t)*h);
  wf_any_set_object(&args[2], c->callback);
  wf_any_set_none(&r);
  if (wf_func_call(hook->v_obj, args, 3, &r) != 0) return -1;
  if (r.type_index != kTVMFFIInt) {
    wf_any_release(&r);
    return wf_err_raise("TypeError", "__s_hash__ must return an int");
  }
  *h = (uint64_t)r.v_int64;
  return 0;
}

static int wf_sh_object(wf_sh_ctx* c, TVMFFIObject* obj, uint64_t* out) {
  TVMFFISEqHashKind kind = kTVMFFISEqHashKindUnsupported;
  if (wf_structural_kind(obj->type_index, &kind) != 0) return -1;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj->type_index);
  uint64_t h = wf_sh_bytes(info->type_key.data, info->type_key.size);
  if (kind == kTVMFFISEqHashKindUniqueInstance) {
    *out = wf_sh_combine(h, (uint64_t)(uintptr_t)obj);
    return 0;
  }
  int rc;
  if (kind == kTVMFFISEqHashKindFreeVar) {
    int saved = c->def_region;
    if (c->def_region == kTVMFFIDefRegionKindNonRecursive) c->def_region = kTVMFFIDefRegionKindNone;
    rc = wf_sh_fields_of(c, obj, &h);
    c->def_region = saved;
    /* Bound (inside a definition region) it hashes by when it was bound,
     * as equal values bind their free variables in the same order. */
    h = c->def_region != kTVMFFIDefRegionKindNone ? wf_sh_combine(h, ++c->free_vars)
                                                  : wf_sh_combine(h, (uint64_t)(uintptr_t)obj);
  } else {
    rc = wf_sh_fields_of(c, obj, &h);
  }
  if (rc != 0) return -1;
  *out = h;
  return 0;
}

static int wf_sh_container(wf_sh_ctx* c, TVMFFIObject* obj, uint64_t* out) {
  uint64_t h = wf_hash_mix((uint64_t)(uint32_t)obj->type_index);
  switch (obj->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList:
      for (int64_t i = 0; i < wf_seq_size(obj); ++i) {
        uint64_t e;
        if (wf_sh_any(c, &wf_seq_data(obj)[i], &e) != 0) return -1;
        h = wf_sh_combine(h, e);
      }
      h = wf_sh_combine(h, (uint64_t)wf_seq_size(obj));
      break;
    case kTVMFFIMap:
    case kTVMFFIDict: {
      /* Equality ignores order, so entries are summed. */
      uint64_t sum = 0;
      int64_t pos = 0;
      for (wf_map_entry* e; (e = wf_map_next(obj, &pos)) != NULL;) {
        uint64_t k, v;
        if (wf_sh_any(c, &e->key, &k) != 0 || wf_sh_any(c, &e->value, &v) != 0) return -1;
        sum += wf_sh_combine(k, v);
      }
      h = wf_sh_combine(wf_sh_combine(h, sum), (uint64_t)wf_map_size(obj));
      break;
    }
    case kTVMFFIShape: {
      TVMFFIShapeCell* s = wf_shape_cell(obj);
      for (size_t i = 0; i < s->size; ++i) h = wf_sh_combine(h, (uint64_t)s->data[i]);
      h = wf_sh_combine(h, s->size);
      break;
    }
    case kTVMFFITensor: {
      const DLTensor* t = wf_tensor_dl(obj);
      for (int i = 0; i < t->ndim; ++i) h = wf_sh_combine(h, (uint64_t)t->shape[i]);
      h = wf_sh_combine(h, ((uint64_t)t->dtype.code << 24) | ((uint64_t)t->dtype.bits << 16) |
                               t->dtype.lanes);
      if (!c->skip_tensor_content) {
        const char* data = NULL;
        size_t size = 0;
        if (wf_structural_tensor_bytes(t, "hash", &data, &size) != 0) return -1;
        h = wf_sh_combine(h, wf_sh_bytes(data, size));
      }
      break;
    }
    default: return wf_sh_object(c, obj, out);
  }
  *out = h;
  return 0;
}

static int wf_sh_any(wf_sh_ctx* c, const TVMFFIAny* v, uint64_t* out) {
  TVMFFIByteArray text;
  if (wf_any_string_view(v, &text) || wf_any_bytes_view(v, &text)) {
    *out = wf_any_hash_stable(v);
    return 0;
  }
  if (v->type_index < kTVMFFIStaticObjectBegin) {
    TVMFFIAny pod = *v;
    if (pod.type_index == kTVMFFIFloat && isnan(pod.v_float64)) pod.v_uint64 = 0x7ff8000000000000ull;
    *out = wf_sh_combine(wf_any_hash_stable(&pod), pod.zero_padding);
    return 0;
  }
  if (c->depth >= WF_MAX_NESTING) return wf_structural_too_deep_error("StructuralHash");
  TVMFFIObject* obj = v->v_obj;
  wf_memo_entry* seen = wf_memo_find(&c->done, obj, NULL);
  if (seen != NULL) {
    if (seen->aux == 1) return wf_structural_too_deep_error("StructuralHash");
    *out = seen->value;
    return 0;
  }
  if ((seen = wf_memo_put(&c->done, obj, NULL)) == NULL) return -1;
  seen->aux = 1;
  ++c->depth;
  int rc = wf_sh_container(c, obj, out);
  --c->depth;
  if (rc != 0) return -1;
  seen = wf_memo_find(&c->done, obj, NULL); /* the table may have grown */
  seen->aux = 2;
  seen->value = *out;
  return 0;
}

int wf_structural_hash_ex(const TVMFFIAny* v, int map_free_vars, int skip_tensor_content,
                          uint64_t* out) {
  wf_sh_ctx c;
  memset(&c, 0, sizeof(c));
  c.def_region = map_free_vars ? kTVMFFIDefRegionKindRecursive : kTVMFFIDefRegionKindNone;
  c.skip_tensor_content = skip_tensor_content;
  int rc = wf_sh_any(&c, v, out);
  if (c.callback != NULL) wf_obj_decref(c.callback);
  wf_memo_free(&c.done);
  return rc;
}

static const char* const wf_sh_types[] = {"Any", "bool", "bool"};
static const WebFFISignature wf_sh_sig = {"ffi.StructuralHash", 3, wf_sh_types, "int"};

static int wf_sh_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int map_free, skip;
  uint64_t h;
  if (WebFFICheckNumArgs(&wf_sh_sig, n) != 0 || WebFFIArgToBool(&wf_sh_sig, args, 1, &map_free) != 0 ||
      WebFFIArgToBool(&wf_sh_sig, args, 2, &skip) != 0 ||
      wf_structural_hash_ex(&args[0], map_free, skip, &h) != 0) {
    return -1;
  }
  /* Bit-cast to int64, as upstream returns it. */
  wf_any_set_int(result, (int64_t)h);
  return 0;
}

int wf_structural_hash_register(void) {
  return wf_global_register("ffi.StructuralHash", wf_sh_global, NULL);
}
