/* Functions and opaque objects backed by JavaScript values. The JS glue keeps
 * each value in a handle table; C holds the handle and gives it back through
 * `webffi.release_js` when the object dies. */
#include <stdint.h>
#include <webffi/webffi.h>

#include "../function.h"
#include "host_imports.h"

/* Called with the Function itself (no trampoline: callbacks are hot). */
static int wf_js_safe_call(void* func, const TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* result) {
  int32_t handle = (int32_t)(uintptr_t)wf_func_self((TVMFFIObject*)func);
  return wf_host_call_js(handle, args, num_args, result);
}

static void wf_js_release(void* self) { wf_host_release_js((int32_t)(uintptr_t)self); }

/* On failure the handle is not released: the caller still owns it. */
int WebFFIFunctionFromJS(int32_t js_handle, TVMFFIObjectHandle* out) {
  TVMFFIObject* f = wf_func_new_direct(wf_js_safe_call, (void*)(uintptr_t)js_handle, wf_js_release);
  if (f == NULL) return -1; /* raised by the allocator; the handle stays the caller's */
  *out = f;
  return 0;
}

int WebFFIOpaqueFromJS(int32_t js_handle, TVMFFIObjectHandle* out) {
  return TVMFFIObjectCreateOpaque((void*)(uintptr_t)js_handle, kTVMFFIOpaquePyObject,
                                  wf_js_release, out);
}
