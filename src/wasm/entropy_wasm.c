/* Host entropy in wasm: the WASI random_get import, which js/wasi.js backs
 * with crypto.getRandomValues (Node and browsers). Both toolchains declare
 * it in <wasi/api.h>. */
#include <wasi/api.h>

#include "../hash.h"

int wf_platform_entropy(void* buf, size_t n) {
  return __wasi_random_get((uint8_t*)buf, (__wasi_size_t)n) == 0 ? 0 : -1;
}
