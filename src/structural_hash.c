/* ffi.StructuralHash, with the values upstream tvm-ffi's native library
 * gives: the same combining (src/stable_hash.h), the same order of visits
 * (fields in order, Map values in the order of their keys' hashes) and the
 * same counters for DAG nodes and bound free variables. Bounded: nesting
 * stops at WF_MAX_NESTING, and every object and container is hashed once
 * per call however many paths reach it. */
#include "structural_hash.h"

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
#include "object.h"
#include "reflection.h"
#include "seq.h"
#include "shape.h"
#include "stable_hash.h"
#include "str.h"
#include "structural_kind.h"

/* Memo keys: (obj, NULL) for an object, as upstream memoises them (aux 1
 * while hashed, 2 hashed); (obj, WF_SH_CONTAINER) for a container, which
 * upstream walks again at every path. A walk again gives the same value,
 * except where a Map left out a key object that was not hashed yet (as
 * upstream does) and that has been hashed since: a container whose walk
 * left one out keeps the count of hashed objects at the first such key
 * (aux = count + 1) and is walked again once the count moved (aux 0: it
 * left none out; -1: being walked). */
#define WF_SH_CONTAINER ((const void*)1)

typedef struct {
  wf_memo memo;
  int def_region;
  int skip_tensor_content;
  uint32_t free_vars; /* bound so far: a bound free variable hashes by its order */
  uint32_t dag_nodes; /* DAG nodes hashed so far: sharing shows in the hash */
  uint64_t objects;   /* objects memoised so far */
  uint64_t skipped_at; /* in the current walk, `objects` at the first key left out, or UINT64_MAX */
  TVMFFIObject* callback;
  int depth;
} wf_sh_ctx;

static int wf_sh_any(wf_sh_ctx* c, const TVMFFIAny* v, uint64_t* out);

static uint64_t wf_sh_type_key_hash(int32_t type_index) {
  return TVMFFIGetTypeInfo(type_index)->type_key_hash;
}

/* Up to 7 bytes as the little-endian word a small Bytes value holds. */
static uint64_t wf_sh_small_word(const TVMFFIByteArray* b) {
  uint64_t w = 0;
  for (size_t i = 0; i < b->size; ++i) w |= (uint64_t)(unsigned char)b->data[i] << (8 * i);
  return w;
}

/* A plain value's 64 payload bits as upstream holds them (unused bytes 0). */
uint64_t wf_structural_pod_bits(const TVMFFIAny* v) {
  switch (v->type_index) {
    case kTVMFFINone: return 0;
    case kTVMFFIDataType:
      return v->v_dtype.code | (uint64_t)v->v_dtype.bits << 8 | (uint64_t)v->v_dtype.lanes << 16;
    case kTVMFFIDevice:
      return (uint32_t)v->v_device.device_type | (uint64_t)(uint32_t)v->v_device.device_id << 32;
    case kTVMFFIBool: return v->v_int64 != 0;
    case kTVMFFIInt:
    case kTVMFFIFloat: return v->v_uint64;
    default: return (uint64_t)(uintptr_t)v->v_ptr;
  }
}

/* Strings, bytes and plain values: 1 with *out, 0 for objects. A small
 * Bytes value (up to 7 bytes, however it is held) hashes by its word under
 * its own type index, as upstream's does; nan_as_one: every NaN alike. */
static int wf_sh_immediate(const TVMFFIAny* v, int nan_as_one, uint64_t* out) {
  TVMFFIByteArray b;
  if (wf_any_string_view(v, &b)) {
    *out = wf_stable_combine(kTVMFFIStr, wf_stable_bytes(b.data, b.size));
  } else if (wf_any_bytes_view(v, &b)) {
    *out = b.size <= 7 ? wf_stable_combine(kTVMFFISmallBytes, wf_sh_small_word(&b))
                       : wf_stable_combine(kTVMFFIBytes, wf_stable_bytes(b.data, b.size));
  } else if (v->type_index < kTVMFFIStaticObjectBegin) {
    uint64_t bits = wf_structural_pod_bits(v);
    if (nan_as_one && v->type_index == kTVMFFIFloat && isnan(v->v_float64)) {
      bits = 0x7ff8000000000000ull;
    }
    *out = wf_stable_combine((uint64_t)(uint32_t)v->type_index, bits);
  } else {
    return 0;
  }
  return 1;
}

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
  f->h = wf_stable_combine(f->h, h);
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
  wf_any_set_int(result, (int64_t)wf_stable_combine((uint64_t)init, h));
  return 0;
}

