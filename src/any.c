/* Any values: turning views into owned values, equality and stable hashing. */
#include "any.h"

#include <string.h>

#include "error.h"
#include "hash.h"
#include "object.h"
#include "str.h"

void wf_any_release(TVMFFIAny* v) {
  if (wf_any_is_object(v) && v->v_obj != NULL) wf_obj_decref(v->v_obj);
  wf_any_set_none(v);
}

int TVMFFIAnyViewToOwnedAny(const TVMFFIAny* any_view, TVMFFIAny* out) {
  if (any_view == NULL || out == NULL) {
    return wf_err_raise("ValueError", "TVMFFIAnyViewToOwnedAny: NULL argument");
  }
  TVMFFIByteArray bytes;
  switch (any_view->type_index) {
    case kTVMFFIRawStr:
      if (any_view->v_c_str == NULL) {
        return wf_err_raise("ValueError", "TVMFFIAnyViewToOwnedAny: NULL `const char*`");
      }
      wf_any_string_view(any_view, &bytes);
      return wf_str_make(0, bytes.data, bytes.size, out);
    case kTVMFFIByteArrayPtr:
      if (any_view->v_ptr == NULL) {
        return wf_err_raise("ValueError", "TVMFFIAnyViewToOwnedAny: NULL `TVMFFIByteArray*`");
      }
      wf_any_bytes_view(any_view, &bytes);
      return wf_str_make(1, bytes.data, bytes.size, out);
    case kTVMFFIObjectRValueRef: {
      /* Moves the object out of the referenced slot. */
      TVMFFIObject** slot = (TVMFFIObject**)any_view->v_ptr;
      if (slot == NULL || *slot == NULL) {
        wf_any_set_none(out);
        return 0;
      }
      wf_any_set_object(out, *slot);
      *slot = NULL;
      return 0;
    }
    default:
      if (wf_any_is_object(any_view)) {
        if (any_view->v_obj == NULL) {
          return wf_err_raise("ValueError", "TVMFFIAnyViewToOwnedAny: NULL object handle");
        }
        wf_obj_incref(any_view->v_obj);
      }
      *out = *any_view;
      return 0;
  }
}

int wf_any_equal(const TVMFFIAny* a, const TVMFFIAny* b) {
  TVMFFIByteArray x, y;
  if (wf_any_string_view(a, &x)) {
    return wf_any_string_view(b, &y) && x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
  }
  if (wf_any_bytes_view(a, &x)) {
    return wf_any_bytes_view(b, &y) && x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
  }
  return a->type_index == b->type_index && a->v_uint64 == b->v_uint64;
}

uint64_t wf_any_hash_stable(const TVMFFIAny* v) {
  TVMFFIByteArray s;
  if (wf_any_string_view(v, &s)) return wf_hash_bytes(s.data, s.size);
  if (wf_any_bytes_view(v, &s)) return wf_hash_mix(wf_hash_bytes(s.data, s.size));
  return wf_hash_mix(v->v_uint64 ^ wf_hash_mix((uint64_t)(uint32_t)v->type_index));
}
