/* Strings and bytes: small forms up to 7 bytes, heap forms beyond. */
#include "harness.h"

void string_seven_bytes_is_small(void) {
  TVMFFIByteArray in = {"1234567", 7};
  TVMFFIAny out;
  CHECK(TVMFFIStringFromByteArray(&in, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFISmallStr);
  CHECK_EQ_INT(out.small_str_len, 7);
  CHECK_EQ_STR(out.v_bytes, "1234567");
}

void string_eight_bytes_is_heap_and_nul_terminated(void) {
  TVMFFIByteArray in = {"12345678", 8};
  TVMFFIAny out;
  CHECK(TVMFFIStringFromByteArray(&in, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFIStr);
  CHECK_EQ_INT(out.small_str_len, 0);
  TVMFFIByteArray* cell = (TVMFFIByteArray*)((char*)out.v_obj + sizeof(TVMFFIObject));
  CHECK_EQ_INT(cell->size, 8);
  CHECK_EQ_INT(cell->data[8], 0);
  CHECK_EQ_STR(cell->data, "12345678");
  TVMFFIObjectDecRef(out.v_obj);
}

void string_empty_is_small(void) {
  TVMFFIByteArray in = {NULL, 0};
  TVMFFIAny out;
  CHECK(TVMFFIStringFromByteArray(&in, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFISmallStr);
  CHECK_EQ_INT(out.small_str_len, 0);
  CHECK_EQ_STR(out.v_bytes, "");
}

void bytes_keep_embedded_nul(void) {
  TVMFFIByteArray small = {"a\0b", 3}, big = {"abc\0defgh", 9};
  TVMFFIAny out;
  CHECK(TVMFFIBytesFromByteArray(&small, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFISmallBytes);
  CHECK_EQ_INT(out.small_str_len, 3);
  CHECK(memcmp(out.v_bytes, "a\0b", 3) == 0);
  CHECK(TVMFFIBytesFromByteArray(&big, &out) == 0);
  CHECK_EQ_INT(out.type_index, kTVMFFIBytes);
  TVMFFIByteArray* cell = (TVMFFIByteArray*)((char*)out.v_obj + sizeof(TVMFFIObject));
  CHECK_EQ_INT(cell->size, 9);
  CHECK(memcmp(cell->data, "abc\0defgh", 9) == 0);
  TVMFFIObjectDecRef(out.v_obj);
}

void string_null_input_is_value_error(void) {
  TVMFFIAny out;
  CHECK(TVMFFIStringFromByteArray(NULL, &out) == -1);
  CHECK_RAISED("ValueError", "TVMFFIStringFromByteArray: NULL argument");
  TVMFFIByteArray bad = {NULL, 3};
  CHECK(TVMFFIBytesFromByteArray(&bad, &out) == -1);
  CHECK_RAISED("ValueError", "TVMFFIBytesFromByteArray: data is NULL but size is 3");
}
