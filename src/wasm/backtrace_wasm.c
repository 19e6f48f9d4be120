/* Wasm frames, read from the host's stack at the point of the call. */
#include "../backtrace.h"
#include "host_imports.h"

static char wf_bt_frames[16384];

/* The host writes the ABI's lines itself (it symbolises frames from the
 * modules' line tables): appended as they are. */
static void wf_bt_append_host_text(wf_buf* out, int32_t n) {
  if (n <= 0) return;
  if (n > (int32_t)sizeof(wf_bt_frames)) n = (int32_t)sizeof(wf_bt_frames);
  wf_buf_append(out, wf_bt_frames, (size_t)n);
}

void wf_bt_collect_platform(wf_buf* out, int skip) {
  wf_bt_append_host_text(out, wf_host_backtrace(wf_bt_frames, (int32_t)sizeof(wf_bt_frames), skip));
}

void wf_bt_format_pending(int32_t token, wf_buf* out) {
  wf_bt_append_host_text(
      out, wf_host_backtrace_frames(token, wf_bt_frames, (int32_t)sizeof(wf_bt_frames)));
}

void wf_bt_drop_pending(int32_t token) { wf_host_backtrace_drop(token); }
