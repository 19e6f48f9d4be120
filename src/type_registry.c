/* Type registry: static and dynamic type indices, keys and ancestors. */
#include "type_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime_init.h"
#include "stable_hash.h"
#include "strmap.h"

typedef struct {
  TVMFFITypeInfo info;
  int32_t num_child_slots;
  int32_t child_slots_can_overflow;
} wf_type_entry;

static wf_type_entry** wf_types;   /* indexed by type index */
static int32_t wf_types_capacity;
static wf_strmap wf_types_by_key;
static int32_t wf_next_dynamic_index = kTVMFFIDynObjectBegin;
static int wf_types_ready;

static const struct {
  int32_t index;
  const char* key;
} wf_static_types[] = {
    {kTVMFFINone, "None"},
    {kTVMFFIInt, "int"},
    {kTVMFFIBool, "bool"},
    {kTVMFFIFloat, "float"},
    {kTVMFFIOpaquePtr, "void*"},
    {kTVMFFIDataType, "DataType"},
    {kTVMFFIDevice, "Device"},
    {kTVMFFIDLTensorPtr, "DLTensor*"},
    {kTVMFFIRawStr, "const char*"},
    {kTVMFFIByteArrayPtr, "TVMFFIByteArray*"},
    {kTVMFFIObjectRValueRef, "ObjectRValueRef"},
    {kTVMFFISmallStr, "ffi.SmallStr"},
    {kTVMFFISmallBytes, "ffi.SmallBytes"},
    {kTVMFFIObject, "ffi.Object"},
    {kTVMFFIStr, "ffi.String"},
    {kTVMFFIBytes, "ffi.Bytes"},
    {kTVMFFIError, "ffi.Error"},
    {kTVMFFIFunction, "ffi.Function"},
    {kTVMFFIShape, "ffi.Shape"},
    {kTVMFFITensor, "ffi.Tensor"},
    {kTVMFFIArray, "ffi.Array"},
    {kTVMFFIMap, "ffi.Map"},
    {kTVMFFIModule, "ffi.Module"},
    {kTVMFFIOpaquePyObject, "ffi.OpaquePyObject"},
    {kTVMFFIList, "ffi.List"},
    {kTVMFFIDict, "ffi.Dict"},
};

static int wf_types_grow(int32_t index) {
  if (index < wf_types_capacity) return 0;
  int32_t cap = wf_types_capacity ? wf_types_capacity : 256;
  while (cap <= index) cap *= 2;
  wf_type_entry** grown = (wf_type_entry**)realloc(wf_types, (size_t)cap * sizeof(*grown));
  if (grown == NULL) return wf_err_raise_oom((size_t)cap * sizeof(*grown));
  memset(grown + wf_types_capacity, 0, (size_t)(cap - wf_types_capacity) * sizeof(*grown));
  wf_types = grown;
  wf_types_capacity = cap;
  return 0;
}

/* Adds an entry; ancestors come from the parent (NULL for a root). */
static int32_t wf_type_add(const char* key, size_t key_len, int32_t index,
                           const wf_type_entry* parent, int32_t num_child_slots,
                           int32_t can_overflow) {
  if (wf_types_grow(index) != 0) return -1;
  int32_t depth = parent != NULL ? parent->info.type_depth + 1 : 0;
  wf_type_entry* e = (wf_type_entry*)calloc(1, sizeof(wf_type_entry));
  char* key_copy = (char*)malloc(key_len + 1);
  const TVMFFITypeInfo** ancestors =
      depth > 0 ? (const TVMFFITypeInfo**)malloc((size_t)depth * sizeof(*ancestors)) : NULL;
  if (e == NULL || key_copy == NULL || (depth > 0 && ancestors == NULL)) {
    free(e);
    free(key_copy);
    free(ancestors);
    return wf_err_raise_oom(sizeof(wf_type_entry) + key_len);
  }
  memcpy(key_copy, key, key_len);
  key_copy[key_len] = '\0';
  if (parent != NULL) {
    for (int32_t i = 0; i < depth - 1; ++i) ancestors[i] = parent->info.type_ancestors[i];
    ancestors[depth - 1] = &parent->info;
  }
  e->info.type_index = index;
  e->info.type_depth = depth;
  e->info.type_key.data = key_copy;
  e->info.type_key.size = key_len;
  e->info.type_ancestors = ancestors;
  /* as upstream's native library has it: hashes built on it match */
  e->info.type_key_hash = wf_std_hash_bytes(key, key_len);
  e->num_child_slots = num_child_slots;
  e->child_slots_can_overflow = can_overflow;
  if (wf_strmap_put(&wf_types_by_key, key, key_len, e) != 0) {
    free(e);
    free(key_copy);
    free(ancestors);
    return -1;
  }
  wf_types[index] = e;
  return index;
}

