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
 * TVMFFIFunctionCall for up to four arguments of one 32-bit word each,
 * passed as wasm parameters: the JS glue's fast path, cheaper than writing
 * Anys from JS. `kinds` holds two bits per argument (argument i at bits 2i
 * and 2i+1), one of WEBFFI_WORD_*; an object's type comes from its header.
 * Returns -1 with the error raised, 0 when the result is None, 1 when
 * `result` holds another value (owned). Unlike TVMFFIFunctionCall, which
 * trusts its handle as upstream's does, it checks `func` (NULL, not a
 * Function), `num_args` and `result` first: handles reach it from JS.
 */
#define WEBFFI_WORD_INT 0  /* int32, sign-extended */
#define WEBFFI_WORD_NONE 1 /* the word is ignored */
#define WEBFFI_WORD_BOOL 2
#define WEBFFI_WORD_OBJECT 3 /* a TVMFFIObject* (wasm32: pointers are one word) */
TVM_FFI_DLL int WebFFIFunctionCallWords(TVMFFIObjectHandle func, int32_t num_args, int32_t kinds,
                                        int32_t w0, int32_t w1, int32_t w2, int32_t w3,
                                        TVMFFIAny* result);

/*
 * Wasm builds only: a Function whose calls go to the JS function behind
 * `js_handle` (the glue's handle table), and an ffi.OpaquePyObject (index 74)
 * holding any JS value. Both release the handle through the host when they
 * die; on failure the handle stays the caller's.
 */
TVM_FFI_DLL int WebFFIFunctionFromJS(int32_t js_handle, TVMFFIObjectHandle* out);
TVM_FFI_DLL int WebFFIOpaqueFromJS(int32_t js_handle, TVMFFIObjectHandle* out);

/*
 * TVMFFIErrorMoveFromRaised for the JS glue: the error comes out with its
 * backtrace still a deferred capture when it has one, whose token this
 * returns (0 when the backtrace is already text). The glue formats the
 * capture itself, when someone reads the backtrace.
 */
TVM_FFI_DLL int32_t WebFFIErrorMoveFromRaisedPending(TVMFFIObjectHandle* result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_WEBFFI_H_ */