static const TVMFFIAny* wf_sh_hook(int32_t type_index) {
  static const TVMFFIByteArray name = {"__s_hash__", 10};
  return wf_reflect_attr_func(type_index, &name);
}

/* An object's fields folded into *h, or its __s_hash__ hook's value. */
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
  wf_memo_entry* seen = wf_memo_find(&c->memo, obj, NULL);
  if (seen != NULL) {
    if (seen->aux == 1) return wf_structural_too_deep_error("StructuralHash");
    *out = seen->value;
    return 0;
  }
  if ((seen = wf_memo_put(&c->memo, obj, NULL)) == NULL) return -1;
  seen->aux = 1;
  /* memoised for good: keys left out inside do not make its users walk again */
  uint64_t skipped_at = c->skipped_at;
  uint64_t h = wf_sh_type_key_hash(obj->type_index);
  int rc;
  if (kind != kTVMFFISEqHashKindFreeVar) {
    rc = wf_sh_fields_of(c, obj, &h);
  } else {
    /* its own fields are outside a non-recursive definition region */
    int saved = c->def_region;
    if (c->def_region == kTVMFFIDefRegionKindNonRecursive) c->def_region = kTVMFFIDefRegionKindNone;
    rc = wf_sh_fields_of(c, obj, &h);
    c->def_region = saved;
    /* bound (in a definition region) it hashes by when it was bound, as
     * equal values bind theirs in the same order; free, by identity */
    h = c->def_region != kTVMFFIDefRegionKindNone ? wf_stable_combine(h, c->free_vars++)
                                                  : (uint64_t)(uintptr_t)obj;
  }
  c->skipped_at = skipped_at;
  if (rc != 0) return -1;
  if (kind == kTVMFFISEqHashKindDAGNode) h = wf_stable_combine(h, c->dag_nodes++);
  seen = wf_memo_find(&c->memo, obj, NULL); /* the table may have grown */
  seen->aux = 2;
  seen->value = h;
  ++c->objects;
  *out = h;
  return 0;
}

/* A Map key's hash as upstream takes it, independent of visiting order:
 * 1 with *out; 0 for an object not hashed yet, which upstream leaves out. */
static int wf_sh_key(wf_sh_ctx* c, const TVMFFIAny* k, uint64_t* out) {
  if (wf_sh_immediate(k, 0, out)) return 1;
  wf_memo_entry* seen = wf_memo_find(&c->memo, k->v_obj, NULL);
  if (seen != NULL && seen->aux == 2) {
    *out = seen->value;
    return 1;
  }
  if (c->objects < c->skipped_at) c->skipped_at = c->objects;
  return 0;
}

typedef struct {
  uint64_t key;
  TVMFFIAny value; /* owned: a hook may change the map meanwhile */
} wf_sh_item;

static int wf_sh_item_order(const void* a, const void* b) {
  uint64_t x = ((const wf_sh_item*)a)->key, y = ((const wf_sh_item*)b)->key;
  return x < y ? -1 : x > y;
}

/* Entries in the order of their keys' hashes; keys whose hash is shared
 * count once, without their values (so the order cannot matter). */
static int wf_sh_map(wf_sh_ctx* c, TVMFFIObject* map, uint64_t* h) {
  int64_t size = wf_map_size(map);
  wf_sh_item* items = (wf_sh_item*)malloc((size_t)(size > 0 ? size : 1) * sizeof(wf_sh_item));
  if (items == NULL) return wf_err_raise_oom((size_t)size * sizeof(wf_sh_item));
  size_t n = 0;
  int64_t pos = 0;
  for (wf_map_entry* e; (e = wf_map_next(map, &pos)) != NULL && n < (size_t)size;) {
    if (!wf_sh_key(c, &e->key, &items[n].key)) continue;
    TVMFFIAnyViewToOwnedAny(&e->value, &items[n].value);
    ++n;
  }
  qsort(items, n, sizeof(wf_sh_item), wf_sh_item_order);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0;) {
    size_t k = i + 1;
    while (k < n && items[k].key == items[i].key) ++k;
    *h = wf_stable_combine(*h, items[i].key);
    if (k == i + 1) {
      uint64_t v;
      rc = wf_sh_any(c, &items[i].value, &v);
      *h = wf_stable_combine(*h, v);
    }
    i = k;
  }
  for (size_t i = 0; i < n; ++i) wf_any_release(&items[i].value);
  free(items);
  return rc;
}

