/* The type schemas of the runtime's own globals (ffi.GetGlobalFuncMetadata). */
#ifndef WEBFFI_SRC_GLOBAL_SCHEMAS_H_
#define WEBFFI_SRC_GLOBAL_SCHEMAS_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>

/* The compact schema of global NAME, or NULL when the runtime has none. */
const char* wf_global_schema_of(const char* name, size_t len);

/* The metadata upstream gives for a function of that schema,
 * `{"type_schema":"..."}`, as a string; -1 with MemoryError raised. */
int wf_global_schema_render(const char* schema, TVMFFIAny* result);

#endif /* WEBFFI_SRC_GLOBAL_SCHEMAS_H_ */
