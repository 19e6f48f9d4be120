/* Tensor objects: a DLTensor after the object header. */
#ifndef WEBFFI_SRC_TENSOR_H_
#define WEBFFI_SRC_TENSOR_H_

#include <tvm/ffi/c_api.h>

static inline DLTensor* wf_tensor_dl(TVMFFIObjectHandle tensor) {
  return (DLTensor*)((char*)tensor + sizeof(TVMFFIObject));
}

/* Whether the tensor's strides describe a compact row-major layout. */
int wf_tensor_is_contiguous(const DLTensor* t);

#endif /* WEBFFI_SRC_TENSOR_H_ */
