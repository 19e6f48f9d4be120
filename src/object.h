/* Object allocation and reference counting shared by every object type. */
#ifndef WEBFFI_SRC_OBJECT_H_
#define WEBFFI_SRC_OBJECT_H_

#include <tvm/ffi/c_api.h>

/* Header plus payload start: a type's cell lives right after the header. */
#define WF_OBJ_CELL(obj, T) ((T*)((char*)(obj) + sizeof(TVMFFIObject)))

/*
 * Allocates `size` bytes (header included) through the current custom
 * allocator, zeroed, with one strong and one weak reference. Raises
 * MemoryError and returns NULL on failure.
 */
TVMFFIObject* wf_obj_alloc(size_t size, size_t alignment, int32_t type_index,
                           void (*deleter)(void* self, int flags));

/* Returns the storage of an object made by wf_obj_alloc (the Weak step). */
void wf_obj_free_space(void* self);

/* A deleter for objects whose payload owns nothing. */
void wf_obj_plain_deleter(void* self, int flags);

static inline void wf_obj_incref(TVMFFIObject* obj) {
  __atomic_fetch_add(&obj->combined_ref_count, 1, __ATOMIC_RELAXED);
}
void wf_obj_decref(TVMFFIObject* obj);

static inline uint32_t wf_obj_strong_count(const TVMFFIObject* obj) {
  return (uint32_t)(__atomic_load_n(&obj->combined_ref_count, __ATOMIC_ACQUIRE) & 0xFFFFFFFFu);
}

#endif /* WEBFFI_SRC_OBJECT_H_ */
