/* Native frames from glibc's backtrace(); names need -rdynamic to show. */
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>

#include "../backtrace.h"

#define WF_BT_MAX_FRAMES 64

void wf_bt_collect_platform(wf_buf* out, int skip) {
  void* pcs[WF_BT_MAX_FRAMES];
  int n = backtrace(pcs, WF_BT_MAX_FRAMES);
  char** symbols = backtrace_symbols(pcs, n);
  if (symbols == NULL) return;
  /* The frames above TVMFFIBacktrace are the collector's own (and, under
   * sanitizers, their interceptors): the caller's frames start below it. */
  int first = 0;
  for (int i = 0; i < n; ++i) {
    if (strstr(symbols[i], "(TVMFFIBacktrace+") != NULL) {
      first = i + 1;
      break;
    }
  }
  for (int i = first; i < n; ++i) {
    /* "binary(func+0x1a) [0x...]": keep frames that carry a name. */
    const char* s = symbols[i];
    const char* open = strchr(s, '(');
    if (open == NULL) continue;
    const char* name = open + 1;
    size_t name_len = strcspn(name, "+)");
    if (name_len == 0 || wf_bt_is_runtime_frame(name, name_len)) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    wf_bt_append_frame(out, s, (size_t)(open - s), 0, name, name_len);
    if (name_len == 4 && memcmp(name, "main", 4) == 0) break;
  }
  free(symbols);
}

/* glibc's frames die with the call: native backtraces are collected at once. */
int32_t wf_bt_capture_pending(void) { return 0; }

void wf_bt_format_pending(int32_t token, wf_buf* out) {
  (void)token;
  (void)out;
}

void wf_bt_drop_pending(int32_t token) { (void)token; }
