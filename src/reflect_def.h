/* Defining reflected object types from C: a type with a creator, read-only
 * fields over plain C layouts, and methods. Used by the runtime's own types
 * that upstream's headers also name (AccessPath, Enum, ...), so the type
 * keys, field names and layouts agree with upstream's C++ declarations. */
#ifndef WEBFFI_SRC_REFLECT_DEF_H_
#define WEBFFI_SRC_REFLECT_DEF_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>

/* Registers (or finds) type KEY under PARENT at index (-1: dynamic) with
 * metadata: total_size, the structural kind and an optional creator. */
int32_t wf_def_type(const char* key, int32_t index, int32_t parent, int32_t total_size,
                    TVMFFISEqHashKind kind, int (*creator)(TVMFFIObjectHandle* out));

/* Field kinds over a C layout. */
typedef enum {
  WF_DEF_ANY,   /* TVMFFIAny */
  WF_DEF_OBJ,   /* TVMFFIObject* (NULL reads as None) */
  WF_DEF_INT64, /* int64_t */
  WF_DEF_INT32, /* int32_t */
} wf_def_kind;

/* A read-only field; extra_flags adds e.g. kTVMFFIFieldFlagBitMaskSEqHashIgnore. */
int wf_def_field(int32_t type_index, const char* name, size_t offset, wf_def_kind kind,
                 int64_t extra_flags);

/* A method (is_static: no self argument). */
int wf_def_method(int32_t type_index, const char* name, TVMFFISafeCallType fn, int is_static);

/* Makes sure the attribute column NAME exists (as upstream's core does at
 * start for the columns it reads), even when no type sets it. */
int wf_def_attr_column(const char* name);

/* Sets attribute NAME of a type to an opaque C pointer or a C function. */
int wf_def_attr_ptr(int32_t type_index, const char* name, void* ptr);
int wf_def_attr_func(int32_t type_index, const char* name, TVMFFISafeCallType fn);

#endif /* WEBFFI_SRC_REFLECT_DEF_H_ */
