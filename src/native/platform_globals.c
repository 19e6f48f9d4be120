/* Native builds add the shared-library loader (src/native/dso_loader.c);
 * the wasm build's module loader lives in the JS glue (js/dylink.js). */
#include "../runtime_init.h"

int wf_dso_register(void);

int wf_platform_register(void) { return wf_dso_register(); }
