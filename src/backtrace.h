/* Backtrace text in the ABI's format, shared by the platform collectors. */
#ifndef WEBFFI_SRC_BACKTRACE_H_
#define WEBFFI_SRC_BACKTRACE_H_

#include <stddef.h>

#include "buffer.h"

/* Appends `  File "FILE", line N, in FUNC\n`. */
void wf_bt_append_frame(wf_buf* out, const char* file, size_t file_len, int line,
                        const char* func, size_t func_len);

/* Frames of the runtime itself (wf_*, TVMFFI*, WebFFI*) are left out. */
int wf_bt_is_runtime_frame(const char* func, size_t func_len);

/* Implemented once per platform: appends the caller's frames, most recent
 * first, runtime frames left out. */
void wf_bt_collect_platform(wf_buf* out);

#endif /* WEBFFI_SRC_BACKTRACE_H_ */
