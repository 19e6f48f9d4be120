/*
 * webffi: what is specific to webffi rather than the tvm-ffi ABI:
 * the ABI description the JavaScript glue reads, and heap helpers for hosts.
 */
#ifndef WEBFFI_WEBFFI_H_
#define WEBFFI_WEBFFI_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the ABI description below; bumped when its meaning changes. */
#define WEBFFI_ABI_METADATA_VERSION 1

/*
 * A NUL-terminated JSON object describing this build: versions, type
 * indices and keys, struct sizes and field offsets, deleter flags and device
 * names. Hosts read layouts from here instead of hard-coding them. The string
 * is static and stays valid for the life of the runtime.
 */
TVM_FFI_DLL const char* WebFFIGetABIMetadata(void);

/* Heap memory for hosts (JS) that marshal arguments; NULL when out of memory. */
TVM_FFI_DLL void* WebFFIHeapAlloc(size_t size);
TVM_FFI_DLL void WebFFIHeapFree(void* ptr);

/* Strong reference count of an object (0 for NULL); for tests and tools. */
TVM_FFI_DLL uint32_t WebFFIObjectStrongCount(TVMFFIObjectHandle obj);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_WEBFFI_H_ */
