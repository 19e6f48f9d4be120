/* Functions and opaque objects backed by JavaScript values. The JS glue keeps
 * each value in a handle table; C holds the handle and gives it back through
 * `webffi.release_js` when the object dies. */
#include <stdint.h>
#include <webffi/webffi.h>

#include "host_imports.h"

static int wf_js_safe_call(void* self, const TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* result) {
  return wf_host_call_js((int32_t)(uintptr_t)self, args, num_args, result);
}

static void wf_js_release(void* self) { wf_host_release_js((int32_t)(uintptr_t)self); }

/* On failure the handle is not released: the caller still owns it. */
int WebFFIFunctionFromJS(int32_t js_handle, TVMFFIObjectHandle* out) {
  return TVMFFIFunctionCreate((void*)(uintptr_t)js_handle, wf_js_safe_call, wf_js_release, out);
}

int WebFFIOpaqueFromJS(int32_t js_handle, TVMFFIObjectHandle* out) {
  return TVMFFIObjectCreateOpaque((void*)(uintptr_t)js_handle, kTVMFFIOpaquePyObject,
                                  wf_js_release, out);
}
