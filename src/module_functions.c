/* The module functions upstream's core registers that ask what a module can
 * become rather than what it holds: ffi.ModuleGetPropertyMask,
 * ffi.ModuleGetWriteFormats, ffi.ModuleInspectSource, ffi.ModuleWriteToFile,
 * and ffi.ModuleGlobalsAdd/Remove (modules kept alive for the process).
 * webffi's modules are libraries (kind "library"), as upstream's are. */
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "global_registry.h"
#include "map.h"
#include "module.h"
#include "object.h"
#include "runtime_init.h"
#include "seq.h"
#include "str.h"

/* Upstream's ModulePropertyMask: a library is binary serializable and runnable. */
#define WF_MODULE_BINARY_SERIALIZABLE 0x1
#define WF_MODULE_RUNNABLE 0x2

static const char* const wf_mod_one[] = {"ffi.Module"};
static const char* const wf_mod_str[] = {"ffi.Module", "str"};
static const char* const wf_mod_str_str[] = {"ffi.Module", "str", "str"};

static const WebFFISignature wf_mask_sig = {"ffi.ModuleGetPropertyMask", 1, wf_mod_one, "int"};
static const WebFFISignature wf_formats_sig = {"ffi.ModuleGetWriteFormats", 1, wf_mod_one,
                                               "Array<str>"};
static const WebFFISignature wf_inspect_sig = {"ffi.ModuleInspectSource", 2, wf_mod_str, "str"};
static const WebFFISignature wf_write_sig = {"ffi.ModuleWriteToFile", 3, wf_mod_str_str, "None"};
static const WebFFISignature wf_add_sig = {"ffi.ModuleGlobalsAdd", 1, wf_mod_one, "None"};
static const WebFFISignature wf_remove_sig = {"ffi.ModuleGlobalsRemove", 1, wf_mod_one, "None"};

static int wf_mod_arg(const WebFFISignature* sig, const TVMFFIAny* args, int32_t n,
                      TVMFFIObjectHandle* mod) {
  if (WebFFICheckNumArgs(sig, n) != 0) return -1;
  return wf_module_arg(sig, args, 0, mod);
}

static int wf_mod_mask(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod;
  if (wf_mod_arg(&wf_mask_sig, args, n, &mod) != 0) return -1;
  wf_any_set_int(result, WF_MODULE_BINARY_SERIALIZABLE | WF_MODULE_RUNNABLE);
  return 0;
}

static int wf_mod_formats(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod;
  if (wf_mod_arg(&wf_formats_sig, args, n, &mod) != 0) return -1;
  TVMFFIObject* none = wf_seq_new(kTVMFFIArray, 0);
  if (none == NULL) return -1;
  wf_any_set_object(result, none);
  return 0;
}

/* A library holds machine code only: there is no source to show. */
static int wf_mod_inspect(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod;
  TVMFFIByteArray format;
  if (wf_mod_arg(&wf_inspect_sig, args, n, &mod) != 0 ||
      WebFFIArgToString(&wf_inspect_sig, args, 1, &format) != 0) {
    return -1;
  }
  return wf_str_make(0, "", 0, result);
}

static int wf_mod_write(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIObjectHandle mod;
  TVMFFIByteArray file, format;
  if (wf_mod_arg(&wf_write_sig, args, n, &mod) != 0 ||
      WebFFIArgToString(&wf_write_sig, args, 1, &file) != 0 ||
      WebFFIArgToString(&wf_write_sig, args, 2, &format) != 0) {
    return -1;
  }
  return wf_err_raise("RuntimeError", "Module[library] does not support WriteToFile");
}

static TVMFFIObject* wf_module_globals; /* Dict<Module, int>, made on first add */

static int wf_mod_globals_add(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIObjectHandle mod;
  if (wf_mod_arg(&wf_add_sig, args, n, &mod) != 0) return -1;
  if (wf_module_globals == NULL && (wf_module_globals = wf_map_new(kTVMFFIDict, 0)) == NULL) {
    return -1;
  }
  TVMFFIAny one;
  wf_any_set_int(&one, 1);
  return wf_map_set(wf_module_globals, &args[0], &one);
}

static int wf_mod_globals_remove(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIObjectHandle mod;
  if (wf_mod_arg(&wf_remove_sig, args, n, &mod) != 0) return -1;
  if (wf_module_globals == NULL) return 0;
  return wf_map_erase(wf_module_globals, &args[0]) < 0 ? -1 : 0;
}

int wf_module_functions_register(void) {
  static const struct {
    const char* name;
    TVMFFISafeCallType fn;
  } fns[] = {
      {"ffi.ModuleGetPropertyMask", wf_mod_mask},
      {"ffi.ModuleGetWriteFormats", wf_mod_formats},
      {"ffi.ModuleInspectSource", wf_mod_inspect},
      {"ffi.ModuleWriteToFile", wf_mod_write},
      {"ffi.ModuleGlobalsAdd", wf_mod_globals_add},
      {"ffi.ModuleGlobalsRemove", wf_mod_globals_remove},
  };
  for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); ++i) {
    if (wf_global_register(fns[i].name, fns[i].fn, NULL) != 0) return -1;
  }
  return 0;
}
