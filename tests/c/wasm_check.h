/* Shared by the wasm command checks (nesting_check.c, bounded_check.c): call
 * a global by name, release a value, report a check and stop at the first
 * failure. */
#ifndef WEBFFI_TESTS_C_WASM_CHECK_H_
#define WEBFFI_TESTS_C_WASM_CHECK_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

/* Calls global NAME; -2 when there is no such global. A raised error stays
 * in the raised slot for the caller to read. */
static inline int check_call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &f) != 0 || f == NULL) return -2;
  memset(result, 0, sizeof(*result));
  int rc = TVMFFIFunctionCall(f, args, n, result);
  TVMFFIObjectDecRef(f);
  return rc;
}

static inline void release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(v->v_obj);
}

static inline void expect(int ok, const char* what) {
  printf("%s %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) exit(1);
}

#endif /* WEBFFI_TESTS_C_WASM_CHECK_H_ */
