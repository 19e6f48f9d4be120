/*
 * webffi: the device API registry. Each device type has one implementation
 * of allocate / free / copy / synchronize. CPU is built in; backends for
 * other device types (WebGPU, registered from JS at load) fill in theirs.
 */
#ifndef WEBFFI_DEVICE_API_H_
#define WEBFFI_DEVICE_API_H_

#include <tvm/ffi/extra/c_env_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct WebFFIDeviceAPI {
  /* Returns device memory (a pointer or an opaque handle), or NULL with an
   * error raised. alignment is a power of two. */
  void* (*alloc)(void* ctx, DLDevice device, size_t nbytes, size_t alignment);
  void (*free)(void* ctx, DLDevice device, void* data);
  /* Copies nbytes from (from + from_offset) to (to + to_offset); either side
   * may be host memory (a kDLCPU device). Returns 0 or -1 (error raised). */
  int (*copy)(void* ctx, const void* from, size_t from_offset, DLDevice from_device, void* to,
              size_t to_offset, DLDevice to_device, size_t nbytes, TVMFFIStreamHandle stream);
  /* Waits for queued work on the stream. Returns 0 or -1 (error raised). */
  int (*sync)(void* ctx, DLDevice device, TVMFFIStreamHandle stream);
  void* ctx;
} WebFFIDeviceAPI;

/* Installs the implementation for a device type (copied; NULL removes it).
 * kDLCPU cannot be replaced. */
TVM_FFI_DLL int WebFFIDeviceAPISet(int32_t device_type, const WebFFIDeviceAPI* api);
/* The implementation for a device type, or NULL with a ValueError raised. */
TVM_FFI_DLL const WebFFIDeviceAPI* WebFFIDeviceAPIGet(int32_t device_type);

/* Copies all bytes of one tensor into another of the same size; both must
 * be contiguous. Uses the API of the non-CPU side. */
TVM_FFI_DLL int WebFFITensorCopy(TVMFFIObjectHandle from, TVMFFIObjectHandle to);
/* The same for two DLTensors (a borrowed `DLTensor*` has no object). */
TVM_FFI_DLL int WebFFIDLTensorCopy(const DLTensor* from, const DLTensor* to);

/* Bytes a contiguous tensor of this shape and dtype occupies, or -1 with a
 * ValueError raised (negative extents, overflow). */
TVM_FFI_DLL int64_t WebFFITensorNumBytes(const DLTensor* tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_DEVICE_API_H_ */
