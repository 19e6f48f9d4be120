/* Any: view-to-owned conversion, equality and hashing. */
#include "../../src/any.h"
#include "../../src/map.h"
#include "../../src/str.h"
#include "harness.h"

void any_raw_str_view_becomes_owned_string(void) {
  TVMFFIAny view = any_cstr("short"), out;
  CHECK(TVMFFIAnyViewToOwnedAny(&view, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFISmallStr);
  CHECK_EQ_STR(any_str(&out), "short");
  view = any_cstr("a longer string");
  CHECK(TVMFFIAnyViewToOwnedAny(&view, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFIStr);
  CHECK_EQ_STR(any_str(&out), "a longer string");
  wf_any_release(&out);
  CHECK_EQ_INT(out.type_index, kTVMFFINone);
}

void any_byte_array_view_becomes_owned_bytes(void) {
  TVMFFIByteArray bytes = {"0123456789", 10};
  TVMFFIAny view = any_none(), out;
  view.type_index = kTVMFFIByteArrayPtr;
  view.v_ptr = &bytes;
  CHECK(TVMFFIAnyViewToOwnedAny(&view, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFIBytes);
  wf_any_release(&out);
}

void any_object_view_to_owned_adds_reference(void) {
  TVMFFIByteArray in = {"heap string!", 12};
  TVMFFIAny s, owned;
  CHECK(TVMFFIStringFromByteArray(&in, &s) == 0);
  CHECK(TVMFFIAnyViewToOwnedAny(&s, &owned) == 0);
  CHECK(owned.v_obj == s.v_obj);
  CHECK_EQ_INT(((TVMFFIObject*)s.v_obj)->combined_ref_count & 0xffffffffu, 2);
  wf_any_release(&owned);
  wf_any_release(&s);
}

void any_small_string_equals_heap_string(void) {
  TVMFFIAny small, heap = any_none();
  TVMFFIByteArray in = {"abc", 3};
  CHECK(TVMFFIStringFromByteArray(&in, &small) == 0);
  TVMFFIObject* obj = wf_str_new_object(kTVMFFIStr, "abc", 3);
  CHECK(obj != NULL);
  wf_any_set_object(&heap, obj);
  TVMFFIAny raw = any_cstr("abc");
  CHECK(wf_any_equal(&small, &heap));
  CHECK(wf_any_equal(&heap, &raw));
  CHECK_EQ_INT(wf_map_hash(&small), wf_map_hash(&heap));
  TVMFFIAny other = any_cstr("abd");
  CHECK(!wf_any_equal(&small, &other));
  /* the same bytes as Bytes are a different value */
  TVMFFIAny bytes;
  CHECK(TVMFFIBytesFromByteArray(&in, &bytes) == 0);
  CHECK(!wf_any_equal(&small, &bytes));
  wf_any_release(&heap);
}

void any_int_bool_float_are_distinct(void) {
  TVMFFIAny i = any_int(1), b = any_bool(1), f = any_float(1.0), i2 = any_int(1);
  CHECK(!wf_any_equal(&i, &b));
  CHECK(!wf_any_equal(&i, &f));
  CHECK(!wf_any_equal(&b, &f));
  CHECK(wf_any_equal(&i, &i2));
  CHECK(wf_map_hash(&i) != wf_map_hash(&b));
  CHECK_EQ_INT(wf_map_hash(&i), wf_map_hash(&i2));
}
