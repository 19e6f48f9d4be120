/* ffi.Enum, ffi.IntEnum, ffi.StrEnum and ffi.EnumState: the object types
 * of upstream's enums (tvm/ffi/enum.h), with its layouts. An enum class is
 * a type derived from IntEnum or StrEnum whose `__ffi_enum__` attribute
 * holds its EnumState (the singletons and their index). */
#include <stddef.h>

#include "any.h"
#include "map.h"
#include "object.h"
#include "reflect_def.h"
#include "runtime_init.h"
#include "seq.h"

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
