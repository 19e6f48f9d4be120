/* Strings and bytes: one allocation holding the cell and the NUL-ended data. */
#include "str.h"

#include <string.h>

#include "any.h"
#include "error.h"
#include "object.h"

TVMFFIObject* wf_str_new_object(int32_t type_index, const char* data, size_t size) {
  if (size > SIZE_MAX - sizeof(TVMFFIObject) - sizeof(TVMFFIByteArray) - 1) {
    wf_err_raise_oom(size);
    return NULL;
  }
  TVMFFIObject* obj = wf_obj_alloc(sizeof(TVMFFIObject) + sizeof(TVMFFIByteArray) + size + 1, 8,
                                   type_index, wf_obj_plain_deleter);
  if (obj == NULL) return NULL;
  TVMFFIByteArray* cell = WF_OBJ_CELL(obj, TVMFFIByteArray);
  char* bytes = (char*)(cell + 1);
  if (size) memcpy(bytes, data, size);
  bytes[size] = '\0';
  cell->data = bytes;
  cell->size = size;
  return obj;
}

int wf_str_make(int is_bytes, const char* data, size_t size, TVMFFIAny* out) {
  if (size <= WF_SMALL_STR_MAX) {
    out->type_index = is_bytes ? kTVMFFISmallBytes : kTVMFFISmallStr;
    out->small_str_len = (uint32_t)size;
    out->v_uint64 = 0;
    if (size) memcpy(out->v_bytes, data, size);
    return 0;
  }
  TVMFFIObject* obj = wf_str_new_object(is_bytes ? kTVMFFIBytes : kTVMFFIStr, data, size);
  if (obj == NULL) return -1;
  wf_any_set_object(out, obj);
  return 0;
}

static int wf_str_from_byte_array(int is_bytes, const TVMFFIByteArray* in, TVMFFIAny* out) {
  const char* fn = is_bytes ? "TVMFFIBytesFromByteArray" : "TVMFFIStringFromByteArray";
  if (in == NULL || out == NULL) return wf_err_raise("ValueError", "%s: NULL argument", fn);
  if (in->data == NULL && in->size != 0) {
    return wf_err_raise("ValueError", "%s: data is NULL but size is %zu", fn, in->size);
  }
  return wf_str_make(is_bytes, in->data, in->size, out);
}

int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return wf_str_from_byte_array(0, input, out);
}

int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return wf_str_from_byte_array(1, input, out);
}

int wf_any_string_view(const TVMFFIAny* v, TVMFFIByteArray* out) {
  switch (v->type_index) {
    case kTVMFFISmallStr:
      out->data = v->v_bytes;
      out->size = v->small_str_len;
      return 1;
    case kTVMFFIStr:
      *out = *WF_OBJ_CELL(v->v_obj, TVMFFIByteArray);
      return 1;
    case kTVMFFIRawStr:
      out->data = v->v_c_str;
      out->size = strlen(v->v_c_str);
      return 1;
    default:
      return 0;
  }
}

int wf_any_bytes_view(const TVMFFIAny* v, TVMFFIByteArray* out) {
  switch (v->type_index) {
    case kTVMFFISmallBytes:
      out->data = v->v_bytes;
      out->size = v->small_str_len;
      return 1;
    case kTVMFFIBytes:
      *out = *WF_OBJ_CELL(v->v_obj, TVMFFIByteArray);
      return 1;
    case kTVMFFIByteArrayPtr:
      *out = *(const TVMFFIByteArray*)v->v_ptr;
      return 1;
    default:
      return 0;
  }
}
