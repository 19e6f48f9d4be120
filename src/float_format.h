/* Floats as text: the shortest form that reads back to the same double,
 * with `.0` for whole numbers and NaN / Infinity / -Infinity. */
#ifndef WEBFFI_SRC_FLOAT_FORMAT_H_
#define WEBFFI_SRC_FLOAT_FORMAT_H_

#include "buffer.h"

void wf_float_format(double v, wf_buf* out);

#endif /* WEBFFI_SRC_FLOAT_FORMAT_H_ */
