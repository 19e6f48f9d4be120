/* testing.* functions that only make sense in wasm: a trap (which poisons
 * the instance) and an allocation of a chosen size (to provoke MemoryError). */
#include <stdint.h>
#include <stdlib.h>

#include "../any.h"
#include "../error.h"
#include "../global_registry.h"
#include "../runtime_init.h"

static int testing_trap(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  (void)result;
  __builtin_trap();
}

/* Allocates and frees N bytes; returns N, or raises MemoryError. */
static int testing_allocate_bytes(void* self, const TVMFFIAny* args, int32_t n,
                                  TVMFFIAny* result) {
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIInt || args[0].v_int64 < 0) {
    return wf_err_raise("TypeError", "testing.allocate_bytes expects one non-negative `int`");
  }
  if ((uint64_t)args[0].v_int64 > SIZE_MAX) return wf_err_raise_oom(SIZE_MAX);
  size_t size = (size_t)args[0].v_int64;
  /* volatile: the compiler may otherwise drop an unused malloc/free pair */
  char* volatile p = (char*)malloc(size);
  if (p == NULL) return wf_err_raise_oom(size);
  if (size > 0) p[size - 1] = 1;
  free(p);
  wf_any_set_int(result, args[0].v_int64);
  return 0;
}

int wf_heap_growth_fn(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result);

int wf_platform_register(void) {
  if (wf_global_register("testing.trap", testing_trap, NULL) != 0) return -1;
  if (wf_global_register("testing.heap_growth", wf_heap_growth_fn, NULL) != 0) return -1;
  return wf_global_register("testing.allocate_bytes", testing_allocate_bytes, NULL);
}
