/* Function objects. */
#ifndef WEBFFI_SRC_FUNCTION_H_
#define WEBFFI_SRC_FUNCTION_H_

#include <tvm/ffi/c_api.h>

/* Calls a Function with borrowed args; result must hold None on entry. */
static inline int wf_func_call(TVMFFIObject* f, const TVMFFIAny* args, int32_t n,
                               TVMFFIAny* result) {
  TVMFFIFunctionCell* cell = (TVMFFIFunctionCell*)((char*)f + sizeof(TVMFFIObject));
  return cell->safe_call(f, args, n, result);
}

/* Makes a Function (new reference) for a C callback without state;
 * NULL with the error raised on failure. */
TVMFFIObject* wf_func_new(TVMFFISafeCallType safe_call, void* self, void (*deleter)(void*));

/* A Function whose safe_call receives the Function itself (as upstream)
 * and reads its state with wf_func_self: called without the trampoline. */
TVMFFIObject* wf_func_new_direct(TVMFFISafeCallType safe_call, void* self, void (*deleter)(void*));
void* wf_func_self(TVMFFIObject* f);

/* A Function for one of the runtime's own callbacks, which ignore `self`:
 * called without the trampoline. */
TVMFFIObject* wf_func_new_builtin(TVMFFISafeCallType safe_call);

/* A Function calling a library symbol (with a NULL self) that keeps
 * `owner` (its module) alive for as long as the function lives. */
TVMFFIObject* wf_func_new_owned(TVMFFISafeCallType safe_call, TVMFFIObject* owner);

#endif /* WEBFFI_SRC_FUNCTION_H_ */
