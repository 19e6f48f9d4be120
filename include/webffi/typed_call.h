/*
 * webffi: argument checking for C functions with a fixed signature.
 *
 * A safe-call function describes itself once with a WebFFISignature and then
 * reads its arguments through these helpers. On a mismatch they raise the
 * same TypeError upstream tvm-ffi raises for typed functions, e.g.
 *   Mismatched type on argument #0 when calling: `add_one(0: int) -> int`.
 *   Expected `int` but got `float`
 * and return -1, so a function can simply `return -1` after a failed read.
 *
 * Conversions: a float argument accepts int and bool; an int argument accepts
 * bool but not float; a bool argument accepts int. Passing NULL as the
 * signature gives the plain conversion message
 *   Cannot convert from type `None` to `int`
 */
#ifndef WEBFFI_TYPED_CALL_H_
#define WEBFFI_TYPED_CALL_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char* name;             /* the function's name, as shown in messages */
  int32_t num_args;
  const char* const* arg_types; /* num_args type names: "int", "float", "bool", "str", ... */
  const char* ret_type;
} WebFFISignature;

/* TypeError unless num_args matches the signature. */
TVM_FFI_DLL int WebFFICheckNumArgs(const WebFFISignature* sig, int32_t num_args);

TVM_FFI_DLL int WebFFIArgToInt(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                               int64_t* out);
TVM_FFI_DLL int WebFFIArgToFloat(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                                 double* out);
TVM_FFI_DLL int WebFFIArgToBool(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                                int* out);
/* Accepts every string form; *out borrows from the argument. */
TVM_FFI_DLL int WebFFIArgToString(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                                  TVMFFIByteArray* out);
/* An object of type_index or a type derived from it; *out is borrowed. */
TVM_FFI_DLL int WebFFIArgToObject(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                                  int32_t type_index, TVMFFIObjectHandle* out);

/* A tensor argument passed either as an `ffi.Tensor` object or as a raw
 * `DLTensor*`; *out is borrowed. */
TVM_FFI_DLL int WebFFIArgToDLTensor(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                                    DLTensor** out);

/*
 * The function's metadata as upstream records it for a typed function,
 * `{"type_schema":"{\"type\":\"ffi.Function\",\"args\":[RET, ARG...]}"}`,
 * as a new string in *result: what an exported `__tvm_ffi__metadata_NAME`
 * returns (what TVM_FFI_DLL_EXPORT_TYPED_FUNC with
 * TVM_FFI_DLL_EXPORT_INCLUDE_METADATA exports for C++), so tools such as
 * `webffi types` can type the function. The signature's type names become
 * upstream's: str -> ffi.String, bytes -> ffi.Bytes, Tensor -> ffi.Tensor,
 * Array / List / Map / Dict / Shape / Function / Object / Module -> ffi.*,
 * and `Optional[int]` or `Optional<int>` -> Optional with an argument; a
 * NULL return type is Any.
 */
TVM_FFI_DLL int WebFFISignatureMetadata(const WebFFISignature* sig, TVMFFIAny* result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_TYPED_CALL_H_ */
