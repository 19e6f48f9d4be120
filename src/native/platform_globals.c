/* Native builds add the shared-library loader (src/native/dso_loader.c);
 * the wasm build adds its own testing helpers in src/wasm/testing_wasm.c
 * and its module loader lives in the JS glue (js/dylink.js). */
#include "../runtime_init.h"

int wf_dso_register(void);

int wf_platform_register(void) { return wf_dso_register(); }
