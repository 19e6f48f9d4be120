/* Enum singletons (src/enum.c) as other parts of the core see them. */
#ifndef WEBFFI_SRC_ENUM_H_
#define WEBFFI_SRC_ENUM_H_

#include <tvm/ffi/c_api.h>

/* What indexes the singletons of a type: WF_ENUM_INT for classes derived
 * from ffi.IntEnum, WF_ENUM_STR for the other ffi.Enum classes. */
typedef enum { WF_ENUM_NONE = 0, WF_ENUM_STR = 1, WF_ENUM_INT = 2 } wf_enum_kind;
wf_enum_kind wf_enum_kind_of(int32_t type_index);

/* An enum singleton's canonical index (borrowed): its `_int_index` as an
 * Int for an IntEnum, else its `_str_index` String. */
const TVMFFIAny* wf_enum_canonical_index(TVMFFIObject* obj, TVMFFIAny* int_slot);

/* An enum singleton's name, its `_str_index` String (borrowed). */
const TVMFFIAny* wf_enum_name(TVMFFIObject* obj);

/* The registered singleton (new reference) of enum class type_index whose
 * canonical index is `index`; ValueError when there is none. */
int wf_enum_lookup(int32_t type_index, const TVMFFIAny* index, TVMFFIAny* out);

#endif /* WEBFFI_SRC_ENUM_H_ */