/* The runtime's own types are registered on first use of the registry. */
static int wf_types_init(void) {
  if (wf_types_ready) return 0;
  wf_types_ready = 1;
  for (size_t i = 0; i < sizeof(wf_static_types) / sizeof(wf_static_types[0]); ++i) {
    int32_t index = wf_static_types[i].index;
    const char* key = wf_static_types[i].key;
    const wf_type_entry* parent =
        index > kTVMFFIStaticObjectBegin ? wf_types[kTVMFFIStaticObjectBegin] : NULL;
    if (wf_type_add(key, strlen(key), index, parent, 0, 1) < 0) {
      wf_types_ready = 0;
      return -1;
    }
  }
  return 0;
}

int32_t wf_type_register_static(const char* key, int32_t index, int32_t parent) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t depth = parent >= 0 && TVMFFIGetTypeInfo(parent) != NULL
                      ? TVMFFIGetTypeInfo(parent)->type_depth + 1
                      : 0;
  return TVMFFITypeGetOrAllocIndex(&k, index, depth, 0, 1, parent);
}

int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex) {
  if (type_key == NULL || out_tindex == NULL) {
    return wf_err_raise("ValueError", "TVMFFITypeKeyToIndex: NULL argument");
  }
  /* The runtime's own reflected types register at init. */
  if (wf_types_init() != 0 || wf_runtime_init() != 0) return -1;
  const wf_type_entry* e = wf_strmap_get(&wf_types_by_key, type_key->data, type_key->size);
  if (e == NULL) {
    return wf_err_raise("KeyError", "Cannot find type `%.*s`", (int)type_key->size,
                        type_key->data);
  }
  *out_tindex = e->info.type_index;
  return 0;
}

int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key, int32_t static_type_index,
                                  int32_t type_depth, int32_t num_child_slots,
                                  int32_t child_slots_can_overflow, int32_t parent_type_index) {
  if (type_key == NULL || (type_key->data == NULL && type_key->size != 0)) {
    return wf_err_raise("ValueError", "TVMFFITypeGetOrAllocIndex: type_key is NULL");
  }
  if (wf_types_init() != 0) return -1;
  const wf_type_entry* found = wf_strmap_get(&wf_types_by_key, type_key->data, type_key->size);
  if (found != NULL) return found->info.type_index;
  if (parent_type_index == -2) return -2;

  const wf_type_entry* parent = NULL;
  if (parent_type_index != -1) {
    if (parent_type_index < 0 || parent_type_index >= wf_types_capacity ||
        wf_types[parent_type_index] == NULL) {
      return wf_err_raise("ValueError", "Cannot register type `%.*s`: unknown parent type index %d",
                          (int)type_key->size, type_key->data, (int)parent_type_index);
    }
    parent = wf_types[parent_type_index];
  }
  int32_t expected_depth = parent != NULL ? parent->info.type_depth + 1 : 0;
  if (type_depth != expected_depth) {
    return wf_err_raise("ValueError",
                        "Cannot register type `%.*s`: type_depth %d does not match the parent's "
                        "depth + 1 (%d)",
                        (int)type_key->size, type_key->data, (int)type_depth, (int)expected_depth);
  }
  int32_t index = static_type_index;
  if (index >= 0) {
    if (index < wf_types_capacity && wf_types[index] != NULL) {
      return wf_err_raise("ValueError",
                          "Cannot register type `%.*s`: index %d is already taken by `%s`",
                          (int)type_key->size, type_key->data, (int)index,
                          wf_types[index]->info.type_key.data);
    }
  } else {
    index = wf_next_dynamic_index;
  }
  if (wf_type_add(type_key->data, type_key->size, index, parent, num_child_slots,
                  child_slots_can_overflow) < 0) {
    return -1;
  }
  if (static_type_index < 0) ++wf_next_dynamic_index;
  return index;
}

const TVMFFITypeInfo* TVMFFIGetTypeInfo(int32_t type_index) {
  if (wf_types_init() != 0) return NULL;
  if (type_index < 0 || type_index >= wf_types_capacity || wf_types[type_index] == NULL) {
    return NULL;
  }
  return &wf_types[type_index]->info;
}

TVMFFITypeInfo* wf_type_info_mut(int32_t type_index) {
  if (wf_types_init() != 0) return NULL;
  if (type_index < 0 || type_index >= wf_types_capacity || wf_types[type_index] == NULL) {
    return NULL;
  }
  return &wf_types[type_index]->info;
}

const char* wf_type_key(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info != NULL) return info->type_key.data;
  static char unknown[40];
  snprintf(unknown, sizeof(unknown), "<unknown type %d>", (int)type_index);
  return unknown;
}

int wf_type_is_instance(int32_t sub, int32_t super) {
  if (sub == super) return 1;
  if (sub < super) return 0;
  const TVMFFITypeInfo* s = TVMFFIGetTypeInfo(sub);
  const TVMFFITypeInfo* p = TVMFFIGetTypeInfo(super);
  if (s == NULL || p == NULL || s->type_depth <= p->type_depth) return 0;
  return s->type_ancestors[p->type_depth]->type_index == super;
}

void wf_type_for_each(void (*fn)(const TVMFFITypeInfo* info, void* ctx), void* ctx) {
  if (wf_types_init() != 0) return;
  for (int32_t i = 0; i < wf_types_capacity; ++i) {
    if (wf_types[i] != NULL) fn(&wf_types[i]->info, ctx);
  }
}
