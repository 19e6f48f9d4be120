/* Tensors: allocation through the device registry, DLPack both ways,
 * views, user allocators and device copies. */
#include <tvm/ffi/extra/c_env_api.h>
#include <webffi/device_api.h>
#include <webffi/typed_call.h>
#include <webffi/webffi.h>

#include "harness.h"

static DLTensor* dl_of(TVMFFIObjectHandle t) {
  return (DLTensor*)((char*)t + sizeof(TVMFFIObject));
}

static TVMFFIObjectHandle alloc_tensor(DLDevice device, int32_t ndim, int64_t* shape) {
  DLTensor proto = {NULL, device, ndim, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == 0);
  return t;
}

void tensor_cpu_alloc_is_aligned_and_compact(void) {
  int64_t shape[2] = {2, 3};
  TVMFFIObjectHandle t = alloc_tensor((DLDevice){kDLCPU, 0}, 2, shape);
  CHECK_EQ_INT(((TVMFFIObject*)t)->type_index, kTVMFFITensor);
  DLTensor* dl = dl_of(t);
  CHECK_EQ_INT((uintptr_t)dl->data % 64, 0);
  CHECK_EQ_INT(dl->ndim, 2);
  CHECK_EQ_INT(dl->shape[0], 2);
  CHECK_EQ_INT(dl->shape[1], 3);
  CHECK_EQ_INT(dl->strides[0], 3);
  CHECK_EQ_INT(dl->strides[1], 1);
  CHECK_EQ_INT(WebFFITensorNumBytes(dl), 24);
  float* data = (float*)dl->data;
  for (int i = 0; i < 6; ++i) data[i] = (float)i; /* ASan checks the extent */
  TVMFFIObjectDecRef(t);
}

void tensor_zero_size_alloc_works(void) {
  int64_t shape[1] = {0};
  TVMFFIObjectHandle t = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  CHECK(dl_of(t)->data != NULL);
  CHECK_EQ_INT(WebFFITensorNumBytes(dl_of(t)), 0);
  TVMFFIObjectDecRef(t);
}

void tensor_alloc_without_backend_is_value_error(void) {
  int64_t shape[1] = {4};
  DLTensor proto = {NULL, {kDLWebGPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == -1);
  CHECK_RAISED("ValueError", "No backend is registered for device type webgpu (15)");
}

void tensor_alloc_bad_shapes_are_value_errors(void) {
  int64_t negative[2] = {2, -1};
  DLTensor proto = {NULL, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, negative, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == -1);
  CHECK_RAISED("ValueError", "Tensor shape has a negative extent -1 at axis 1");
  int64_t huge[2] = {INT64_MAX / 2, 8};
  proto.shape = huge;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == -1);
  CHECK_RAISED("ValueError", "Tensor size overflows 64 bits");
}

void tensor_oversized_alloc_is_memory_error(void) {
  int64_t shape[1] = {INT64_MAX / 64};
  DLTensor proto = {NULL, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == -1);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK_EQ_STR(((TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject)))->kind.data, "MemoryError");
  TVMFFIObjectDecRef(err);
}

void tensor_dlpack_round_trip_shares_data(void) {
  int64_t shape[1] = {8};
  TVMFFIObjectHandle t = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  DLManagedTensor* mt = NULL;
  CHECK(TVMFFITensorToDLPack(t, &mt) == 0);
  CHECK(mt->dl_tensor.data == dl_of(t)->data);
  CHECK_EQ_INT(WebFFIObjectStrongCount(t), 2);
  TVMFFIObjectHandle back = NULL;
  CHECK(TVMFFITensorFromDLPack(mt, 64, 1, &back) == 0);
  CHECK(dl_of(back)->data == dl_of(t)->data);
  CHECK_EQ_INT(dl_of(back)->shape[0], 8);
  TVMFFIObjectDecRef(t);
  CHECK_EQ_INT(WebFFIObjectStrongCount(t), 1); /* held by the DLPack struct */
  TVMFFIObjectDecRef(back); /* calls mt's deleter, which frees t */
}

