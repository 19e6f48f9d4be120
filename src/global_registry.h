/* The global function registry. */
#ifndef WEBFFI_SRC_GLOBAL_REGISTRY_H_
#define WEBFFI_SRC_GLOBAL_REGISTRY_H_

#include <tvm/ffi/c_api.h>

/* Registers a C callback as global NAME with optional JSON metadata
 * (NULL: `{}`); used by the runtime for its own functions. */
int wf_global_register(const char* name, TVMFFISafeCallType fn, const char* metadata);

/* The same, with a static `self` passed to fn (e.g. its signature). */
int wf_global_register_with_self(const char* name, TVMFFISafeCallType fn, void* self);

#endif /* WEBFFI_SRC_GLOBAL_REGISTRY_H_ */
