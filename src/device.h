/* Device names: `cpu`, `cuda:1`, `webgpu:0`. */
#ifndef WEBFFI_SRC_DEVICE_H_
#define WEBFFI_SRC_DEVICE_H_

#include "buffer.h"
#include <tvm/ffi/c_api.h>

/* The name of a device type ("webgpu"), or NULL when it has none. */
const char* wf_device_type_name(int32_t device_type);

/* Parses `NAME` or `NAME:ID`; ValueError `Unknown device: NAME` otherwise. */
int wf_device_from_string(const char* s, size_t n, DLDevice* out);

/* Appends `NAME:ID`. */
void wf_device_format(DLDevice d, wf_buf* out);

/* For the ABI metadata: calls fn for every named device type. */
void wf_device_for_each_name(void (*fn)(int32_t device_type, const char* name, void* ctx),
                             void* ctx);

#endif /* WEBFFI_SRC_DEVICE_H_ */