void tensor_dlpack_versioned_round_trip(void) {
  int64_t shape[2] = {3, 5};
  TVMFFIObjectHandle t = alloc_tensor((DLDevice){kDLCPU, 0}, 2, shape);
  DLManagedTensorVersioned* mt = NULL;
  CHECK(TVMFFITensorToDLPackVersioned(t, &mt) == 0);
  CHECK_EQ_INT(mt->version.major, 1);
  CHECK_EQ_INT(mt->flags, 0);
  TVMFFIObjectHandle back = NULL;
  CHECK(TVMFFITensorFromDLPackVersioned(mt, 0, 0, &back) == 0);
  CHECK_EQ_INT(dl_of(back)->strides[0], 5);
  TVMFFIObjectDecRef(t);
  TVMFFIObjectDecRef(back);
}

static int producer_deleted;
static void producer_deleter(DLManagedTensor* self) {
  ++producer_deleted;
  (void)self;
}

void tensor_from_dlpack_checks_alignment_and_contiguity(void) {
  static float storage[32] __attribute__((aligned(64)));
  int64_t shape[2] = {2, 2}, strides[2] = {1, 2};
  DLManagedTensor mt = {{storage, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 4}, NULL,
                        producer_deleter};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFITensorFromDLPack(&mt, 64, 0, &t) == -1);
  CHECK_RAISED("ValueError", "FromDLPack: Data is not aligned to 64 bytes.");
  mt.dl_tensor.byte_offset = 0;
  mt.dl_tensor.strides = strides;
  CHECK(TVMFFITensorFromDLPack(&mt, 64, 1, &t) == -1);
  CHECK_RAISED("ValueError", "FromDLPack: Tensor is not contiguous.");
  CHECK_EQ_INT(producer_deleted, 0); /* failures leave ownership with the producer */
  CHECK(TVMFFITensorFromDLPack(&mt, 64, 0, &t) == 0);
  CHECK_EQ_INT(dl_of(t)->strides[1], 2);
  TVMFFIObjectDecRef(t);
  CHECK_EQ_INT(producer_deleted, 1);
}

void tensor_unsafe_view_holds_source(void) {
  int64_t shape[1] = {12};
  TVMFFIObjectHandle t = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  float* base = (float*)dl_of(t)->data;
  for (int i = 0; i < 12; ++i) base[i] = (float)i;
  /* a 2x2 window with a column stride of 2, starting at element 3 (its
   * data pointer) plus 1 element (its byte_offset): elements 4, 6, 8, 10 */
  int64_t view_shape[2] = {2, 2};
  int64_t view_strides[2] = {4, 2};
  DLTensor proto = {base + 3, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, view_shape, view_strides, 4};
  TVMFFIObjectHandle v = NULL;
  CHECK(TVMFFITensorCreateUnsafeView(t, &proto, &v) == 0);
  DLTensor* dl = dl_of(v);
  CHECK(dl->data == (void*)(base + 3));
  CHECK_EQ_INT(dl->byte_offset, 4);
  CHECK_EQ_INT(dl->strides[0], 4);
  CHECK_EQ_INT(dl->strides[1], 2);
  /* the view copied the prototype's shape and strides */
  CHECK(dl->shape != view_shape && dl->strides != view_strides);
  const float* first = (const float*)((char*)dl->data + dl->byte_offset);
  CHECK(first[0] == 4.0f && first[2] == 6.0f && first[4] == 8.0f && first[6] == 10.0f);
  CHECK_EQ_INT(WebFFIObjectStrongCount(t), 2);
  TVMFFIObjectDecRef(t);
  ((float*)dl->data)[8] = 1.0f; /* still alive through the view */
  TVMFFIObjectDecRef(v);

  /* without strides the view is compact over the prototype's shape */
  t = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  int64_t flat_shape[2] = {3, 2};
  DLTensor flat = {(float*)dl_of(t)->data + 6, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, flat_shape,
                   NULL, 0};
  CHECK(TVMFFITensorCreateUnsafeView(t, &flat, &v) == 0);
  CHECK(dl_of(v)->data == (void*)((float*)dl_of(t)->data + 6));
  CHECK_EQ_INT(dl_of(v)->strides[0], 2);
  CHECK_EQ_INT(dl_of(v)->strides[1], 1);
  TVMFFIObjectDecRef(v);
  TVMFFIObjectDecRef(t);
}

