/*
 * A user program written against the tvm-ffi C ABI alone: it must compile
 * unchanged against webffi's include/ and run natively and in wasm.
 */
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

static int add(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add expects two ints");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + args[1].v_int64;
  return 0;
}

int main(void) {
  TVMFFIObjectHandle f = NULL, g = NULL;
  TVMFFIByteArray name = {"example.add", 11};
  if (TVMFFIFunctionCreate(NULL, add, NULL, &f) != 0) return 1;
  if (TVMFFIFunctionSetGlobal(&name, f, 0) != 0) return 1;
  TVMFFIObjectDecRef(f);
  if (TVMFFIFunctionGetGlobal(&name, &g) != 0 || g == NULL) return 1;

  TVMFFIAny args[2], result;
  memset(args, 0, sizeof(args));
  memset(&result, 0, sizeof(result));
  args[0].type_index = kTVMFFIInt;
  args[0].v_int64 = 40;
  args[1].type_index = kTVMFFIInt;
  args[1].v_int64 = 2;
  if (TVMFFIFunctionCall(g, args, 2, &result) != 0) return 1;
  printf("example.add(40, 2) = %lld\n", (long long)result.v_int64);

  args[1].type_index = kTVMFFIFloat;
  args[1].v_float64 = 2.5;
  if (TVMFFIFunctionCall(g, args, 2, &result) == 0) return 1;
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  printf("example.add(40, 2.5) raised %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data,
         (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(err);
  TVMFFIObjectDecRef(g);
  return 0;
}
