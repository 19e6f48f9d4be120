/* Tensors: a DLTensor with owned shape/strides, its data owned through the
 * device API, a DLPack producer, or a source tensor it views. */
#include "tensor.h"

#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <webffi/device_api.h>

#include "device_api.h"
#include "error.h"
#include "object.h"
#include "type_registry.h"

typedef enum {
  WF_TENSOR_DEVICE_ALLOCATION,
  WF_TENSOR_DLPACK,
  WF_TENSOR_DLPACK_VERSIONED,
  WF_TENSOR_VIEW,
} wf_tensor_owner_kind;

typedef struct {
  DLTensor dl;
  wf_tensor_owner_kind owner_kind;
  void* owner; /* DLManagedTensor(Versioned)*, the viewed tensor, or NULL */
  int64_t dims[]; /* shape, then strides: 2 * ndim */
} wf_tensor_payload;

static void wf_tensor_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_tensor_payload* p = WF_OBJ_CELL(self, wf_tensor_payload);
    switch (p->owner_kind) {
      case WF_TENSOR_DEVICE_ALLOCATION: {
        const WebFFIDeviceAPI* api = wf_device_api_find((int32_t)p->dl.device.device_type);
        if (api != NULL) api->free(api->ctx, p->dl.device, p->dl.data);
        break;
      }
      case WF_TENSOR_DLPACK: {
        DLManagedTensor* mt = (DLManagedTensor*)p->owner;
        if (mt->deleter != NULL) mt->deleter(mt);
        break;
      }
      case WF_TENSOR_DLPACK_VERSIONED: {
        DLManagedTensorVersioned* mt = (DLManagedTensorVersioned*)p->owner;
        if (mt->deleter != NULL) mt->deleter(mt);
        break;
      }
      case WF_TENSOR_VIEW:
        wf_obj_decref((TVMFFIObject*)p->owner);
        break;
    }
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

int wf_tensor_is_contiguous(const DLTensor* t) {
  if (t->strides == NULL) return 1;
  int64_t expected = 1;
  for (int32_t i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expected) return 0;
    expected *= t->shape[i];
  }
  return 1;
}

int64_t WebFFITensorNumBytes(const DLTensor* t) {
  if (t == NULL || t->ndim < 0 || (t->ndim > 0 && t->shape == NULL)) {
    wf_err_raise("ValueError", "Invalid tensor description");
    return -1;
  }
  int64_t count = 1;
  /* The product of the nonzero extents must fit too: strides are made
   * from it, and an empty tensor may still have huge other extents. */
  int64_t nonzero = 1;
  for (int32_t i = 0; i < t->ndim; ++i) {
    int64_t extent = t->shape[i];
    if (extent < 0) {
      wf_err_raise("ValueError", "Tensor shape has a negative extent %lld at axis %d",
                   (long long)extent, (int)i);
      return -1;
    }
    if (extent == 0) {
      count = 0;
      continue;
    }
    if (nonzero > INT64_MAX / extent) goto overflow;
    nonzero *= extent;
    count *= extent;
  }
  int64_t element_bits = (int64_t)t->dtype.bits * (int64_t)t->dtype.lanes;
  if (count != 0 && count > (INT64_MAX - 7) / (element_bits ? element_bits : 1)) goto overflow;
  return (count * element_bits + 7) / 8;
overflow:
  wf_err_raise("ValueError", "Tensor size overflows 64 bits");
  return -1;
}

/* A new tensor shaped like `proto` (strides NULL: compact), data unset. */
static TVMFFIObject* wf_tensor_new(const DLTensor* proto, wf_tensor_owner_kind kind, void* owner) {
  if (proto->ndim < 0 || proto->ndim > 1024 || (proto->ndim > 0 && proto->shape == NULL)) {
    wf_err_raise("ValueError", "Invalid tensor ndim %d", (int)proto->ndim);
    return NULL;
  }
  if (WebFFITensorNumBytes(proto) < 0) return NULL;
  size_t ndim = (size_t)proto->ndim;
  TVMFFIObject* obj = wf_obj_alloc(
      sizeof(TVMFFIObject) + sizeof(wf_tensor_payload) + 2 * ndim * sizeof(int64_t), 8,
      kTVMFFITensor, wf_tensor_deleter);
  if (obj == NULL) return NULL;
  wf_tensor_payload* p = WF_OBJ_CELL(obj, wf_tensor_payload);
  p->dl = *proto;
  p->dl.shape = p->dims;
  p->dl.strides = p->dims + ndim;
  if (ndim) memcpy(p->dl.shape, proto->shape, ndim * sizeof(int64_t));
  int64_t stride = 1;
  for (size_t i = ndim; i-- > 0;) {
    p->dl.strides[i] = proto->strides != NULL ? proto->strides[i] : stride;
    stride *= proto->shape[i];
  }
  p->owner_kind = kind;
  p->owner = owner;
  return obj;
}

