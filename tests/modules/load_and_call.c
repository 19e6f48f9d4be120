/* A command program (it has main): loads the module named on its command
 * line at run time and calls one of its functions, as a native tvm-ffi
 * program would with a shared library.
 *
 *   webffi run load_and_call.wasm MODULE FUNCTION INT [--so]
 *
 * prints `FUNCTION(INT) = RESULT`; with --so it loads through upstream's
 * `ffi.Module.load_from_file.so` (path, format), otherwise through
 * `ffi.ModuleLoadFromFile`. Exit code 0, 1 for an FFI error (printed on
 * stderr as `KIND: MESSAGE`), 2 for a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

static int call_global(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &f) != 0) return -1;
  if (f == NULL) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", name);
    return -1;
  }
  result->type_index = kTVMFFINone;
  result->v_int64 = 0;
  int rc = TVMFFIFunctionCall(f, args, n, result);
  TVMFFIObjectDecRef(f);
  return rc;
}

static int report_error(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  fprintf(stderr, "%.*s: %.*s\n", (int)cell->kind.size, cell->kind.data, (int)cell->message.size,
          cell->message.data);
  TVMFFIObjectDecRef(err);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODULE FUNCTION INT [--so]\n", argv[0]);
    return 2;
  }
  int use_so = argc > 4 && strcmp(argv[4], "--so") == 0;
  TVMFFIAny mod = {0}, func = {0}, out = {0};
  TVMFFIAny args[3];
  args[0] = (TVMFFIAny){.type_index = kTVMFFIRawStr, .v_c_str = argv[1]};
  args[1] = (TVMFFIAny){.type_index = kTVMFFIRawStr, .v_c_str = "so"};
  if (call_global(use_so ? "ffi.Module.load_from_file.so" : "ffi.ModuleLoadFromFile", args,
                  use_so ? 2 : 1, &mod) != 0) {
    return report_error();
  }
  args[0] = mod;
  args[1] = (TVMFFIAny){.type_index = kTVMFFIRawStr, .v_c_str = argv[2]};
  args[2] = (TVMFFIAny){.type_index = kTVMFFIBool, .v_int64 = 1};
  int rc = call_global("ffi.ModuleGetFunction", args, 3, &func);
  TVMFFIObjectDecRef(mod.v_obj);
  if (rc != 0) return report_error();
  if (func.type_index != kTVMFFIFunction) {
    fprintf(stderr, "%s has no function %s\n", argv[1], argv[2]);
    return 1;
  }
  args[0] = (TVMFFIAny){.type_index = kTVMFFIInt, .v_int64 = strtoll(argv[3], NULL, 10)};
  rc = TVMFFIFunctionCall(func.v_obj, args, 1, &out);
  TVMFFIObjectDecRef(func.v_obj);
  if (rc != 0) return report_error();
  printf("%s(%s) = %lld\n", argv[2], argv[3], (long long)out.v_int64);
  return 0;
}
