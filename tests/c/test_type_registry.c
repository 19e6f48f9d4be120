/* Type registry: static keys, dynamic indices, ancestors and IsInstance. */
#include "../../src/type_registry.h"
#include "harness.h"

static int32_t key_to_index(const char* key) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = -100;
  CHECK(TVMFFITypeKeyToIndex(&k, &index) == 0);
  return index;
}

void types_static_keys_have_abi_indices(void) {
  CHECK_EQ_INT(key_to_index("None"), 0);
  CHECK_EQ_INT(key_to_index("int"), 1);
  CHECK_EQ_INT(key_to_index("ffi.SmallStr"), 11);
  CHECK_EQ_INT(key_to_index("ffi.Object"), 64);
  CHECK_EQ_INT(key_to_index("ffi.String"), 65);
  CHECK_EQ_INT(key_to_index("ffi.Function"), 68);
  CHECK_EQ_INT(key_to_index("ffi.OpaquePyObject"), 74);
  CHECK_EQ_INT(key_to_index("ffi.Dict"), 76);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(kTVMFFIArray);
  CHECK(info != NULL);
  CHECK_EQ_STR(info->type_key.data, "ffi.Array");
  CHECK_EQ_INT(info->type_depth, 1);
  CHECK_EQ_INT(info->type_ancestors[0]->type_index, kTVMFFIObject);
}

void types_unknown_key_is_key_error(void) {
  TVMFFIByteArray k = {"no.such.Type", 12};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&k, &index) != 0);
  CHECK_RAISED("KeyError", "Cannot find type `no.such.Type`");
  CHECK(TVMFFIGetTypeInfo(5000) == NULL);
  CHECK(TVMFFIGetTypeInfo(-7) == NULL);
}

void types_dynamic_indices_and_ancestors(void) {
  TVMFFIByteArray base_key = {"test.Base", 9}, derived_key = {"test.Derived", 12};
  int32_t base = TVMFFITypeGetOrAllocIndex(&base_key, -1, 1, 0, 1, kTVMFFIObject);
  CHECK(base >= kTVMFFIDynObjectBegin);
  int32_t derived = TVMFFITypeGetOrAllocIndex(&derived_key, -1, 2, 0, 1, base);
  CHECK(derived > base);
  /* asking again returns the same index */
  CHECK_EQ_INT(TVMFFITypeGetOrAllocIndex(&base_key, -1, 1, 0, 1, kTVMFFIObject), base);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(derived);
  CHECK_EQ_INT(info->type_depth, 2);
  CHECK_EQ_INT(info->type_ancestors[0]->type_index, kTVMFFIObject);
  CHECK_EQ_INT(info->type_ancestors[1]->type_index, base);
  CHECK_EQ_STR(info->type_key.data, "test.Derived");
  CHECK(wf_type_is_instance(derived, base));
  CHECK(wf_type_is_instance(derived, kTVMFFIObject));
  CHECK(!wf_type_is_instance(base, derived));
  CHECK(!wf_type_is_instance(derived, kTVMFFIStr));
}

void types_query_only_parent_registers_nothing(void) {
  TVMFFIByteArray k = {"test.NeverRegistered", 20};
  CHECK_EQ_INT(TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 1, -2), -2);
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&k, &index) != 0);
  CHECK_RAISED("KeyError", "Cannot find type `test.NeverRegistered`");
  TVMFFIByteArray s = {"ffi.String", 10};
  CHECK_EQ_INT(TVMFFITypeGetOrAllocIndex(&s, -1, 1, 0, 1, -2), kTVMFFIStr);
}

void types_bad_registration_is_value_error(void) {
  TVMFFIByteArray k = {"test.BadDepth", 13};
  CHECK_EQ_INT(TVMFFITypeGetOrAllocIndex(&k, -1, 5, 0, 1, kTVMFFIObject), -1);
  CHECK_RAISED("ValueError",
               "Cannot register type `test.BadDepth`: type_depth 5 does not match the parent's "
               "depth + 1 (1)");
  CHECK_EQ_INT(TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 1, 99999), -1);
  CHECK_RAISED("ValueError", "Cannot register type `test.BadDepth`: unknown parent type index 99999");
  CHECK_EQ_INT(TVMFFITypeGetOrAllocIndex(&k, kTVMFFIStr, 1, 0, 1, kTVMFFIObject), -1);
  CHECK_RAISED("ValueError",
               "Cannot register type `test.BadDepth`: index 65 is already taken by `ffi.String`");
  CHECK_EQ_INT(TVMFFITypeGetOrAllocIndex(NULL, -1, 1, 0, 1, kTVMFFIObject), -1);
  CHECK_RAISED("ValueError", "TVMFFITypeGetOrAllocIndex: type_key is NULL");
}