static int wf_sh_walk(wf_sh_ctx* c, TVMFFIObject* obj, uint64_t* out) {
  uint64_t h = wf_sh_type_key_hash(obj->type_index);
  switch (obj->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList:
      h = wf_stable_combine(h, (uint64_t)wf_seq_size(obj));
      for (int64_t i = 0; i < wf_seq_size(obj); ++i) {
        uint64_t e;
        if (wf_sh_any(c, &wf_seq_data(obj)[i], &e) != 0) return -1;
        h = wf_stable_combine(h, e);
      }
      break;
    case kTVMFFIMap:
    case kTVMFFIDict:
      h = wf_stable_combine(h, (uint64_t)wf_map_size(obj));
      if (wf_sh_map(c, obj, &h) != 0) return -1;
      break;
    case kTVMFFIShape: {
      TVMFFIShapeCell* s = wf_shape_cell(obj);
      h = wf_stable_combine(h, s->size);
      for (size_t i = 0; i < s->size; ++i) h = wf_stable_combine(h, (uint64_t)s->data[i]);
      break;
    }
    default: { /* kTVMFFITensor */
      const DLTensor* t = wf_tensor_dl(obj);
      h = wf_stable_combine(h, (uint64_t)(int64_t)t->ndim);
      for (int i = 0; i < t->ndim; ++i) h = wf_stable_combine(h, (uint64_t)t->shape[i]);
      TVMFFIAny dtype = {0};
      dtype.type_index = kTVMFFIDataType;
      dtype.v_dtype = t->dtype;
      h = wf_stable_combine(h, wf_structural_pod_bits(&dtype));
      if (!c->skip_tensor_content) {
        const char* data = NULL;
        size_t size = 0;
        if (wf_structural_tensor_bytes(t, "hash", &data, &size) != 0) return -1;
        h = wf_stable_combine(h, wf_stable_bytes(data, size));
      }
    }
  }
  *out = h;
  return 0;
}

static int wf_sh_container(wf_sh_ctx* c, TVMFFIObject* obj, uint64_t* out) {
  wf_memo_entry* seen = wf_memo_find(&c->memo, obj, WF_SH_CONTAINER);
  if (seen != NULL) {
    if (seen->aux == -1) return wf_structural_too_deep_error("StructuralHash");
    if (seen->aux == 0 || (uint64_t)seen->aux == c->objects + 1) {
      if (seen->aux > 0 && c->objects < c->skipped_at) c->skipped_at = c->objects;
      *out = seen->value;
      return 0;
    }
  } else if ((seen = wf_memo_put(&c->memo, obj, WF_SH_CONTAINER)) == NULL) {
    return -1;
  }
  seen->aux = -1;
  uint64_t outer = c->skipped_at;
  c->skipped_at = UINT64_MAX;
  int rc = wf_sh_walk(c, obj, out);
  uint64_t mine = c->skipped_at;
  c->skipped_at = mine < outer ? mine : outer;
  if (rc != 0) return -1;
  seen = wf_memo_find(&c->memo, obj, WF_SH_CONTAINER); /* the table may have grown */
  seen->aux = mine == UINT64_MAX ? 0 : (int64_t)(mine + 1);
  seen->value = *out;
  return 0;
}

static int wf_sh_any(wf_sh_ctx* c, const TVMFFIAny* v, uint64_t* out) {
  if (wf_sh_immediate(v, 1, out)) return 0;
  if (c->depth >= WF_MAX_NESTING) return wf_structural_too_deep_error("StructuralHash");
  TVMFFIObject* obj = v->v_obj;
  ++c->depth;
  int rc;
  switch (obj->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList:
    case kTVMFFIMap:
    case kTVMFFIDict:
    case kTVMFFIShape:
    case kTVMFFITensor: rc = wf_sh_container(c, obj, out); break;
    default: rc = wf_sh_object(c, obj, out);
  }
  --c->depth;
  return rc;
}

int wf_structural_hash_ex(const TVMFFIAny* v, int map_free_vars, int skip_tensor_content,
                          uint64_t* out) {
  wf_sh_ctx c;
  memset(&c, 0, sizeof(c));
  c.def_region = map_free_vars ? kTVMFFIDefRegionKindRecursive : kTVMFFIDefRegionKindNone;
  c.skip_tensor_content = skip_tensor_content;
  c.skipped_at = UINT64_MAX;
  int rc = wf_sh_any(&c, v, out);
  if (c.callback != NULL) wf_obj_decref(c.callback);
  wf_memo_free(&c.memo);
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
