/* Functions the host (the JS glue) provides to the wasm build. */
#ifndef WEBFFI_SRC_WASM_HOST_IMPORTS_H_
#define WEBFFI_SRC_WASM_HOST_IMPORTS_H_

#include <stdint.h>

#define WF_HOST_IMPORT(name) __attribute__((import_module("webffi"), import_name(name)))

/*
 * Writes the current wasm frames, most recent first, one per line as
 * "FUNC\tLOCATION\n", into buf (at most cap bytes); returns the byte count.
 * FUNC comes from the name section; LOCATION is the host's text for the
 * frame (function index and code offset today, file and line with source
 * maps later).
 */
WF_HOST_IMPORT("backtrace") int32_t wf_host_backtrace(char* buf, int32_t cap);

#endif /* WEBFFI_SRC_WASM_HOST_IMPORTS_H_ */
