/* ffi.ReprPrint: `(1, 2)` for Array, `[1, 2]` for List, `{"a": 1}` for
 * Map/Dict, `Shape(5, 6)`, `float32[3, 4]@cpu:0` for a tensor and
 * `testing.TestIntPair(a=1, b=2)` for reflected objects. */
#ifndef WEBFFI_SRC_REPR_H_
#define WEBFFI_SRC_REPR_H_

#include <tvm/ffi/c_api.h>

#include "buffer.h"

/* Appends the repr of v; a container met again inside itself prints `...`. */
void wf_repr(const TVMFFIAny* v, wf_buf* out);

/* Appends s as a double-quoted JSON string literal (shared with JSON). */
void wf_repr_quoted(const char* s, size_t n, wf_buf* out);

/* Registers ffi.ReprPrint. */
int wf_repr_register(void);

#endif /* WEBFFI_SRC_REPR_H_ */
