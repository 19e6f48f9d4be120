/* String and Bytes values, heap and small (inline) forms. */
#ifndef WEBFFI_SRC_STR_H_
#define WEBFFI_SRC_STR_H_

#include <tvm/ffi/c_api.h>

/* Longest content that fits inline in an Any (plus the NUL). */
#define WF_SMALL_STR_MAX 7

/* Makes an owned String (is_bytes == 0) or Bytes value, small when it fits. */
int wf_str_make(int is_bytes, const char* data, size_t size, TVMFFIAny* out);

/* A heap String/Bytes object (never small); NULL with MemoryError raised. */
TVMFFIObject* wf_str_new_object(int32_t type_index, const char* data, size_t size);

/* Content of any string form (String, SmallStr, RawStr): 1 if it is one. */
int wf_any_string_view(const TVMFFIAny* v, TVMFFIByteArray* out);
/* Content of any bytes form (Bytes, SmallBytes, ByteArrayPtr): 1 if it is one. */
int wf_any_bytes_view(const TVMFFIAny* v, TVMFFIByteArray* out);

#endif /* WEBFFI_SRC_STR_H_ */
