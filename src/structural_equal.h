/* ffi.StructuralEqual and ffi.GetFirstStructuralMismatch: upstream's
 * structural equality (types compare by their TVMFFISEqHashKind, free
 * variables bind inside definition regions, DAG nodes must map one to one). */
#ifndef WEBFFI_SRC_STRUCTURAL_EQUAL_H_
#define WEBFFI_SRC_STRUCTURAL_EQUAL_H_

#include <tvm/ffi/c_api.h>

/* 1 equal, 0 not, -1 with the error raised. With mismatch non-NULL and the
 * values unequal, *mismatch receives a new Array [lhs_path, rhs_path] of
 * ffi.reflection.AccessPath (else NULL). */
int wf_structural_equal_ex(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int map_free_vars,
                           int skip_tensor_content, TVMFFIObject** mismatch);

int wf_structural_equal_register(void);

#endif /* WEBFFI_SRC_STRUCTURAL_EQUAL_H_ */
