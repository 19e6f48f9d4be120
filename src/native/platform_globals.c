/* Native builds add no platform-specific global functions (the wasm build
 * adds its own testing helpers in src/wasm/testing_wasm.c). */
#include "../runtime_init.h"

int wf_platform_register(void) { return 0; }
