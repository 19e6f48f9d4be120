/* testing.heap_growth, for wasm programs that link the runtime in (the C
 * checks in tests/c): it reads the runtime's growth counter, which a
 * module loaded at run time cannot reach (src/wasm/heap_growth_wasm.c).
 *   testing.heap_growth(): how often memory has grown so far.
 *   testing.heap_growth(exact: bool): the same, and switches to growth by
 *   the exact deficit (true) or back to geometric growth (false). */
#include "testing.h"

uint32_t wf_heap_growth_count(int exact);

static int testing_heap_growth(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n > 1 || (n == 1 && args[0].type_index != kTVMFFIBool)) {
    TVMFFIErrorSetRaisedFromCStr("TypeError",
                                 "testing.heap_growth expects no argument or one `bool`");
    return -1;
  }
  wf_testing_set_int(result, (int64_t)wf_heap_growth_count(n == 1 ? args[0].v_int64 != 0 : -1));
  return 0;
}

int wf_testing_heap_register(void) {
  return wf_testing_register_global("testing.heap_growth", testing_heap_growth, NULL);
}