static int wf_tensor_check_dlpack(const DLTensor* dl, int32_t require_alignment,
                                  int32_t require_contiguous) {
  if (require_alignment > 0 &&
      ((uintptr_t)dl->data + (uintptr_t)dl->byte_offset) % (uintptr_t)require_alignment != 0) {
    return wf_err_raise("ValueError", "FromDLPack: Data is not aligned to %d bytes.",
                        (int)require_alignment);
  }
  if (require_contiguous && !wf_tensor_is_contiguous(dl)) {
    return wf_err_raise("ValueError", "FromDLPack: Tensor is not contiguous.");
  }
  return 0;
}

/* On failure the producer keeps ownership: its deleter is not called. */
int TVMFFITensorFromDLPack(DLManagedTensor* from, int32_t require_alignment,
                           int32_t require_contiguous, TVMFFIObjectHandle* out) {
  if (from == NULL || out == NULL) return wf_err_raise("ValueError", "FromDLPack: NULL argument");
  if (wf_tensor_check_dlpack(&from->dl_tensor, require_alignment, require_contiguous) != 0) {
    return -1;
  }
  TVMFFIObject* t = wf_tensor_new(&from->dl_tensor, WF_TENSOR_DLPACK, from);
  if (t == NULL) return -1;
  *out = t;
  return 0;
}

int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from, int32_t require_alignment,
                                    int32_t require_contiguous, TVMFFIObjectHandle* out) {
  if (from == NULL || out == NULL) return wf_err_raise("ValueError", "FromDLPack: NULL argument");
  if (from->version.major != DLPACK_MAJOR_VERSION) {
    return wf_err_raise("ValueError", "FromDLPack: unsupported DLPack major version %u",
                        (unsigned)from->version.major);
  }
  if (wf_tensor_check_dlpack(&from->dl_tensor, require_alignment, require_contiguous) != 0) {
    return -1;
  }
  TVMFFIObject* t = wf_tensor_new(&from->dl_tensor, WF_TENSOR_DLPACK_VERSIONED, from);
  if (t == NULL) return -1;
  *out = t;
  return 0;
}

static int wf_tensor_check(TVMFFIObjectHandle t, const char* fn) {
  if (t == NULL) return wf_err_raise("ValueError", "%s: tensor handle is NULL", fn);
  int32_t index = ((TVMFFIObject*)t)->type_index;
  if (index != kTVMFFITensor) {
    return wf_err_raise("TypeError", "%s: expected `ffi.Tensor` but got `%s`", fn,
                        wf_type_key(index));
  }
  return 0;
}

/* The exported DLPack structs hold a reference to the tensor they describe. */
static void wf_tensor_managed_deleter(DLManagedTensor* self) {
  wf_obj_decref((TVMFFIObject*)self->manager_ctx);
  free(self);
}

static void wf_tensor_managed_versioned_deleter(DLManagedTensorVersioned* self) {
  wf_obj_decref((TVMFFIObject*)self->manager_ctx);
  free(self);
}

int TVMFFITensorToDLPack(TVMFFIObjectHandle from, DLManagedTensor** out) {
  if (wf_tensor_check(from, "ToDLPack") != 0) return -1;
  DLManagedTensor* mt = (DLManagedTensor*)calloc(1, sizeof(DLManagedTensor));
  if (mt == NULL) return wf_err_raise_oom(sizeof(DLManagedTensor));
  mt->dl_tensor = *wf_tensor_dl(from);
  mt->manager_ctx = from;
  mt->deleter = wf_tensor_managed_deleter;
  wf_obj_incref((TVMFFIObject*)from);
  *out = mt;
  return 0;
}

int TVMFFITensorToDLPackVersioned(TVMFFIObjectHandle from, DLManagedTensorVersioned** out) {
  if (wf_tensor_check(from, "ToDLPack") != 0) return -1;
  DLManagedTensorVersioned* mt =
      (DLManagedTensorVersioned*)calloc(1, sizeof(DLManagedTensorVersioned));
  if (mt == NULL) return wf_err_raise_oom(sizeof(DLManagedTensorVersioned));
  mt->version.major = DLPACK_MAJOR_VERSION;
  mt->version.minor = DLPACK_MINOR_VERSION;
  mt->dl_tensor = *wf_tensor_dl(from);
  mt->manager_ctx = from;
  mt->deleter = wf_tensor_managed_versioned_deleter;
  wf_obj_incref((TVMFFIObject*)from);
  *out = mt;
  return 0;
}

/* The view is the prototype (data, device, dtype, shape, strides,
 * byte_offset: a strided window anywhere in the source, as upstream) and
 * keeps the source alive; nothing checks that it stays in bounds. */
