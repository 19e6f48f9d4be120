/* Shape: an immutable sequence of int64, stored inline after its cell. */
#ifndef WEBFFI_SRC_SHAPE_H_
#define WEBFFI_SRC_SHAPE_H_

#include <tvm/ffi/c_api.h>

#include "object.h"

static inline TVMFFIShapeCell* wf_shape_cell(TVMFFIObject* shape) {
  return WF_OBJ_CELL(shape, TVMFFIShapeCell);
}

/* A Shape holding a copy of data[0..n); NULL with MemoryError raised. */
TVMFFIObject* wf_shape_new(const int64_t* data, size_t n);

/* Registers ffi.Shape. */
int wf_shape_register(void);

#endif /* WEBFFI_SRC_SHAPE_H_ */
