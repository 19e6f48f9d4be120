/* Objects: reference counts, the custom allocator hook, opaque objects. */
#include <webffi/webffi.h>

#include "harness.h"

static TVMFFIObjectHandle make_heap_string(const char* s) {
  TVMFFIByteArray in = {s, strlen(s)};
  TVMFFIAny out;
  CHECK(TVMFFIStringFromByteArray(&in, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFIStr);
  return out.v_obj;
}

void object_new_has_one_strong_and_one_weak_reference(void) {
  TVMFFIObjectHandle s = make_heap_string("a heap string");
  TVMFFIObject* obj = (TVMFFIObject*)s;
  CHECK_EQ_INT(obj->combined_ref_count, (1ull << 32) | 1ull);
  CHECK_EQ_INT(obj->type_index, kTVMFFIStr);
  CHECK(TVMFFIObjectDecRef(s) == 0);
}

void object_incref_decref_frees_at_zero(void) {
  install_counting_allocator();
  TVMFFIObjectHandle s = make_heap_string("counted string");
  CHECK_EQ_INT(g_alloc.allocations, 1);
  CHECK(TVMFFIObjectIncRef(s) == 0);
  CHECK_EQ_INT(WebFFIObjectStrongCount(s), 2);
  CHECK(TVMFFIObjectDecRef(s) == 0);
  CHECK_EQ_INT(WebFFIObjectStrongCount(s), 1);
  CHECK_EQ_INT(g_alloc.frees, 0);
  CHECK(TVMFFIObjectDecRef(s) == 0);
  CHECK_EQ_INT(g_alloc.frees, 1);
  restore_allocator();
}

/* A weak reference keeps the storage after the strong count reaches zero. */
static int weak_deleter_calls[4];
static void weak_test_deleter(void* self, int flags) {
  ++weak_deleter_calls[flags];
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

void object_weak_reference_delays_free(void) {
  TVMFFIObject* obj = (TVMFFIObject*)calloc(1, sizeof(TVMFFIObject));
  obj->combined_ref_count = (2ull << 32) | 1ull; /* one strong, two weak */
  obj->type_index = kTVMFFIObject;
  obj->deleter = weak_test_deleter;
  CHECK(TVMFFIObjectDecRef(obj) == 0);
  CHECK_EQ_INT(weak_deleter_calls[kTVMFFIObjectDeleterFlagBitMaskStrong], 1);
  CHECK_EQ_INT(weak_deleter_calls[kTVMFFIObjectDeleterFlagBitMaskWeak], 0);
  CHECK_EQ_INT(obj->combined_ref_count, 1ull << 32);
  /* dropping the last weak reference is the owner's job: simulate it */
  obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  CHECK_EQ_INT(weak_deleter_calls[kTVMFFIObjectDeleterFlagBitMaskWeak], 1);
}

void object_custom_allocator_get_set_restore(void) {
  TVMFFICustomAllocator* builtin = TVMFFIGetCustomAllocator();
  CHECK(builtin != NULL && builtin->allocate != NULL);
  /* the built-in contract: a header with delete_space right before the body */
  void* body = builtin->allocate(64, 64, 0, builtin->context);
  CHECK(body != NULL);
  CHECK_EQ_INT((uintptr_t)body % 64, 0);
  TVMFFIObjectAllocHeader* header =
      (TVMFFIObjectAllocHeader*)((char*)body - sizeof(TVMFFIObjectAllocHeader));
  CHECK(header->delete_space != NULL);
  header->delete_space(body);

  install_counting_allocator();
  CHECK(TVMFFIGetCustomAllocator() != builtin);
  restore_allocator();
  CHECK(TVMFFIGetCustomAllocator() == builtin);
}

void object_allocation_failure_is_memory_error(void) {
  install_counting_allocator();
  g_alloc.fail = 1;
  TVMFFIByteArray in = {"longer than seven bytes", 23};
  TVMFFIAny out;
  CHECK(TVMFFIStringFromByteArray(&in, &out) == -1);
  /* the error object itself could not be allocated either */
  CHECK_RAISED("MemoryError", "Out of memory");
  g_alloc.fail = 0;
  CHECK(TVMFFIStringFromByteArray(&in, &out) == 0);
  CHECK(TVMFFIObjectDecRef(out.v_obj) == 0);
  restore_allocator();
}

void object_oversized_allocation_is_memory_error(void) {
  TVMFFIByteArray in = {"x", SIZE_MAX - 8};
  TVMFFIAny out;
  CHECK(TVMFFIBytesFromByteArray(&in, &out) == -1);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  TVMFFIErrorCell* cell = (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  CHECK_EQ_STR(cell->kind.data, "MemoryError");
  CHECK(strncmp(cell->message.data, "Failed to allocate ", 19) == 0);
  TVMFFIObjectDecRef(err);
}

void object_null_handles_are_errors(void) {
  CHECK(TVMFFIObjectIncRef(NULL) == -1);
  CHECK_RAISED("ValueError", "TVMFFIObjectIncRef: object handle is NULL");
  CHECK(TVMFFIObjectDecRef(NULL) == -1);
  CHECK_RAISED("ValueError", "TVMFFIObjectDecRef: object handle is NULL");
  /* TVMFFIFunctionCall trusts its handle, as upstream's does; the JS entry checks it. */
  TVMFFIAny result = any_none();
  CHECK(WebFFIFunctionCallWords(NULL, 0, 0, 0, 0, 0, 0, &result) == -1);
  CHECK_RAISED("ValueError", "WebFFIFunctionCallWords: function handle is NULL");
}

static int opaque_deleted;
static void opaque_deleter(void* handle) { opaque_deleted = *(int*)handle; }

void object_opaque_calls_deleter_with_handle(void) {
  static int payload = 42;
  TVMFFIObjectHandle obj = NULL;
  CHECK(TVMFFIObjectCreateOpaque(&payload, kTVMFFIOpaquePyObject, opaque_deleter, &obj) == 0);
  CHECK_EQ_INT(((TVMFFIObject*)obj)->type_index, kTVMFFIOpaquePyObject);
  TVMFFIOpaqueObjectCell* cell = (TVMFFIOpaqueObjectCell*)((char*)obj + sizeof(TVMFFIObject));
  CHECK(cell->handle == &payload);
  CHECK(TVMFFIObjectDecRef(obj) == 0);
  CHECK_EQ_INT(opaque_deleted, 42);
}

void object_opaque_rejects_other_type_index(void) {
  TVMFFIObjectHandle obj = NULL;
  CHECK(TVMFFIObjectCreateOpaque(NULL, kTVMFFIObject, NULL, &obj) == -1);
  CHECK_RAISED("TypeError",
               "TVMFFIObjectCreateOpaque: only type index 74 (ffi.OpaquePyObject) is supported, "
               "got 64");
}
