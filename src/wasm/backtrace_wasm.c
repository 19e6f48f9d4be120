/* Wasm frames, read from the host's stack at the point of the call. */
#include <string.h>

#include "../backtrace.h"
#include "host_imports.h"

static char wf_bt_frames[16384];

/* Appends the first n bytes of wf_bt_frames ("FUNC\tLOCATION\n" lines). */
static void wf_bt_append_host_frames(wf_buf* out, int32_t n) {
  if (n <= 0) return;
  if (n > (int32_t)sizeof(wf_bt_frames)) n = (int32_t)sizeof(wf_bt_frames);
  const char* p = wf_bt_frames;
  const char* end = wf_bt_frames + n;
  while (p < end) {
    const char* nl = memchr(p, '\n', (size_t)(end - p));
    const char* line_end = nl != NULL ? nl : end;
    const char* tab = memchr(p, '\t', (size_t)(line_end - p));
    if (tab != NULL) {
      size_t name_len = (size_t)(tab - p);
      if (name_len > 0 && !wf_bt_is_runtime_frame(p, name_len)) {
        wf_bt_append_frame(out, tab + 1, (size_t)(line_end - tab - 1), 0, p, name_len);
      }
    }
    p = line_end + 1;
  }
}

void wf_bt_collect_platform(wf_buf* out) {
  wf_bt_append_host_frames(out, wf_host_backtrace(wf_bt_frames, (int32_t)sizeof(wf_bt_frames)));
}

int32_t wf_bt_capture_pending(void) { return wf_host_backtrace_capture(); }

void wf_bt_format_pending(int32_t token, wf_buf* out) {
  wf_bt_append_host_frames(
      out, wf_host_backtrace_frames(token, wf_bt_frames, (int32_t)sizeof(wf_bt_frames)));
}

void wf_bt_drop_pending(int32_t token) { wf_host_backtrace_drop(token); }
