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
 * Anys from JS. `kinds` holds four bits per argument (argument i at bits 4i
 * to 4i+3), one of WEBFFI_WORD_*; an object's type comes from its header.
 * Returns -1 with the error raised, 0 when the result is None, 1 when
 * `result` holds another value (owned). Unlike TVMFFIFunctionCall, which
 * trusts its handle as upstream's does, it checks `func` (NULL, not a
 * Function), `num_args`, `result` and each kind first: handles reach it
 * from JS.
 */
#define WEBFFI_WORD_INT 0  /* int32, sign-extended */
#define WEBFFI_WORD_NONE 1 /* the word is ignored */
#define WEBFFI_WORD_BOOL 2
#define WEBFFI_WORD_OBJECT 3  /* a TVMFFIObject* (wasm32: pointers are one word) */
#define WEBFFI_WORD_RAW_STR 4 /* a NUL-terminated UTF-8 `const char*`, as kTVMFFIRawStr */
#define WEBFFI_WORD_BITS 4
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

/*
 * After a JS exception that is not a trap (a stack overflow) unwound wasm
 * frames, the skipped frames restored nothing: this puts the core's per-call
 * state (release nesting, repr depth, the init-once lock, the peer budget's
 * nesting) back to where the JS that runs now stands: inside the `depth`th
 * nested JS callback (wasm builds keep a mark per running callback), or
 * with depth 0 outside every call (objects left waiting are then
 * released). Returns the stack pointer to restore: the callback's, or 0
 * (depth 0, or no mark: the host's own base).
 */
TVM_FFI_DLL uint32_t WebFFIUnwind(int32_t depth);
/* Wasm builds: the shadow stack pointer (read; set after an unwind). */
TVM_FFI_DLL uint32_t WebFFIStackPointer(void);
TVM_FFI_DLL void WebFFIStackRestore(uint32_t sp);

/*
 * The runtime-wide budget of peers (TVM RPC clients, worker-session peers),
 * which every peer's requests are charged against together, whatever each
 * one's own limits: while a request runs (between WebFFIPeerEnter and
 * WebFFIPeerLeave; the RPC endpoint enters by itself) wasm memory may not
 * grow past `memory_bytes` (default 1.5 GiB: the rest is the owner's),
 * peers together hold at most `device_bytes` of device memory
 * (default 1 GiB), and a runtime.RPCTimeEvaluator evaluation runs at most
 * `timer_ms` synchronously (default 2000). 0 keeps a setting.
 * WebFFIPeerBudgetGet(0..5): memory, device budget, device held, timer ms,
 * peer requests running now, heap bytes in use (wasm builds count them).
 */
TVM_FFI_DLL void WebFFIPeerEnter(void);
TVM_FFI_DLL void WebFFIPeerLeave(void);
TVM_FFI_DLL void WebFFIPeerBudgetSet(uint64_t memory_bytes, uint64_t device_bytes,
                                     uint32_t timer_ms);
TVM_FFI_DLL uint64_t WebFFIPeerBudgetGet(int32_t what);
/*
 * Device memory a peer's request allocates, charged to `device_bytes` until
 * it is freed, whatever asked for it (kDevAllocData, a kernel's output, a
 * tensor a session keeps): the device backends call Take for each
 * allocation and Give when a charged one is freed. Take returns 1 (charged),
 * 0 (not charged: no peer request is running, or the RPC endpoint charged
 * it itself) or -1 (refused: past the budget).
 */
TVM_FFI_DLL int32_t WebFFIPeerDeviceTake(uint64_t nbytes);
TVM_FFI_DLL void WebFFIPeerDeviceGive(uint64_t nbytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_WEBFFI_H_ */
