/* libFuzzer target: ffi.FromJSONGraphString on arbitrary bytes. Whatever
 * loads must serialise again, and serialising is a fixed point. */
#include <stdint.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TVMFFIByteArray bytes = {(const char*)data, size};
  TVMFFIAny input, value, text, value2, text2;
  FUZZ_CHECK(TVMFFIStringFromByteArray(&bytes, &input) == 0);
  if (fuzz_call("ffi.FromJSONGraphString", &input, 1, &value) == 0) {
    FUZZ_CHECK(fuzz_call("ffi.ToJSONGraphString", &value, 1, &text) == 0);
    FUZZ_CHECK(fuzz_call("ffi.FromJSONGraphString", &text, 1, &value2) == 0);
    FUZZ_CHECK(fuzz_call("ffi.ToJSONGraphString", &value2, 1, &text2) == 0);
    char* a = fuzz_text(&text);
    char* b = fuzz_text(&text2);
    FUZZ_CHECK(strcmp(a, b) == 0);
    free(a);
    free(b);
    /* repr walks the same structure: it must not crash either */
    TVMFFIAny repr;
    FUZZ_CHECK(fuzz_call("ffi.ReprPrint", &value, 1, &repr) == 0);
    fuzz_release(&repr);
    fuzz_release(&text);
    fuzz_release(&value2);
    fuzz_release(&text2);
    fuzz_release(&value);
  }
  fuzz_release(&input);
  return 0;
}
