/* Registers the fixtures when the library is linked in (before main) or
 * loaded as a module (its constructors run at load), as upstream's testing
 * library registers at load. A failure stops the program, or fails the
 * module's load: tests cannot run without their fixtures. */
#include <stdio.h>
#include <stdlib.h>

#include "testing.h"

#ifdef WEBFFI_TESTING_HEAP_GROWTH
#define WF_TESTING_HEAP_REGISTER() wf_testing_heap_register()
#else
#define WF_TESTING_HEAP_REGISTER() 0
#endif
#ifdef WEBFFI_TESTING_WASM_HOOKS
#define WF_TESTING_WASM_REGISTER() wf_testing_wasm_register()
#else
#define WF_TESTING_WASM_REGISTER() 0
#endif

__attribute__((constructor)) static void wf_testing_register(void) {
  /* functions first: registering a global starts the runtime */
  if (wf_testing_functions_register() == 0 && wf_testing_types_register() == 0 &&
      WF_TESTING_WASM_REGISTER() == 0 && WF_TESTING_HEAP_REGISTER() == 0) {
    return;
  }
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const TVMFFIErrorCell* cell =
      err != NULL ? (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject)) : NULL;
  fprintf(stderr, "webffi testing: registering the fixtures failed: %.*s\n",
          cell != NULL ? (int)cell->message.size : 0, cell != NULL ? cell->message.data : "");
  abort();
}