int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source, const DLTensor* prototype,
                                 TVMFFIObjectHandle* out) {
  if (wf_tensor_check(source, "TVMFFITensorCreateUnsafeView") != 0) return -1;
  if (prototype == NULL || out == NULL) {
    return wf_err_raise("ValueError", "TVMFFITensorCreateUnsafeView: NULL argument");
  }
  TVMFFIObject* t = wf_tensor_new(prototype, WF_TENSOR_VIEW, source);
  if (t == NULL) return -1;
  wf_obj_incref((TVMFFIObject*)source);
  *out = t;
  return 0;
}

/* Errors reported by a user allocator through DLPack's set_error callback. */
static void wf_tensor_allocator_error(void* error_ctx, const char* kind, const char* message) {
  *(int*)error_ctx = 1;
  TVMFFIErrorSetRaisedFromCStr(kind, message);
}

int TVMFFIEnvTensorAlloc(DLTensor* prototype, TVMFFIObjectHandle* out) {
  if (prototype == NULL || out == NULL) {
    return wf_err_raise("ValueError", "TVMFFIEnvTensorAlloc: NULL argument");
  }
  DLPackManagedTensorAllocator allocator = TVMFFIEnvGetDLPackManagedTensorAllocator();
  if (allocator != NULL) {
    DLManagedTensorVersioned* mt = NULL;
    int reported = 0;
    if (allocator(prototype, &mt, &reported, wf_tensor_allocator_error) != 0 || mt == NULL) {
      if (!reported) wf_err_raise("RuntimeError", "The DLPack tensor allocator failed");
      return -1;
    }
    if (TVMFFITensorFromDLPackVersioned(mt, 0, 0, out) != 0) {
      if (mt->deleter != NULL) mt->deleter(mt);
      return -1;
    }
    return 0;
  }
  const WebFFIDeviceAPI* api = WebFFIDeviceAPIGet((int32_t)prototype->device.device_type);
  if (api == NULL) return -1;
  int64_t nbytes = WebFFITensorNumBytes(prototype);
  if (nbytes < 0) return -1;
  if ((uint64_t)nbytes > SIZE_MAX) return wf_err_raise_oom((uint64_t)nbytes);
  DLTensor proto = *prototype;
  proto.strides = NULL;
  proto.byte_offset = 0;
  TVMFFIObject* t = wf_tensor_new(&proto, WF_TENSOR_DEVICE_ALLOCATION, NULL);
  if (t == NULL) return -1;
  void* data = api->alloc(api->ctx, proto.device, (size_t)nbytes, 64);
  if (data == NULL) {
    wf_obj_free_space(t); /* owns nothing yet: skip the deleter */
    return -1;
  }
  wf_tensor_dl(t)->data = data;
  *out = t;
  return 0;
}

/* Copies between two DLTensors; `what` names the entry point in errors. */
static int wf_dltensor_copy(const DLTensor* a, const DLTensor* b, const char* what) {
  int64_t na = WebFFITensorNumBytes(a), nb = WebFFITensorNumBytes(b);
  if (na < 0 || nb < 0) return -1;
  if (na != nb) {
    return wf_err_raise("ValueError", "%s: sizes differ (%lld vs %lld bytes)", what,
                        (long long)na, (long long)nb);
  }
  if (!wf_tensor_is_contiguous(a) || !wf_tensor_is_contiguous(b)) {
    return wf_err_raise("ValueError", "%s: both tensors must be contiguous", what);
  }
  DLDevice device = a->device.device_type != kDLCPU ? a->device : b->device;
  const WebFFIDeviceAPI* api = WebFFIDeviceAPIGet((int32_t)device.device_type);
  if (api == NULL) return -1;
  return api->copy(api->ctx, a->data, (size_t)a->byte_offset, a->device, b->data,
                   (size_t)b->byte_offset, b->device, (size_t)na,
                   TVMFFIEnvGetStream((int32_t)device.device_type, device.device_id));
}

int WebFFITensorCopy(TVMFFIObjectHandle from, TVMFFIObjectHandle to) {
  if (wf_tensor_check(from, "WebFFITensorCopy") != 0) return -1;
  if (wf_tensor_check(to, "WebFFITensorCopy") != 0) return -1;
  return wf_dltensor_copy(wf_tensor_dl(from), wf_tensor_dl(to), "WebFFITensorCopy");
}

int WebFFIDLTensorCopy(const DLTensor* from, const DLTensor* to) {
  if (from == NULL || to == NULL) {
    return wf_err_raise("ValueError", "WebFFIDLTensorCopy: NULL DLTensor*");
  }
  return wf_dltensor_copy(from, to, "WebFFIDLTensorCopy");
}
