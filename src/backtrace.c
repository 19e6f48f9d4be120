/* TVMFFIBacktrace and the frame format; platforms supply the frames. */
#include "backtrace.h"

#include <string.h>
#include <tvm/ffi/c_api.h>

#include "platform.h"

void wf_bt_append_frame(wf_buf* out, const char* file, size_t file_len, int line,
                        const char* func, size_t func_len) {
  wf_buf_puts(out, "  File \"");
  wf_buf_append(out, file, file_len);
  /* a frame without a line says so: upstream's `line 0` reads as a real line */
  if (line > 0) {
    wf_buf_printf(out, "\", line %d, in ", line);
  } else {
    wf_buf_puts(out, "\", line unknown, in ");
  }
  wf_buf_append(out, func, func_len);
  wf_buf_append(out, "\n", 1);
}

static int wf_bt_has_prefix(const char* s, size_t n, const char* prefix) {
  size_t p = strlen(prefix);
  return n >= p && memcmp(s, prefix, p) == 0;
}

int wf_bt_is_runtime_frame(const char* func, size_t func_len) {
  return wf_bt_has_prefix(func, func_len, "wf_") || wf_bt_has_prefix(func, func_len, "TVMFFI") ||
         wf_bt_has_prefix(func, func_len, "WebFFI");
}

/*
 * Upstream's headers whose code is call plumbing (the typed-function
 * wrappers, Any conversions, the error builder): a frame C names in them
 * (TVM_FFI_THROW inside a wrapper) is left out, as upstream leaves it out.
 */
static int wf_bt_is_plumbing_file(const char* file) {
  static const char* const kPlumbing[] = {"include/tvm/ffi/error.h",
                                          "include/tvm/ffi/function_details.h",
                                          "include/tvm/ffi/function.h", "include/tvm/ffi/any.h",
                                          "include/c++/"};
  for (size_t i = 0; i < sizeof(kPlumbing) / sizeof(kPlumbing[0]); ++i) {
    if (strstr(file, kPlumbing[i]) != NULL) return 1;
  }
  return 0;
}

static WF_THREAD_LOCAL wf_buf wf_bt_text;
static WF_THREAD_LOCAL TVMFFIByteArray wf_bt_result;

/* The result stays valid until the next call on the same thread. */
const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno, const char* func,
                                       int cross_ffi_boundary) {
  (void)cross_ffi_boundary; /* hosts add their own frames past the boundary */
  wf_buf_reset(&wf_bt_text);
  int skip = 0;
  if (filename != NULL || func != NULL) {
    const char* f = filename != NULL ? filename : "<unknown>";
    const char* fn = func != NULL ? func : "<unknown>";
    if (!wf_bt_is_plumbing_file(f)) wf_bt_append_frame(&wf_bt_text, f, strlen(f), lineno, fn, strlen(fn));
    skip = 1; /* the named frame is the caller's own, as upstream counts it */
  }
  wf_bt_collect_platform(&wf_bt_text, skip);
  if (wf_bt_text.failed || wf_bt_text.data == NULL) {
    wf_bt_result.data = "";
    wf_bt_result.size = 0;
  } else {
    wf_bt_result.data = wf_bt_text.data;
    wf_bt_result.size = wf_bt_text.size;
  }
  return &wf_bt_result;
}