void tensor_functions_reject_non_tensors(void) {
  TVMFFIByteArray in = {"not a tensor", 12};
  TVMFFIAny s;
  CHECK(TVMFFIStringFromByteArray(&in, &s) == 0);
  DLManagedTensor* mt = NULL;
  CHECK(TVMFFITensorToDLPack(s.v_obj, &mt) == -1);
  CHECK_RAISED("TypeError", "ToDLPack: expected `ffi.Tensor` but got `ffi.String`");
  TVMFFIObjectDecRef(s.v_obj);
}

/* ---------------------------------------------- user DLPack allocator */
static int user_allocations;

static void user_deleter(DLManagedTensorVersioned* self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
}

static int user_allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                          void (*set_error)(void*, const char*, const char*)) {
  if (prototype->ndim == 0) {
    set_error(error_ctx, "ValueError", "user allocator refuses scalars");
    return -1;
  }
  ++user_allocations;
  DLManagedTensorVersioned* mt = calloc(1, sizeof(*mt));
  mt->version.major = 1;
  mt->dl_tensor = *prototype;
  mt->dl_tensor.shape = malloc(sizeof(int64_t) * (size_t)prototype->ndim);
  memcpy(mt->dl_tensor.shape, prototype->shape, sizeof(int64_t) * (size_t)prototype->ndim);
  mt->dl_tensor.strides = NULL;
  mt->dl_tensor.data = calloc(1, (size_t)WebFFITensorNumBytes(prototype));
  mt->deleter = user_deleter;
  *out = mt;
  return 0;
}

void tensor_env_alloc_honours_user_allocator(void) {
  DLPackManagedTensorAllocator original = (DLPackManagedTensorAllocator)1;
  CHECK(TVMFFIEnvSetDLPackManagedTensorAllocator(user_allocator, 1, &original) == 0);
  CHECK(original == NULL);
  CHECK(TVMFFIEnvGetDLPackManagedTensorAllocator() == user_allocator);
  int64_t shape[1] = {16};
  TVMFFIObjectHandle t = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  CHECK_EQ_INT(user_allocations, 1);
  CHECK_EQ_INT(dl_of(t)->shape[0], 16);
  TVMFFIObjectDecRef(t);
  DLTensor scalar = {NULL, {kDLCPU, 0}, 0, {kDLFloat, 32, 1}, NULL, NULL, 0};
  CHECK(TVMFFIEnvTensorAlloc(&scalar, &t) == -1);
  CHECK_RAISED("ValueError", "user allocator refuses scalars");
  CHECK(TVMFFIEnvSetDLPackManagedTensorAllocator(NULL, 1, NULL) == 0);
}

/* ---------------------------------------------- a device backend in C */
static int fake_copies;

static void* fake_alloc(void* ctx, DLDevice device, size_t nbytes, size_t alignment) {
  (void)ctx;
  (void)device;
  (void)alignment;
  return calloc(1, nbytes ? nbytes : 1);
}

static void fake_free(void* ctx, DLDevice device, void* data) {
  (void)ctx;
  (void)device;
  free(data);
}

static int fake_copy(void* ctx, const void* from, size_t from_offset, DLDevice from_device,
                     void* to, size_t to_offset, DLDevice to_device, size_t nbytes,
                     TVMFFIStreamHandle stream) {
  (void)ctx;
  (void)from_device;
  (void)to_device;
  (void)stream;
  ++fake_copies;
  memcpy((char*)to + to_offset, (const char*)from + from_offset, nbytes);
  return 0;
}

static int fake_sync(void* ctx, DLDevice device, TVMFFIStreamHandle stream) {
  (void)ctx;
  (void)device;
  (void)stream;
  return 0;
}

void device_api_backend_allocates_and_copies(void) {
  WebFFIDeviceAPI api = {fake_alloc, fake_free, fake_copy, fake_sync, NULL};
  CHECK(WebFFIDeviceAPISet(kDLExtDev, &api) == 0);
  int64_t shape[1] = {4};
  TVMFFIObjectHandle host = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  TVMFFIObjectHandle dev = alloc_tensor((DLDevice){kDLExtDev, 0}, 1, shape);
  TVMFFIObjectHandle back = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  float* in = (float*)dl_of(host)->data;
  for (int i = 0; i < 4; ++i) in[i] = (float)(i * i);
  CHECK(WebFFITensorCopy(host, dev) == 0);
  CHECK(WebFFITensorCopy(dev, back) == 0);
  CHECK_EQ_INT(fake_copies, 2);
  CHECK(memcmp(dl_of(back)->data, in, 16) == 0);
  TVMFFIObjectDecRef(host);
  TVMFFIObjectDecRef(dev);
  TVMFFIObjectDecRef(back);
  CHECK(WebFFIDeviceAPISet(kDLExtDev, NULL) == 0);
  CHECK(WebFFIDeviceAPIGet(kDLExtDev) == NULL);
  CHECK_RAISED("ValueError", "No backend is registered for device type ext_dev (12)");
}

