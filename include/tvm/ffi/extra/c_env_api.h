/*
 * webffi: the tvm-ffi environment API (streams, tensor allocation,
 * system-library symbols).
 */
#ifndef TVM_FFI_EXTRA_C_ENV_API_H_
#define TVM_FFI_EXTRA_C_ENV_API_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An upstream dlpack.h older than 1.2 may have been included first. */
#if DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION < 2
typedef int (*DLPackManagedTensorAllocator)(
    DLTensor* prototype, struct DLManagedTensorVersioned** out, void* error_ctx,
    void (*SetError)(void* error_ctx, const char* kind, const char* message));
#endif

typedef void* TVMFFIStreamHandle;

TVM_FFI_DLL int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id,
                                   TVMFFIStreamHandle stream,
                                   TVMFFIStreamHandle* opt_out_original_stream);
TVM_FFI_DLL TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);

TVM_FFI_DLL int TVMFFIEnvSetDLPackManagedTensorAllocator(
    DLPackManagedTensorAllocator allocator, int write_to_global_context,
    DLPackManagedTensorAllocator* opt_out_original_allocator);
TVM_FFI_DLL DLPackManagedTensorAllocator TVMFFIEnvGetDLPackManagedTensorAllocator(void);
TVM_FFI_DLL int TVMFFIEnvTensorAlloc(DLTensor* prototype, TVMFFIObjectHandle* out);

/* Returns 0, or -1 with an error raised when an interrupt is pending. */
TVM_FFI_DLL int TVMFFIEnvCheckSignals(void);
TVM_FFI_DLL int TVMFFIEnvRegisterCAPI(const char* name, void* symbol);
TVM_FFI_DLL int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);
TVM_FFI_DLL int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol);
/* Looks func_name up in the imports of the module whose `__tvm_ffi__library_ctx`
 * is library_ctx; *out is borrowed (cached and owned by the module). */
TVM_FFI_DLL int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx,
                                              const char* func_name, TVMFFIObjectHandle* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TVM_FFI_EXTRA_C_ENV_API_H_ */
