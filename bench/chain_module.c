/*
 * The kernel chain of bench/chain_bench.mjs driven from C: looks a kernel up
 * in the global registry once, then calls it n times on the previous
 * result, as compiled model code would. Built on demand by the benchmark
 * (webffi build --module bench/chain_module.c).
 */
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* chain(name, x, w, n) -> name(...name(name(x, w), w)..., w), n calls;
 * w None: name(x). x is borrowed; each intermediate is released as soon as
 * the next call has taken it. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_chain(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)self;
  if (num_args != 4 || args[0].type_index != kTVMFFIRawStr || args[1].type_index != kTVMFFITensor ||
      (args[2].type_index != kTVMFFITensor && args[2].type_index != kTVMFFINone) ||
      args[3].type_index != kTVMFFIInt || args[3].v_int64 < 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "chain expects (str, Tensor, Optional[Tensor], int >= 1)");
    return -1;
  }
  const char* name = args[0].v_c_str;
  size_t len = 0;
  while (name[len]) ++len;
  TVMFFIByteArray key = {name, len};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &f) != 0) return -1;
  if (f == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "chain: no global function of that name");
    return -1;
  }
  int32_t nargs = args[2].type_index == kTVMFFINone ? 1 : 2;
  TVMFFIAny call[2] = {args[1], args[2]};
  TVMFFIObjectHandle prev = NULL; /* the intermediate we own */
  int rc = 0;
  for (int64_t i = 0; i < args[3].v_int64; ++i) {
    TVMFFIAny out;
    out.type_index = kTVMFFINone;
    out.zero_padding = 0;
    out.v_int64 = 0;
    rc = TVMFFIFunctionCall(f, call, nargs, &out);
    if (rc == 0 && out.type_index != kTVMFFITensor) {
      if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
      TVMFFIErrorSetRaisedFromCStr("TypeError", "chain: the kernel did not return a Tensor");
      rc = -1;
    }
    if (rc != 0) break;
    if (prev != NULL) TVMFFIObjectDecRef(prev);
    prev = out.v_obj;
    call[0] = out;
  }
  TVMFFIObjectDecRef(f);
  if (rc != 0) {
    if (prev != NULL) TVMFFIObjectDecRef(prev);
    return -1;
  }
  result->type_index = kTVMFFITensor;
  result->zero_padding = 0;
  result->v_obj = prev;
  return 0;
}
