/* Backtrace text in the ABI's format, shared by the platform collectors. */
#ifndef WEBFFI_SRC_BACKTRACE_H_
#define WEBFFI_SRC_BACKTRACE_H_

#include <stddef.h>
#include <stdint.h>

#include "buffer.h"

/* Appends `  File "FILE", line N, in FUNC\n` (`line unknown` for N <= 0). */
void wf_bt_append_frame(wf_buf* out, const char* file, size_t file_len, int line,
                        const char* func, size_t func_len);

/* Frames of the runtime itself (wf_*, TVMFFI*, WebFFI*) are left out. */
int wf_bt_is_runtime_frame(const char* func, size_t func_len);

/* Implemented once per platform: appends the caller's frames, most recent
 * first, runtime frames left out, less the first `skip` of them. */
void wf_bt_collect_platform(wf_buf* out, int skip);

/*
 * A deferred capture of the caller's frames, for an error raised now whose
 * backtrace may never be read: a token (> 0), 0 where the platform cannot
 * defer (then collect at once), or -1 where the host has switched C
 * backtraces off (then the error has none). Each token is used up by exactly one of
 * wf_bt_format_pending (appends the frames as wf_bt_collect_platform would
 * have at the capture) and wf_bt_drop_pending.
 */
#ifdef __wasm__
/* Inline: each call level is a frame the host's capture walks (and the
 * runtime's link keeps line tables, so binaryen inlines nothing itself). */
#include "wasm/host_imports.h"
static inline int32_t wf_bt_capture_pending(void) { return wf_host_backtrace_capture(); }
#else
int32_t wf_bt_capture_pending(void);
#endif
void wf_bt_format_pending(int32_t token, wf_buf* out);
void wf_bt_drop_pending(int32_t token);

#endif /* WEBFFI_SRC_BACKTRACE_H_ */
