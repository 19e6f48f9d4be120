/* Raising errors from inside the runtime. */
#ifndef WEBFFI_SRC_ERROR_H_
#define WEBFFI_SRC_ERROR_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>

/* Raises KIND with a printf-formatted message; always returns -1. */
int wf_err_raise(const char* kind, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Raises (kind, message) with the caller's backtrace; always returns -1. */
int wf_err_set_raised(const TVMFFIByteArray* kind, const TVMFFIByteArray* message);

/* Raises MemoryError for a failed allocation of `size` bytes (the size
 * asked for, which may exceed size_t); returns -1. Works even when nothing
 * more can be allocated. */
int wf_err_raise_oom(uint64_t size);

#endif /* WEBFFI_SRC_ERROR_H_ */
