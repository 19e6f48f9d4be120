/* The type registry: indices, keys, ancestry. */
#ifndef WEBFFI_SRC_TYPE_REGISTRY_H_
#define WEBFFI_SRC_TYPE_REGISTRY_H_

#include <tvm/ffi/c_api.h>

/* The key of a type index, or "<unknown type N>" text in a static buffer. */
const char* wf_type_key(int32_t type_index);

/* True when `sub` is `super` or derives from it. */
int wf_type_is_instance(int32_t sub, int32_t super);

/* Registers an object type at a fixed index (for the runtime's own types);
 * returns the index or -1. */
int32_t wf_type_register_static(const char* key, int32_t index, int32_t parent);

/* The registry's own, writable entry for reflection to fill in; NULL when
 * the index is not registered. */
TVMFFITypeInfo* wf_type_info_mut(int32_t type_index);

/* Calls fn for every registered type, in index order. */
void wf_type_for_each(void (*fn)(const TVMFFITypeInfo* info, void* ctx), void* ctx);

#endif /* WEBFFI_SRC_TYPE_REGISTRY_H_ */
