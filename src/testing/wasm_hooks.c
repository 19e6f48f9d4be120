/* testing.* functions that only make sense in wasm: a trap (which poisons
 * the instance) and an allocation of a chosen size (to provoke MemoryError). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "testing.h"

static int testing_trap(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  (void)result;
  __builtin_trap();
}

static int testing_oom(size_t size) {
  char message[64];
  snprintf(message, sizeof(message), "Failed to allocate %zu bytes", size);
  TVMFFIErrorSetRaisedFromCStr("MemoryError", message);
  return -1;
}

/* Allocates and frees N bytes; returns N, or raises MemoryError. */
static int testing_allocate_bytes(void* self, const TVMFFIAny* args, int32_t n,
                                  TVMFFIAny* result) {
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIInt || args[0].v_int64 < 0) {
    TVMFFIErrorSetRaisedFromCStr("TypeError",
                                 "testing.allocate_bytes expects one non-negative `int`");
    return -1;
  }
  if ((uint64_t)args[0].v_int64 > SIZE_MAX) return testing_oom(SIZE_MAX);
  size_t size = (size_t)args[0].v_int64;
  /* volatile: the compiler may otherwise drop an unused malloc/free pair */
  char* volatile p = (char*)malloc(size);
  if (p == NULL) return testing_oom(size);
  if (size > 0) p[size - 1] = 1;
  free(p);
  wf_testing_set_int(result, args[0].v_int64);
  return 0;
}

int wf_testing_wasm_register(void) {
  if (wf_testing_register_global("testing.trap", testing_trap, NULL) != 0) return -1;
  return wf_testing_register_global("testing.allocate_bytes", testing_allocate_bytes, NULL);
}
