/* `ffi.Module.load_from_file.so` natively: a shared library opened with
 * dlopen, served as a module, called as upstream's with (path, format). */
#include <dlfcn.h>
#include <webffi/typed_call.h>

#include "../error.h"
#include "../global_registry.h"
#include "../module.h"
#include "../object.h"
#include "../str.h"

static void* wf_dso_lookup(void* library, const char* symbol) { return dlsym(library, symbol); }

static void wf_dso_unload(void* library) { dlclose(library); }

static int wf_dso_load_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  static const char* const types[] = {"str", "str"};
  static const WebFFISignature sig = {"ffi.Module.load_from_file.so", 2, types, "ffi.Module"};
  TVMFFIByteArray path;
  if (n != 1 && WebFFICheckNumArgs(&sig, n) != 0) return -1;
  if (WebFFIArgToString(&sig, args, 0, &path) != 0) return -1;
  /* dlopen wants a NUL-terminated path: a String's data is one */
  TVMFFIAny owned;
  if (wf_str_make(0, path.data, path.size, &owned) != 0) return -1;
  const char* cpath = owned.type_index == kTVMFFISmallStr
                          ? owned.v_bytes
                          : ((const TVMFFIByteArray*)((char*)owned.v_obj + sizeof(TVMFFIObject)))->data;
  void* library = dlopen(cpath, RTLD_NOW | RTLD_LOCAL);
  int rc;
  if (library == NULL) {
    const char* why = dlerror();
    rc = wf_err_raise("RuntimeError", "Cannot load module `%s`: %s", cpath,
                      why != NULL ? why : "dlopen failed");
  } else {
    TVMFFIObject* mod = NULL;
    rc = wf_module_new_library(library, wf_dso_lookup, wf_dso_unload, &mod);
    if (rc == 0) {
      result->type_index = kTVMFFIModule;
      result->zero_padding = 0;
      result->v_obj = mod;
    }
  }
  if (owned.type_index >= kTVMFFIStaticObjectBegin) wf_obj_decref(owned.v_obj);
  return rc;
}

int wf_dso_register(void) {
  return wf_global_register("ffi.Module.load_from_file.so", wf_dso_load_global, NULL);
}
