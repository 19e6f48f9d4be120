/* The wasm build registers no platform globals of its own: its module
 * loader lives in the JS glue (js/dylink.js), which registers the
 * ffi.Module.load_from_* functions when a runtime is loaded. */
#include "../runtime_init.h"

int wf_platform_register(void) { return 0; }
