/* Functions the host (the JS glue) provides to the wasm build. */
#ifndef WEBFFI_SRC_WASM_HOST_IMPORTS_H_
#define WEBFFI_SRC_WASM_HOST_IMPORTS_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

#define WF_HOST_IMPORT(name) __attribute__((import_module("webffi"), import_name(name)))

/*
 * Writes the backtrace of the wasm frames running now (the C of the current
 * call, down to the first JS frame), most recent first, as the ABI's lines
 * (`  File "FILE", line N, in FUNC\n`), into buf (at most cap bytes, whole
 * lines); returns the byte count. The host names file and line from the
 * module's line table when it has one, else the frame's wasm location;
 * frames of the runtime's error machinery are left out, and the first
 * `skip` source frames (a frame the caller names itself). With C
 * backtraces switched off it writes nothing.
 */
WF_HOST_IMPORT("backtrace") int32_t wf_host_backtrace(char* buf, int32_t cap, int32_t skip);

/*
 * Captures the current stack without formatting it (formatting is most of
 * a capture's cost) and returns a token for it, never 0; -1 (no capture)
 * while the host has C backtraces switched off. The host keeps the
 * capture until wf_host_backtrace_frames writes its backtrace lines (as
 * wf_host_backtrace would have at the capture; 0 bytes for an unknown
 * token) or wf_host_backtrace_drop forgets it.
 */
WF_HOST_IMPORT("backtrace_capture") int32_t wf_host_backtrace_capture(void);
WF_HOST_IMPORT("backtrace_frames")
int32_t wf_host_backtrace_frames(int32_t token, char* buf, int32_t cap);
WF_HOST_IMPORT("backtrace_drop") void wf_host_backtrace_drop(int32_t token);

/*
 * Calls the JS function behind `handle` with the safe-call convention:
 * borrowed args, owned result, 0 or -1 with the error raised.
 */
WF_HOST_IMPORT("call_js")
int32_t wf_host_call_js(int32_t handle, const TVMFFIAny* args, int32_t num_args,
                        TVMFFIAny* result);

/* Drops C's reference to the JS value behind `handle`. */
WF_HOST_IMPORT("release_js") void wf_host_release_js(int32_t handle);

#endif /* WEBFFI_SRC_WASM_HOST_IMPORTS_H_ */
