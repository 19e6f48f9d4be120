/* Structural equality and hashing: containers by content, reflected objects
 * field by field, everything else as map keys compare. */
#ifndef WEBFFI_SRC_STRUCTURAL_H_
#define WEBFFI_SRC_STRUCTURAL_H_

#include <tvm/ffi/c_api.h>

/* 1 equal, 0 not, -1 with ValueError raised when nesting is too deep. */
int wf_structural_equal(const TVMFFIAny* a, const TVMFFIAny* b);
/* 0, or -1 with ValueError raised when nesting is too deep. */
int wf_structural_hash(const TVMFFIAny* v, uint64_t* out);

/* Registers ffi.RecursiveEq and ffi.RecursiveHash. */
int wf_structural_register(void);

#endif /* WEBFFI_SRC_STRUCTURAL_H_ */
