/* Modules whose symbols a platform library serves (native dlopen). */
#ifndef WEBFFI_SRC_MODULE_H_
#define WEBFFI_SRC_MODULE_H_

#include <tvm/ffi/c_api.h>
#include <webffi/typed_call.h>

/* The address of SYMBOL in LIBRARY, or NULL. */
typedef void* (*wf_module_lookup_fn)(void* library, const char* symbol);

/* A new module (not in the loaded table) over LIBRARY; unload runs when it
 * goes, or at once when this fails. -1 with MemoryError raised. */
int wf_module_new_library(void* library, wf_module_lookup_fn lookup, void (*unload)(void*),
                          TVMFFIObject** out);

/* Whether MOD is a module this core made (not a C++ ModuleObj of code
 * built on upstream's headers, which has the same type index). */
int wf_module_is_core(const TVMFFIObject* mod);

/* Argument I of a call as a module this core made; TypeError otherwise. */
int wf_module_arg(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                  TVMFFIObjectHandle* mod);

#endif /* WEBFFI_SRC_MODULE_H_ */
