/* The device API registry, with the built-in CPU implementation. */
#include <stdlib.h>
#include <string.h>
#include "device_api.h"

#include "device.h"
#include "error.h"

/* CPU tensor data is 64-byte aligned (cache lines, SIMD loads). */
#define WF_CPU_ALIGNMENT 64
#define WF_DEVICE_TYPE_LIMIT 64

static void* wf_cpu_alloc(void* ctx, DLDevice device, size_t nbytes, size_t alignment) {
  (void)ctx;
  (void)device;
  if (alignment < WF_CPU_ALIGNMENT) alignment = WF_CPU_ALIGNMENT;
  if (nbytes > SIZE_MAX - alignment) {
    wf_err_raise_oom(nbytes);
    return NULL;
  }
  /* aligned_alloc wants a multiple of the alignment, and never 0 bytes. */
  size_t size = nbytes == 0 ? alignment : (nbytes + alignment - 1) & ~(alignment - 1);
  void* data = aligned_alloc(alignment, size);
  if (data == NULL) wf_err_raise_oom(nbytes);
  return data;
}

static void wf_cpu_free(void* ctx, DLDevice device, void* data) {
  (void)ctx;
  (void)device;
  free(data);
}

static int wf_cpu_copy(void* ctx, const void* from, size_t from_offset, DLDevice from_device,
                       void* to, size_t to_offset, DLDevice to_device, size_t nbytes,
                       TVMFFIStreamHandle stream) {
  (void)ctx;
  (void)from_device;
  (void)to_device;
  (void)stream;
  if (nbytes) memmove((char*)to + to_offset, (const char*)from + from_offset, nbytes);
  return 0;
}

static int wf_cpu_sync(void* ctx, DLDevice device, TVMFFIStreamHandle stream) {
  (void)ctx;
  (void)device;
  (void)stream;
  return 0;
}

static WebFFIDeviceAPI wf_device_apis[WF_DEVICE_TYPE_LIMIT] = {
    [kDLCPU] = {wf_cpu_alloc, wf_cpu_free, wf_cpu_copy, wf_cpu_sync, NULL},
};

static int wf_device_api_index(int32_t device_type) {
  if (device_type <= 0 || device_type >= WF_DEVICE_TYPE_LIMIT) {
    return wf_err_raise("ValueError", "Invalid device type %d", (int)device_type);
  }
  return 0;
}

int WebFFIDeviceAPISet(int32_t device_type, const WebFFIDeviceAPI* api) {
  if (wf_device_api_index(device_type) != 0) return -1;
  if (device_type == kDLCPU) {
    return wf_err_raise("ValueError", "The CPU device API is built in and cannot be replaced");
  }
  if (api != NULL && (api->alloc == NULL || api->free == NULL || api->copy == NULL ||
                      api->sync == NULL)) {
    return wf_err_raise("ValueError", "WebFFIDeviceAPISet: every function must be set");
  }
  if (api != NULL) {
    wf_device_apis[device_type] = *api;
  } else {
    memset(&wf_device_apis[device_type], 0, sizeof(WebFFIDeviceAPI));
  }
  return 0;
}

const WebFFIDeviceAPI* WebFFIDeviceAPIGet(int32_t device_type) {
  if (wf_device_api_index(device_type) != 0) return NULL;
  if (wf_device_apis[device_type].alloc == NULL) {
    const char* name = wf_device_type_name(device_type);
    wf_err_raise("ValueError", "No backend is registered for device type %s (%d)",
                 name != NULL ? name : "unknown", (int)device_type);
    return NULL;
  }
  return &wf_device_apis[device_type];
}

const WebFFIDeviceAPI* wf_device_api_find(int32_t device_type) {
  if (device_type <= 0 || device_type >= WF_DEVICE_TYPE_LIMIT) return NULL;
  return wf_device_apis[device_type].alloc != NULL ? &wf_device_apis[device_type] : NULL;
}
