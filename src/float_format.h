/* Floats as text, in the two forms upstream tvm-ffi writes them. */
#ifndef WEBFFI_SRC_FLOAT_FORMAT_H_
#define WEBFFI_SRC_FLOAT_FORMAT_H_

#include "buffer.h"

/* JSON (ffi.json.Stringify, the JSON graph): whole numbers below 2^53 as
 * `5.0`, others with 17 significant digits (`0.10000000000000001`, which
 * reads back exactly), and NaN / Infinity / -Infinity. */
void wf_float_format_json(double v, wf_buf* out);

/* ffi.ReprPrint: a C++ stream's default form, 6 significant digits
 * (`3.14`, `0`, `1e+10`, `nan`, `-inf`). */
void wf_float_format_repr(double v, wf_buf* out);

#endif /* WEBFFI_SRC_FLOAT_FORMAT_H_ */
