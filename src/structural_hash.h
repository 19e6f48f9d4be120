/* ffi.StructuralHash: a hash that agrees with ffi.StructuralEqual (values
 * it finds equal hash alike), stable across runs and equal to upstream
 * tvm-ffi's. */
#ifndef WEBFFI_SRC_STRUCTURAL_HASH_H_
#define WEBFFI_SRC_STRUCTURAL_HASH_H_

#include <tvm/ffi/c_api.h>

/* 0, or -1 with the error raised. */
int wf_structural_hash_ex(const TVMFFIAny* v, int map_free_vars, int skip_tensor_content,
                          uint64_t* out);

int wf_structural_hash_register(void);

/* A plain value's 64 payload bits as upstream holds them (unused bytes 0),
 * which the hashes fold in. */
uint64_t wf_structural_pod_bits(const TVMFFIAny* v);

#endif /* WEBFFI_SRC_STRUCTURAL_HASH_H_ */
