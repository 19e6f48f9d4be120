/* DataType (DLDataType) text forms: `float32x4`, `bfloat16`, `bool`, `handle`. */
#ifndef WEBFFI_SRC_DTYPE_H_
#define WEBFFI_SRC_DTYPE_H_

#include "buffer.h"
#include <tvm/ffi/c_api.h>

/* Appends the text form; -1 with ValueError raised for an unknown code. */
int wf_dtype_format(DLDataType dtype, wf_buf* out);

#endif /* WEBFFI_SRC_DTYPE_H_ */
