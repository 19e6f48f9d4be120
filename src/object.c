/* Objects: storage through the custom allocator hook, strong/weak counts. */
#include "object.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "platform.h"
#include "unwind.h"

#define WF_ONE_STRONG 1ull
#define WF_ONE_WEAK (1ull << 32)

/*
 * Built-in allocator. The body must be preceded by a TVMFFIObjectAllocHeader
 * and delete_space only gets the body, so the base pointer is kept in front
 * of the header: [pad][base][header][body].
 */
typedef struct {
  void* base;
  TVMFFIObjectAllocHeader header;
} wf_obj_prefix;

static void wf_obj_builtin_delete_space(void* body) {
  wf_obj_prefix* prefix = (wf_obj_prefix*)((char*)body - sizeof(wf_obj_prefix));
  free(prefix->base);
}

static void* wf_obj_builtin_allocate(size_t size, size_t alignment, int32_t type_index,
                                     void* context) {
  (void)type_index;
  (void)context;
  if (alignment < 16) alignment = 16;
  if ((alignment & (alignment - 1)) != 0) return NULL;
  size_t offset = (sizeof(wf_obj_prefix) + alignment - 1) & ~(alignment - 1);
  if (size > SIZE_MAX - offset - alignment) return NULL;
  size_t total = (offset + size + alignment - 1) & ~(alignment - 1);
  void* base = alignment <= 16 ? malloc(total) : aligned_alloc(alignment, total);
  if (base == NULL) return NULL;
  char* body = (char*)base + offset;
  wf_obj_prefix* prefix = (wf_obj_prefix*)(body - sizeof(wf_obj_prefix));
  prefix->base = base;
  prefix->header.delete_space = wf_obj_builtin_delete_space;
  return body;
}

static TVMFFICustomAllocator wf_obj_builtin_allocator = {wf_obj_builtin_allocate, NULL};
static TVMFFICustomAllocator* wf_obj_allocator = &wf_obj_builtin_allocator;

TVMFFICustomAllocator* TVMFFIGetCustomAllocator(void) { return wf_obj_allocator; }

int TVMFFISetCustomAllocator(TVMFFICustomAllocator* allocator) {
  if (allocator != NULL && allocator->allocate == NULL) {
    return wf_err_raise("ValueError", "TVMFFISetCustomAllocator: allocate must not be NULL");
  }
  wf_obj_allocator = allocator != NULL ? allocator : &wf_obj_builtin_allocator;
  return 0;
}

TVMFFIObject* wf_obj_alloc(size_t size, size_t alignment, int32_t type_index,
                           void (*deleter)(void* self, int flags)) {
  TVMFFICustomAllocator* a = wf_obj_allocator;
  TVMFFIObject* obj = (TVMFFIObject*)a->allocate(size, alignment, type_index, a->context);
  if (obj == NULL) {
    wf_err_raise_oom(size);
    return NULL;
  }
  memset(obj, 0, size);
  obj->combined_ref_count = WF_ONE_STRONG | WF_ONE_WEAK;
  obj->type_index = type_index;
  obj->deleter = deleter;
  return obj;
}

void wf_obj_free_space(void* self) {
  TVMFFIObjectAllocHeader* header =
      (TVMFFIObjectAllocHeader*)((char*)self - sizeof(TVMFFIObjectAllocHeader));
  header->delete_space(self);
}

void wf_obj_plain_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

/*
 * Releasing an object releases its children from inside its deleter, so a
 * chain of nested objects would recurse once per level. Deleters nest only
 * WF_OBJ_RELEASE_NESTING deep; an object that dies deeper waits on a list,
 * linked through its (now unused) reference count, and the outermost release
 * runs the waiting deleters one after another. Stack use stays bounded for
 * any depth, and releasing needs no allocation.
 */
#define WF_OBJ_RELEASE_NESTING 32
#define wf_obj_release_nesting (wf_counters.release_nesting) /* unwind.h */
static WF_THREAD_LOCAL TVMFFIObject* wf_obj_release_waiting;

