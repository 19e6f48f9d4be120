/* Functions and opaque objects backed by JavaScript values. The JS glue keeps
 * each value in a handle table; C holds the handle and gives it back through
 * `webffi.release_js` when the object dies. */
#include <stdint.h>
#include <webffi/webffi.h>

#include "../error.h"
#include "../function.h"
#include "../unwind.h"
#include "host_imports.h"

#ifdef __EMSCRIPTEN_PTHREADS__
#include <emscripten/threading.h>
#endif


static inline uint32_t wf_stack_pointer_now(void) {
  uint32_t sp;
  __asm__ volatile(
      ".globaltype __stack_pointer, i32\n"
      "global.get __stack_pointer\n"
      "local.set %0"
      : "=r"(sp));
  return sp;
}

/* The host's halves of an unwind (webffi.h): the stack pointer now, and
 * setting it (no frame of their own, so no epilogue undoes the store). */
uint32_t WebFFIStackPointer(void) { return wf_stack_pointer_now(); }

void WebFFIStackRestore(uint32_t sp) {
  __asm__ volatile(
      ".globaltype __stack_pointer, i32\n"
      "local.get %0\n"
      "global.set __stack_pointer"
      :
      : "r"(sp));
}

/* Called with the Function itself (no trampoline: callbacks are hot). */
static int wf_js_safe_call(void* func, const TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* result) {
#ifdef __EMSCRIPTEN_PTHREADS__
  /* JS values live on the thread that loaded the runtime: a worker thread
   * (a parallel task) has none of them, and cannot wait for that thread,
   * which may itself be waiting for the task. */
  if (!emscripten_is_main_runtime_thread()) {
    return wf_err_raise("RuntimeError",
                        "a JS function cannot be called from a worker thread (a parallel task); call it "
                        "before or after TVMBackendParallelLaunch, on the thread that loaded the runtime");
  }
#endif
  int32_t handle = (int32_t)(uintptr_t)wf_func_self((TVMFFIObject*)func);
  /* The callback's mark: an exception that unwinds wasm frames entered from
   * it puts the core back here (WebFFIUnwind), its stack pointer included. */
  wf_unwind_mark mark;
  mark.counters = wf_counters;
  mark.stack_pointer = wf_stack_pointer_now();
  const wf_unwind_mark* outer = wf_js_mark;
  mark.outer = outer;
  mark.depth = outer != NULL ? outer->depth + 1 : 1;
  wf_js_mark = &mark;
  int rc = wf_host_call_js(handle, args, num_args, result);
  wf_js_mark = outer;
  /* whatever the callback's own calls into wasm left unbalanced */
  if (wf_counters_differ(&wf_counters, &mark.counters)) wf_unwind_restore(&mark);
  return rc;
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
