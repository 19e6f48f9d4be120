/* ffi.Enum, ffi.IntEnum, ffi.StrEnum and ffi.EnumState: the object types
 * of upstream's enums (tvm/ffi/enum.h), with its layouts. An enum class is
 * a type derived from IntEnum or StrEnum whose `__ffi_enum__` attribute
 * holds its EnumState (the singletons and their index). */
#include "enum.h"

#include <stddef.h>

#include "any.h"
#include "error.h"
#include "map.h"
#include "object.h"
#include "reflect_def.h"
#include "reflection.h"
#include "runtime_init.h"
#include "seq.h"
#include "str.h"
#include "type_registry.h"

typedef struct {
  TVMFFIObject header;
  TVMFFIObject* entries; /* List<Object> */
  TVMFFIObject* indexes; /* Dict<Any, Object> */
  TVMFFIObject* attrs;   /* Dict<str, Dict<Object, Any>> */
} wf_enum_state;

typedef struct {
  TVMFFIObject header;
  int64_t int_index;
  TVMFFIAny str_index; /* a String (upstream's String is one Any wide) */
} wf_enum;

static int32_t wf_enum_state_index = -1;
static int32_t wf_enum_base_index = -1, wf_enum_int_index = -1;

static void wf_enum_state_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_enum_state* s = (wf_enum_state*)self;
    TVMFFIObject* held[3] = {s->entries, s->indexes, s->attrs};
    for (int i = 0; i < 3; ++i) {
      if (held[i] != NULL) wf_obj_decref(held[i]);
    }
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

/* Empty containers, as upstream's default-constructed state has. */
static int wf_enum_state_create(TVMFFIObjectHandle* out) {
  TVMFFIObject* obj =
      wf_obj_alloc(sizeof(wf_enum_state), 8, wf_enum_state_index, wf_enum_state_deleter);
  if (obj == NULL) return -1;
  wf_enum_state* s = (wf_enum_state*)obj;
  if ((s->entries = wf_seq_new(kTVMFFIList, 0)) == NULL ||
      (s->indexes = wf_map_new(kTVMFFIDict, 0)) == NULL ||
      (s->attrs = wf_map_new(kTVMFFIDict, 0)) == NULL) {
    wf_obj_decref(obj);
    return -1;
  }
  *out = obj;
  return 0;
}

int wf_enum_register(void) {
  if (wf_enum_state_index >= 0) return 0;
  int32_t state = wf_def_type("ffi.EnumState", -1, kTVMFFIObject, sizeof(wf_enum_state),
                              kTVMFFISEqHashKindTreeNode, wf_enum_state_create);
  /* Enum singletons compare by identity; their classes create them. */
  int32_t base = state < 0 ? -1
                           : wf_def_type("ffi.Enum", -1, kTVMFFIObject, sizeof(wf_enum),
                                         kTVMFFISEqHashKindUniqueInstance, NULL);
  int32_t ints = base < 0 ? -1
                          : wf_def_type("ffi.IntEnum", -1, base, sizeof(wf_enum),
                                        kTVMFFISEqHashKindUniqueInstance, NULL);
  int32_t strs = ints < 0 ? -1
                          : wf_def_type("ffi.StrEnum", -1, base, sizeof(wf_enum),
                                        kTVMFFISEqHashKindUniqueInstance, NULL);
  if (strs < 0) return -1;
  wf_enum_state_index = state;
  wf_enum_base_index = base;
  wf_enum_int_index = ints;
  const int64_t ignore = kTVMFFIFieldFlagBitMaskSEqHashIgnore;
  if (wf_def_field(state, "entries", offsetof(wf_enum_state, entries), WF_DEF_OBJ, 0) != 0 ||
      wf_def_field(state, "indexes", offsetof(wf_enum_state, indexes), WF_DEF_OBJ, 0) != 0 ||
      wf_def_field(state, "attrs", offsetof(wf_enum_state, attrs), WF_DEF_OBJ, 0) != 0 ||
      wf_def_field(base, "_int_index", offsetof(wf_enum, int_index), WF_DEF_INT64, ignore) != 0 ||
      wf_def_field(base, "_str_index", offsetof(wf_enum, str_index), WF_DEF_ANY, 0) != 0 ||
      wf_def_field(ints, "value", offsetof(wf_enum, int_index), WF_DEF_INT64, ignore) != 0 ||
      wf_def_field(strs, "value", offsetof(wf_enum, str_index), WF_DEF_ANY, ignore) != 0) {
    return -1;
  }
  return wf_def_attr_column("__ffi_enum__");
}

wf_enum_kind wf_enum_kind_of(int32_t type_index) {
  if (wf_enum_base_index < 0 || type_index < kTVMFFIStaticObjectBegin) return WF_ENUM_NONE;
  if (wf_type_is_instance(type_index, wf_enum_int_index)) return WF_ENUM_INT;
  return wf_type_is_instance(type_index, wf_enum_base_index) ? WF_ENUM_STR : WF_ENUM_NONE;
}

const TVMFFIAny* wf_enum_canonical_index(TVMFFIObject* obj, TVMFFIAny* int_slot) {
  const wf_enum* e = (const wf_enum*)obj;
  if (wf_enum_kind_of(obj->type_index) == WF_ENUM_INT) {
    wf_any_set_int(int_slot, e->int_index);
    return int_slot;
  }
  return &e->str_index;
}

const TVMFFIAny* wf_enum_name(TVMFFIObject* obj) { return &((const wf_enum*)obj)->str_index; }

int wf_enum_lookup(int32_t type_index, const TVMFFIAny* index, TVMFFIAny* out) {
  static const TVMFFIByteArray column = {"__ffi_enum__", 12};
  const TVMFFIAny* state = wf_reflect_attr(type_index, &column);
  if (state != NULL && state->type_index == wf_enum_state_index) {
    wf_map_entry* e = wf_map_find(((wf_enum_state*)state->v_obj)->indexes, index);
    if (e != NULL && wf_any_is_object(&e->value) &&
        wf_type_is_instance(e->value.type_index, type_index)) {
      wf_obj_incref(e->value.v_obj);
      wf_any_set_object(out, e->value.v_obj);
      return 0;
    }
  }
  TVMFFIByteArray s;
  if (index->type_index == kTVMFFIInt) {
    return wf_err_raise("ValueError", "Enum `%s` has no instance with index %lld",
                        wf_type_key(type_index), (long long)index->v_int64);
  }
  if (wf_any_string_view(index, &s)) {
    return wf_err_raise("ValueError", "Enum `%s` has no instance with index %.*s",
                        wf_type_key(type_index), (int)s.size, s.data);
  }
  return wf_err_raise("ValueError", "Enum `%s` has no instance with index of type `%s`",
                      wf_type_key(type_index), wf_type_key(index->type_index));
}
