/* Environment state: the DLPack allocator in force, registered symbols. */
#ifndef WEBFFI_SRC_ENV_H_
#define WEBFFI_SRC_ENV_H_

#include <tvm/ffi/extra/c_env_api.h>

/* A symbol registered with TVMFFIEnvModRegisterSystemLibSymbol, or NULL. */
void* wf_env_system_lib_symbol(const char* name, size_t name_len);
/* A symbol registered with TVMFFIEnvModRegisterContextSymbol, or NULL. */
void* wf_env_context_symbol(const char* name, size_t name_len);

#endif /* WEBFFI_SRC_ENV_H_ */
