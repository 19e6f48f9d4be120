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

/*
 * TVMFFIFunctionCall for up to four int arguments passed as wasm parameters
 * (the JS glue's fast path: cheaper than writing Anys from JS). Returns -1
 * with the error raised, 0 when the result is None, 1 when `result` holds
 * another value (owned).
 */
TVM_FFI_DLL int WebFFIFunctionCallInt32(TVMFFIObjectHandle func, int32_t num_args, int32_t a0,
                                        int32_t a1, int32_t a2, int32_t a3, TVMFFIAny* result);

/*
 * Wasm builds only: a Function whose calls go to the JS function behind
 * `js_handle` (the glue's handle table), and an ffi.OpaquePyObject (index 74)
 * holding any JS value. Both release the handle through the host when they
 * die; on failure the handle stays the caller's.
 */
TVM_FFI_DLL int WebFFIFunctionFromJS(int32_t js_handle, TVMFFIObjectHandle* out);
TVM_FFI_DLL int WebFFIOpaqueFromJS(int32_t js_handle, TVMFFIObjectHandle* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_WEBFFI_H_ */
