/* What StructuralEqual and StructuralHash share: how a type takes part
 * (its TVMFFISEqHashKind, with upstream's errors when it cannot) and the
 * bytes a CPU tensor's content covers. */
#ifndef WEBFFI_SRC_STRUCTURAL_KIND_H_
#define WEBFFI_SRC_STRUCTURAL_KIND_H_

#include <tvm/ffi/c_api.h>

#include "error.h"
#include "nesting.h"
#include "tensor.h"

/* 0 with the kind, or -1 with upstream's TypeError. */
static inline int wf_structural_kind(int32_t type_index, TVMFFISEqHashKind* out) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL || info->metadata == NULL) {
    return wf_err_raise("TypeError",
                        "Type metadata is not set for type `%s`, so StructuralHash is not "
                        "supported for this type",
                        info != NULL ? info->type_key.data : "?");
  }
  if (info->metadata->structural_eq_hash_kind == kTVMFFISEqHashKindUnsupported) {
    return wf_err_raise("TypeError",
                        "_type_s_eq_hash_kind is not set for type `%s`, so StructuralHash is "
                        "not supported for this type",
                        info->type_key.data);
  }
  *out = info->metadata->structural_eq_hash_kind;
  return 0;
}

static inline int wf_structural_too_deep_error(const char* what) {
  return wf_err_raise("ValueError", "%s: nesting deeper than %d levels (or a cycle)", what,
                      WF_MAX_NESTING);
}

/* The content bytes of a contiguous CPU tensor, or -1 with the error raised
 * (what: "compare" or "hash", as upstream's messages say). */
static inline int wf_structural_tensor_bytes(const DLTensor* t, const char* what,
                                             const char** data, size_t* size) {
  if (t->device.device_type != kDLCPU) {
    return wf_err_raise("ValueError", "can only %s CPU tensor", what);
  }
  if (!wf_tensor_is_contiguous(t)) {
    return wf_err_raise("ValueError", "Can only %s contiguous tensor", what);
  }
  uint64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= (uint64_t)t->shape[i];
  uint64_t bits = (uint64_t)t->dtype.bits * t->dtype.lanes;
  *size = (size_t)((n * bits + 7) / 8);
  *data = (const char*)t->data + t->byte_offset;
  return 0;
}

#endif /* WEBFFI_SRC_STRUCTURAL_KIND_H_ */
