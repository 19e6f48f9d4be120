/*
 * The test fixtures (testing.* globals and types): a library of their own,
 * never part of the runtime. Natively it is linked into the C tests; in wasm
 * it is a module (webffi_testing.wasm, shipped as dist/testing.wasm) that
 * tests and the demo load, so it sees the runtime through the public C ABI
 * only, as any module does. Everything registers from one constructor
 * (register.c) when the library is linked or loaded.
 */
#ifndef WEBFFI_SRC_TESTING_TESTING_H_
#define WEBFFI_SRC_TESTING_TESTING_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* Each returns 0, or -1 with the error raised. */
int wf_testing_functions_register(void); /* functions.c */
int wf_testing_types_register(void);     /* types.c */
/* wasm_hooks.c, in wasm builds (WEBFFI_TESTING_WASM_HOOKS) */
int wf_testing_wasm_register(void);
/* heap_growth.c, in wasm programs that link the runtime in (WEBFFI_TESTING_HEAP_GROWTH) */
int wf_testing_heap_register(void);

/* Registers a global function; metadata may be NULL. */
int wf_testing_register_global(const char* name, TVMFFISafeCallType fn, const char* metadata);

static inline void wf_testing_set_int(TVMFFIAny* out, int64_t v) {
  out->type_index = kTVMFFIInt;
  out->zero_padding = 0;
  out->v_int64 = v;
}

static inline int wf_testing_is_function(const TVMFFIAny* v) {
  return v->type_index == kTVMFFIFunction;
}

/* Drops the reference an owned Any holds, if any. */
static inline void wf_testing_release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin && v->v_obj != NULL) TVMFFIObjectDecRef(v->v_obj);
  v->type_index = kTVMFFINone;
  v->v_int64 = 0;
}

#endif /* WEBFFI_SRC_TESTING_TESTING_H_ */
