/* libFuzzer target: ffi.json.Parse on arbitrary bytes. Whatever parses must
 * print, and printing is a fixed point: parse(print(v)) prints the same, and
 * from then on parsing gives structurally equal values. (Not always equal to
 * v itself: as upstream's, the writer prints a whole float from 2^53 to 1e17
 * as digits alone, which read back as an int.) */
#include <stdint.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TVMFFIByteArray bytes = {(const char*)data, size};
  TVMFFIAny input, parsed, text, reparsed, text2, reparsed2, eq;
  FUZZ_CHECK(TVMFFIStringFromByteArray(&bytes, &input) == 0);
  if (fuzz_call("ffi.json.Parse", &input, 1, &parsed) == 0) {
    FUZZ_CHECK(fuzz_call("ffi.json.Stringify", &parsed, 1, &text) == 0);
    FUZZ_CHECK(fuzz_call("ffi.json.Parse", &text, 1, &reparsed) == 0);
    FUZZ_CHECK(fuzz_call("ffi.json.Stringify", &reparsed, 1, &text2) == 0);
    char* a = fuzz_text(&text);
    char* b = fuzz_text(&text2);
    FUZZ_CHECK(strcmp(a, b) == 0);
    free(a);
    free(b);
    FUZZ_CHECK(fuzz_call("ffi.json.Parse", &text2, 1, &reparsed2) == 0);
    TVMFFIAny pair[2] = {reparsed, reparsed2};
    FUZZ_CHECK(fuzz_call("ffi.RecursiveEq", pair, 2, &eq) == 0 && eq.v_int64 == 1);
    fuzz_release(&reparsed2);
    fuzz_release(&text);
    fuzz_release(&reparsed);
    fuzz_release(&text2);
    fuzz_release(&parsed);
  }
  fuzz_release(&input);
  return 0;
}