void device_api_cpu_is_fixed(void) {
  WebFFIDeviceAPI api = {fake_alloc, fake_free, fake_copy, fake_sync, NULL};
  CHECK(WebFFIDeviceAPISet(kDLCPU, &api) == -1);
  CHECK_RAISED("ValueError", "The CPU device API is built in and cannot be replaced");
  CHECK(WebFFIDeviceAPISet(999, &api) == -1);
  CHECK_RAISED("ValueError", "Invalid device type 999");
}

void tensor_copy_size_mismatch_is_value_error(void) {
  int64_t a_shape[1] = {4}, b_shape[1] = {5};
  TVMFFIObjectHandle a = alloc_tensor((DLDevice){kDLCPU, 0}, 1, a_shape);
  TVMFFIObjectHandle b = alloc_tensor((DLDevice){kDLCPU, 0}, 1, b_shape);
  CHECK(WebFFITensorCopy(a, b) == -1);
  CHECK_RAISED("ValueError", "WebFFITensorCopy: sizes differ (16 vs 20 bytes)");
  TVMFFIObjectDecRef(a);
  TVMFFIObjectDecRef(b);
}

void dltensor_copy_works_on_raw_dltensors(void) {
  /* Plain DLTensors with no object behind them: what C hands a callback. */
  float src[3] = {1.5f, -2.0f, 4.25f};
  float dst[3] = {0};
  int64_t shape[1] = {3};
  DLTensor a = {src, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor b = {dst, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  CHECK(WebFFIDLTensorCopy(&a, &b) == 0);
  CHECK(memcmp(src, dst, sizeof src) == 0);
  CHECK(WebFFIDLTensorCopy(&a, NULL) == -1);
  CHECK_RAISED("ValueError", "WebFFIDLTensorCopy: NULL DLTensor*");
  int64_t two[1] = {2};
  b.shape = two;
  CHECK(WebFFIDLTensorCopy(&a, &b) == -1);
  CHECK_RAISED("ValueError", "WebFFIDLTensorCopy: sizes differ (12 vs 8 bytes)");
}

void env_streams_set_and_get(void) {
  int s1, s2;
  TVMFFIStreamHandle original = (TVMFFIStreamHandle)1;
  CHECK(TVMFFIEnvGetStream(kDLWebGPU, 0) == NULL);
  CHECK(TVMFFIEnvSetStream(kDLWebGPU, 0, &s1, &original) == 0);
  CHECK(original == NULL);
  CHECK(TVMFFIEnvSetStream(kDLWebGPU, 0, &s2, &original) == 0);
  CHECK(original == &s1);
  CHECK(TVMFFIEnvGetStream(kDLWebGPU, 0) == &s2);
  CHECK(TVMFFIEnvGetStream(kDLWebGPU, 1) == NULL);
  CHECK(TVMFFIEnvCheckSignals() == 0);
}

void typed_arg_dltensor_accepts_both_forms(void) {
  int64_t shape[1] = {2};
  TVMFFIObjectHandle t = alloc_tensor((DLDevice){kDLCPU, 0}, 1, shape);
  TVMFFIAny args[3] = {any_obj(t), any_none(), any_int(1)};
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = dl_of(t);
  DLTensor* out = NULL;
  CHECK(WebFFIArgToDLTensor(NULL, args, 0, &out) == 0 && out == dl_of(t));
  out = NULL;
  CHECK(WebFFIArgToDLTensor(NULL, args, 1, &out) == 0 && out == dl_of(t));
  CHECK(WebFFIArgToDLTensor(NULL, args, 2, &out) == -1);
  CHECK_RAISED("TypeError", "Cannot convert from type `int` to `Tensor`");
  TVMFFIObjectDecRef(t);
}