static void wf_obj_run_deleter(TVMFFIObject* obj, int flags) {
  ++wf_obj_release_nesting;
  obj->deleter(obj, flags);
  --wf_obj_release_nesting;
}

static void wf_obj_run_waiting(void) {
  ++wf_obj_release_nesting; /* deleters run from here defer as usual */
  while (wf_obj_release_waiting != NULL) {
    TVMFFIObject* obj = wf_obj_release_waiting;
    wf_obj_release_waiting = (TVMFFIObject*)(uintptr_t)obj->combined_ref_count;
    obj->combined_ref_count = WF_ONE_WEAK; /* as it was: no strong, the last weak */
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
  }
  --wf_obj_release_nesting;
}

/* After an unwind (unwind.h): the deleters whose frames were skipped count
 * no more; at the outermost level the objects left waiting are released. */
void wf_obj_release_unwind(int32_t nesting) {
  wf_obj_release_nesting = nesting;
  if (nesting == 0 && wf_obj_release_waiting != NULL) wf_obj_run_waiting();
}

void wf_obj_decref(TVMFFIObject* obj) {
  uint64_t before = WF_ATOMIC_SUB(&obj->combined_ref_count, WF_ONE_STRONG);
  if ((uint32_t)before != 1) return;
  if (obj->deleter == NULL) return;
  if ((before >> 32) == 1) {
    /* Last strong reference and no weak ones: destroy and free at once.
     * Nobody else can see the object, so its count field is free to link. */
    if (wf_obj_release_nesting >= WF_OBJ_RELEASE_NESTING) {
      obj->combined_ref_count = (uint64_t)(uintptr_t)wf_obj_release_waiting;
      wf_obj_release_waiting = obj;
      return;
    }
    wf_obj_run_deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
  } else {
    /* Weak references remain: the object is destroyed now, its space freed
     * with the last weak reference. Rare, so it is never deferred. */
    wf_obj_run_deleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
    /* The strong references together held one weak reference. */
    if ((WF_ATOMIC_SUB(&obj->combined_ref_count, WF_ONE_WEAK) >> 32) == 1) {
      wf_obj_run_deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
    }
  }
  if (wf_obj_release_nesting == 0 && wf_obj_release_waiting != NULL) wf_obj_run_waiting();
}

int TVMFFIObjectIncRef(TVMFFIObjectHandle obj) {
  if (obj == NULL) return wf_err_raise("ValueError", "TVMFFIObjectIncRef: object handle is NULL");
  wf_obj_incref((TVMFFIObject*)obj);
  return 0;
}

int TVMFFIObjectDecRef(TVMFFIObjectHandle obj) {
  if (obj == NULL) return wf_err_raise("ValueError", "TVMFFIObjectDecRef: object handle is NULL");
  wf_obj_decref((TVMFFIObject*)obj);
  return 0;
}

/* ------------------------------------------------------ opaque objects */
typedef struct {
  TVMFFIOpaqueObjectCell cell;
  void (*handle_deleter)(void* handle);
} wf_opaque_payload;

static void wf_opaque_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_opaque_payload* p = WF_OBJ_CELL(self, wf_opaque_payload);
    if (p->handle_deleter != NULL) p->handle_deleter(p->cell.handle);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index, void (*deleter)(void* handle),
                             TVMFFIObjectHandle* out) {
  if (out == NULL) return wf_err_raise("ValueError", "TVMFFIObjectCreateOpaque: out is NULL");
  if (type_index != kTVMFFIOpaquePyObject) {
    return wf_err_raise("TypeError",
                        "TVMFFIObjectCreateOpaque: only type index %d (ffi.OpaquePyObject) is "
                        "supported, got %d",
                        (int)kTVMFFIOpaquePyObject, (int)type_index);
  }
  TVMFFIObject* obj = wf_obj_alloc(sizeof(TVMFFIObject) + sizeof(wf_opaque_payload), 8,
                                   type_index, wf_opaque_deleter);
  if (obj == NULL) return -1;
  wf_opaque_payload* p = WF_OBJ_CELL(obj, wf_opaque_payload);
  p->cell.handle = handle;
  p->handle_deleter = deleter;
  *out = obj;
  return 0;
}
