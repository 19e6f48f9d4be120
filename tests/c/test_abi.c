/* The version and the ABI description read by the JS glue. */
#include <webffi/webffi.h>

#include "harness.h"

void abi_version(void) {
  TVMFFIVersion v;
  TVMFFIGetVersion(&v);
  CHECK_EQ_INT(v.major, 0);
  CHECK_EQ_INT(v.minor, 1);
  CHECK_EQ_INT(v.patch, 14);
}

void abi_metadata_describes_layouts(void) {
  const char* json = WebFFIGetABIMetadata();
  CHECK(json != NULL);
  CHECK(json[0] == '{');
  CHECK(strstr(json, "\"metadata_version\":1") != NULL);
  CHECK(strstr(json, "\"ffi.String\":65") != NULL);
  CHECK(strstr(json, "\"ffi.SmallStr\":11") != NULL);
  CHECK(strstr(json, "\"TVMFFIAny\":16") != NULL);
  CHECK(strstr(json, "\"TVMFFIObject\":24") != NULL);
  CHECK(strstr(json, "\"webgpu\":15") != NULL);
  /* the same pointer every time */
  CHECK(WebFFIGetABIMetadata() == json);
}
