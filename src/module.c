/* Modules: functions looked up by name in a library of symbols (the
 * runtime's own system library, or a loaded wasm module), with imports. */
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <webffi/module.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "buffer.h"
#include "env.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "module.h"
#include "object.h"
#include "runtime_init.h"
#include "str.h"
#include "strmap.h"

#define WF_SYMBOL_PREFIX "__tvm_ffi_"

typedef struct {
  int is_system;      /* symbols come from the system library table */
  char* prefix;       /* system library: symbol prefix, may be "" */
  wf_strmap symbols;  /* otherwise: the module's own symbols */
  void* library;      /* a platform library (dlopen): its symbols come from lookup */
  wf_module_lookup_fn lookup;
  void (*unload)(void* library);
  char* name;         /* the loaded-table key, or NULL */
  TVMFFIObject** imports;
  size_t num_imports;
  wf_strmap import_cache; /* TVMFFIEnvModLookupFromImports results */
} wf_module_payload;

static wf_strmap wf_loaded_modules;   /* name -> module (strong) */
static wf_strmap wf_system_libraries; /* prefix -> module (strong, for ever) */

static void wf_module_release_function(void* f) { wf_obj_decref((TVMFFIObject*)f); }

static void wf_module_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_module_payload* p = WF_OBJ_CELL(self, wf_module_payload);
    wf_strmap_clear(&p->symbols, NULL);
    wf_strmap_clear(&p->import_cache, wf_module_release_function);
    for (size_t i = 0; i < p->num_imports; ++i) wf_obj_decref(p->imports[i]);
    free(p->imports);
    free(p->prefix);
    free(p->name);
    if (p->unload != NULL) p->unload(p->library);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

/* Whether MOD is a module this core made: C++ code on upstream's headers
 * can make its own ModuleObj (type index kTVMFFIModule, C++ layout), which
 * the core must never read as its own. */
int wf_module_is_core(const TVMFFIObject* mod) {
  return mod != NULL && mod->type_index == kTVMFFIModule && mod->deleter == wf_module_deleter;
}

int wf_module_arg(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                  TVMFFIObjectHandle* mod) {
  if (WebFFIArgToObject(sig, args, i, kTVMFFIModule, mod) != 0) return -1;
  if (wf_module_is_core((const TVMFFIObject*)*mod)) return 0;
  return wf_err_raise("TypeError",
                      "%s: argument #%d is a module webffi's core did not make (a C++ ModuleObj); "
                      "it takes modules webffi loaded",
                      sig->name, (int)i);
}

static TVMFFIObject* wf_module_new(void) {
  return wf_obj_alloc(sizeof(TVMFFIObject) + sizeof(wf_module_payload), 8, kTVMFFIModule,
                      wf_module_deleter);
}

static char* wf_module_strdup(const char* s, size_t n) {
  char* copy = (char*)malloc(n + 1);
  if (copy == NULL) {
    wf_err_raise_oom(n + 1);
    return NULL;
  }
  memcpy(copy, s, n);
  copy[n] = '\0';
  return copy;
}

/* Looks up `__tvm_ffi_<part><name>`; a system library tries its own
 * prefix first, then the bare name. NULL when absent or out of memory. */
static void* wf_module_symbol(const wf_module_payload* p, const char* part, const char* name,
                              size_t name_len) {
  wf_buf key = {0};
  void* symbol = NULL;
  for (int attempt = 0; attempt < 2 && symbol == NULL; ++attempt) {
    if (attempt == 1 && !(p->is_system && p->prefix[0] != '\0')) break;
    wf_buf_reset(&key);
    wf_buf_puts(&key, part);
    if (attempt == 0 && p->is_system) wf_buf_puts(&key, p->prefix);
    wf_buf_append(&key, name, name_len);
    if (key.failed) break;
    symbol = p->is_system  ? wf_env_system_lib_symbol(key.data, key.size)
             : p->lookup ? p->lookup(p->library, key.data)
                         : wf_strmap_get(&p->symbols, key.data, key.size);
  }
  wf_buf_free(&key);
  return symbol;
}

/* *out: a new Function reference, or NULL when neither the module nor (when
 * asked) its imports define the name. */
static int wf_module_get_function(TVMFFIObject* mod, const char* name, size_t len,
                                  int query_imports, TVMFFIObject** out) {
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  *out = NULL;
  void* symbol = wf_module_symbol(p, WF_SYMBOL_PREFIX, name, len);
  if (symbol != NULL) {
    *out = wf_func_new_owned((TVMFFISafeCallType)symbol, mod);
    return *out != NULL ? 0 : -1;
  }
  for (size_t i = 0; query_imports && i < p->num_imports; ++i) {
    if (wf_module_get_function(p->imports[i], name, len, 1, out) != 0) return -1;
    if (*out != NULL) return 0;
  }
  return 0;
}

static int wf_module_reaches(TVMFFIObject* from, TVMFFIObject* target) {
  if (from == target) return 1;
  wf_module_payload* p = WF_OBJ_CELL(from, wf_module_payload);
  for (size_t i = 0; i < p->num_imports; ++i) {
    if (wf_module_reaches(p->imports[i], target)) return 1;
  }
  return 0;
}

static int wf_module_import(TVMFFIObject* mod, TVMFFIObject* other) {
  if (wf_module_reaches(other, mod)) {
    return wf_err_raise("ValueError", "Cannot import a module into itself, directly or not");
  }
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  TVMFFIObject** grown =
      (TVMFFIObject**)realloc(p->imports, (p->num_imports + 1) * sizeof(TVMFFIObject*));
  if (grown == NULL) return wf_err_raise_oom((p->num_imports + 1) * sizeof(TVMFFIObject*));
  p->imports = grown;
  wf_obj_incref(other);
  p->imports[p->num_imports++] = other;
  return 0;
}

/* ------------------------------------------------------------- loaders */
int WebFFIModuleCreate(const char* name, TVMFFIObjectHandle* out) {
  if (out == NULL) return wf_err_raise("ValueError", "WebFFIModuleCreate: out is NULL");
  size_t name_len = name != NULL ? strlen(name) : 0;
  if (name != NULL && wf_strmap_get(&wf_loaded_modules, name, name_len) != NULL) {
    return wf_err_raise("ValueError", "A module named `%s` is already loaded", name);
  }
  TVMFFIObject* mod = wf_module_new();
  if (mod == NULL) return -1;
  if (name != NULL) {
    wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
    p->name = wf_module_strdup(name, name_len);
    if (p->name == NULL || wf_strmap_put(&wf_loaded_modules, name, name_len, mod) != 0) {
      wf_obj_decref(mod);
      return -1;
    }
    wf_obj_incref(mod); /* the loaded table's reference */
  }
  *out = mod;
  return 0;
}

int WebFFIModuleAddSymbol(TVMFFIObjectHandle module, const char* name, void* symbol) {
  TVMFFIObject* mod = (TVMFFIObject*)module;
  if (!wf_module_is_core(mod) || name == NULL) {
    return wf_err_raise("ValueError", "WebFFIModuleAddSymbol: expects a module and a name");
  }
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  if (p->is_system) {
    return wf_err_raise("ValueError", "WebFFIModuleAddSymbol: the system library is read-only");
  }
  size_t n = strlen(name);
  if (strcmp(name, "__tvm_ffi__library_ctx") == 0 && symbol != NULL) {
    *(void**)symbol = mod;
  } else if (symbol != NULL && wf_env_context_symbol(name, n) != NULL) {
    *(void**)symbol = wf_env_context_symbol(name, n);
  }
  return wf_strmap_put(&p->symbols, name, n, symbol);
}

int WebFFIModuleSetUnload(TVMFFIObjectHandle module, void (*unload)(void* ctx), void* ctx) {
  TVMFFIObject* mod = (TVMFFIObject*)module;
  if (!wf_module_is_core(mod)) {
    return wf_err_raise("ValueError", "WebFFIModuleSetUnload: not a module made by WebFFIModuleCreate");
  }
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  if (p->is_system || p->lookup != NULL) {
    return wf_err_raise("ValueError", "WebFFIModuleSetUnload: the module is a library already");
  }
  p->unload = unload;
  p->library = ctx;
  return 0;
}

int wf_module_new_library(void* library, wf_module_lookup_fn lookup, void (*unload)(void*),
                          TVMFFIObject** out) {
  TVMFFIObject* mod = wf_module_new();
  if (mod == NULL) {
    unload(library);
    return -1;
  }
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  p->library = library;
  p->lookup = lookup;
  p->unload = unload;
  /* the library finds its own module (TVMFFIEnvModLookupFromImports) */
  void** ctx = (void**)lookup(library, "__tvm_ffi__library_ctx");
  if (ctx != NULL) *ctx = mod;
  *out = mod;
  return 0;
}

/* The loaded table, for the C entry points and the webffi.* globals alike. */
static TVMFFIObject* wf_module_find_loaded(const char* name, size_t n) {
  TVMFFIObject* mod = wf_strmap_get(&wf_loaded_modules, name, n);
  if (mod != NULL) wf_obj_incref(mod);
  return mod;
}

static int wf_module_unload(const char* name, size_t n) {
  TVMFFIObject* mod = wf_strmap_remove(&wf_loaded_modules, name, n);
  if (mod == NULL) return 0;
  wf_obj_decref(mod);
  return 1;
}

TVMFFIObjectHandle WebFFIModuleFindLoaded(const char* name) {
  return name != NULL ? wf_module_find_loaded(name, strlen(name)) : NULL;
}

int WebFFIModuleUnload(const char* name) {
  return name != NULL ? wf_module_unload(name, strlen(name)) : 0;
}

int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                  TVMFFIObjectHandle* out) {
  TVMFFIObject* mod = (TVMFFIObject*)library_ctx;
  if (!wf_module_is_core(mod) || func_name == NULL || out == NULL) {
    return wf_err_raise("ValueError", "TVMFFIEnvModLookupFromImports: invalid arguments");
  }
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  size_t n = strlen(func_name);
  TVMFFIObject* f = wf_strmap_get(&p->import_cache, func_name, n);
  if (f == NULL) {
    for (size_t i = 0; i < p->num_imports && f == NULL; ++i) {
      if (wf_module_get_function(p->imports[i], func_name, n, 1, &f) != 0) return -1;
    }
    if (f == NULL) {
      return wf_err_raise("RuntimeError", "Cannot find function `%s` in the imported modules",
                          func_name);
    }
    if (wf_strmap_put(&p->import_cache, func_name, n, f) != 0) {
      wf_obj_decref(f);
      return -1;
    }
  }
  *out = f;
  return 0;
}

/* ---------------------------------------------------- global functions */
static const char* const wf_module_get_types[] = {"ffi.Module", "str", "bool"};
static const WebFFISignature wf_module_get_sig = {"ffi.ModuleGetFunction", 3,
                                                  wf_module_get_types, "Optional<ffi.Function>"};
static const WebFFISignature wf_module_implements_sig = {"ffi.ModuleImplementsFunction", 3,
                                                         wf_module_get_types, "bool"};

static int wf_module_lookup_args(const WebFFISignature* sig, const TVMFFIAny* args, int32_t n,
                                 TVMFFIObjectHandle* mod, TVMFFIByteArray* name,
                                 int* query_imports) {
  *query_imports = 1;
  if (n == 2) {
    /* query_imports is optional and defaults to true */
    WebFFISignature two = *sig;
    two.num_args = 2;
    if (wf_module_arg(&two, args, 0, mod) != 0) return -1;
    return WebFFIArgToString(&two, args, 1, name);
  }
  if (WebFFICheckNumArgs(sig, n) != 0) return -1;
  if (wf_module_arg(sig, args, 0, mod) != 0) return -1;
  if (WebFFIArgToString(sig, args, 1, name) != 0) return -1;
  return WebFFIArgToBool(sig, args, 2, query_imports);
}

static int wf_module_get_function_global(void* self, const TVMFFIAny* args, int32_t n,
                                         TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod;
  TVMFFIByteArray name;
  int query_imports;
  if (wf_module_lookup_args(&wf_module_get_sig, args, n, &mod, &name, &query_imports) != 0) {
    return -1;
  }
  TVMFFIObject* f = NULL;
  if (wf_module_get_function(mod, name.data, name.size, query_imports, &f) != 0) return -1;
  if (f != NULL) wf_any_set_object(result, f);
  return 0;
}

static int wf_module_implements_global(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod;
  TVMFFIByteArray name;
  int query_imports;
  if (wf_module_lookup_args(&wf_module_implements_sig, args, n, &mod, &name, &query_imports) !=
      0) {
    return -1;
  }
  TVMFFIObject* f = NULL;
  if (wf_module_get_function(mod, name.data, name.size, query_imports, &f) != 0) return -1;
  wf_any_set_bool(result, f != NULL);
  if (f != NULL) wf_obj_decref(f);
  return 0;
}

static const char* const wf_module_one[] = {"ffi.Module"};
static const WebFFISignature wf_module_kind_sig = {"ffi.ModuleGetKind", 1, wf_module_one, "str"};

static int wf_module_kind_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod;
  if (WebFFICheckNumArgs(&wf_module_kind_sig, n) != 0) return -1;
  if (wf_module_arg(&wf_module_kind_sig, args, 0, &mod) != 0) return -1;
  return wf_str_make(0, "library", 7, result);
}

/* webffi.ModuleGetName(mod) -> Optional<str>: the name a module was
 * loaded under (None for the system library and unnamed modules), for
 * hosts that show it. */
static const WebFFISignature wf_module_name_sig = {"webffi.ModuleGetName", 1, wf_module_one,
                                                   "Optional<str>"};

static int wf_module_name_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod;
  if (WebFFICheckNumArgs(&wf_module_name_sig, n) != 0) return -1;
  if (wf_module_arg(&wf_module_name_sig, args, 0, &mod) != 0) return -1;
  const wf_module_payload* p = WF_OBJ_CELL((TVMFFIObject*)mod, wf_module_payload);
  if (p->name == NULL) return 0; /* result stays None */
  return wf_str_make(0, p->name, strlen(p->name), result);
}

static const char* const wf_module_two[] = {"ffi.Module", "ffi.Module"};
static const WebFFISignature wf_module_import_sig = {"ffi.ModuleImportModule", 2, wf_module_two,
                                                     "None"};

static int wf_module_import_global(void* self, const TVMFFIAny* args, int32_t n,
                                   TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIObjectHandle mod, other;
  if (WebFFICheckNumArgs(&wf_module_import_sig, n) != 0) return -1;
  if (wf_module_arg(&wf_module_import_sig, args, 0, &mod) != 0) return -1;
  if (wf_module_arg(&wf_module_import_sig, args, 1, &other) != 0) return -1;
  return wf_module_import(mod, other);
}

/* `__tvm_ffi__metadata_NAME` and `__tvm_ffi__doc_NAME` are safe calls that
 * return a string; None when no module has such a symbol. With
 * query_imports, the imports are asked in order (depth first), as upstream. */
static int wf_module_describe_in(TVMFFIObject* mod, const char* part, const TVMFFIByteArray* name,
                                 int query_imports, TVMFFIAny* result) {
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  void* symbol = wf_module_symbol(p, part, name->data, name->size);
  if (symbol != NULL) return ((TVMFFISafeCallType)symbol)(NULL, NULL, 0, result);
  for (size_t i = 0; query_imports && i < p->num_imports; ++i) {
    if (wf_module_describe_in(p->imports[i], part, name, 1, result) != 0) return -1;
    if (result->type_index != kTVMFFINone) return 0;
  }
  return 0;
}

static int wf_module_describe(const char* fn, const char* part, const TVMFFIAny* args, int32_t n,
                              TVMFFIAny* result) {
  const WebFFISignature sig = {fn, 3, wf_module_get_types, "Optional<str>"};
  TVMFFIObjectHandle mod;
  TVMFFIByteArray name;
  int query_imports;
  if (wf_module_lookup_args(&sig, args, n, &mod, &name, &query_imports) != 0) return -1;
  return wf_module_describe_in((TVMFFIObject*)mod, part, &name, query_imports, result);
}

static const WebFFISignature wf_module_clear_sig = {"ffi.ModuleClearImports", 1, wf_module_one,
                                                    "None"};

static int wf_module_clear_imports_global(void* self, const TVMFFIAny* args, int32_t n,
                                          TVMFFIAny* result) {
  (void)self;
  (void)result;
  TVMFFIObjectHandle mod;
  if (WebFFICheckNumArgs(&wf_module_clear_sig, n) != 0 ||
      wf_module_arg(&wf_module_clear_sig, args, 0, &mod) != 0) {
    return -1;
  }
  wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
  /* Functions found through the imports go with them. */
  wf_strmap_clear(&p->import_cache, wf_module_release_function);
  for (size_t i = 0; i < p->num_imports; ++i) wf_obj_decref(p->imports[i]);
  p->num_imports = 0;
  return 0;
}

static int wf_module_metadata_global(void* self, const TVMFFIAny* args, int32_t n,
                                     TVMFFIAny* result) {
  (void)self;
  return wf_module_describe("ffi.ModuleGetFunctionMetadata", "__tvm_ffi__metadata_", args, n,
                            result);
}

static int wf_module_doc_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_module_describe("ffi.ModuleGetFunctionDoc", "__tvm_ffi__doc_", args, n, result);
}

static int wf_module_system_lib_global(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  (void)self;
  static const char* const types[] = {"str"};
  static const WebFFISignature sig = {"ffi.SystemLib", 1, types, "ffi.Module"};
  TVMFFIByteArray prefix = {"", 0};
  if (n > 1) return WebFFICheckNumArgs(&sig, n);
  if (n == 1 && WebFFIArgToString(&sig, args, 0, &prefix) != 0) return -1;
  TVMFFIObject* mod = wf_strmap_get(&wf_system_libraries, prefix.data, prefix.size);
  if (mod == NULL) {
    mod = wf_module_new();
    if (mod == NULL) return -1;
    wf_module_payload* p = WF_OBJ_CELL(mod, wf_module_payload);
    p->is_system = 1;
    p->prefix = wf_module_strdup(prefix.data, prefix.size);
    if (p->prefix == NULL ||
        wf_strmap_put(&wf_system_libraries, prefix.data, prefix.size, mod) != 0) {
      wf_obj_decref(mod);
      return -1;
    }
  }
  wf_obj_incref(mod);
  wf_any_set_object(result, mod);
  return 0;
}

/* webffi.ModuleFindLoaded(name) -> Optional<ffi.Module>, and
 * webffi.ModuleUnload(name) -> bool: the loaded table for hosts. */
static const char* const wf_module_name_types[] = {"str"};

static int wf_module_name_arg(const char* fn, const char* ret, const TVMFFIAny* args, int32_t n,
                              TVMFFIByteArray* name) {
  const WebFFISignature sig = {fn, 1, wf_module_name_types, ret};
  if (WebFFICheckNumArgs(&sig, n) != 0) return -1;
  return WebFFIArgToString(&sig, args, 0, name);
}

static int wf_module_find_loaded_global(void* self, const TVMFFIAny* args, int32_t n,
                                        TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray name;
  if (wf_module_name_arg("webffi.ModuleFindLoaded", "Optional<ffi.Module>", args, n, &name) != 0) {
    return -1;
  }
  TVMFFIObject* mod = wf_module_find_loaded(name.data, name.size);
  if (mod != NULL) wf_any_set_object(result, mod);
  return 0;
}

static int wf_module_unload_global(void* self, const TVMFFIAny* args, int32_t n,
                                   TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray name;
  if (wf_module_name_arg("webffi.ModuleUnload", "bool", args, n, &name) != 0) return -1;
  wf_any_set_bool(result, wf_module_unload(name.data, name.size));
  return 0;
}

/* Dispatches on the extension to `ffi.Module.load_from_file.FORMAT`,
 * called as upstream does with (path, format); `dll`, `dylib` and `dso`
 * are all the format `so`. */
static int wf_module_load_from_file_global(void* self, const TVMFFIAny* args, int32_t n,
                                           TVMFFIAny* result) {
  (void)self;
  static const char* const types[] = {"str"};
  static const WebFFISignature sig = {"ffi.ModuleLoadFromFile", 1, types, "ffi.Module"};
  TVMFFIByteArray path;
  if (WebFFICheckNumArgs(&sig, n) != 0) return -1;
  if (WebFFIArgToString(&sig, args, 0, &path) != 0) return -1;
  const char* dot = NULL;
  for (size_t i = path.size; i-- > 0 && path.data[i] != '/';) {
    if (path.data[i] == '.') {
      dot = path.data + i;
      break;
    }
  }
  if (dot == NULL) {
    return wf_err_raise("ValueError", "Cannot load module `%.*s`: the file has no extension",
                        (int)path.size, path.data);
  }
  const char* format = dot + 1;
  size_t format_len = (size_t)(path.data + path.size - format);
  static const char* const so_aliases[] = {"dll", "dylib", "dso"};
  for (size_t i = 0; i < sizeof(so_aliases) / sizeof(so_aliases[0]); ++i) {
    if (format_len == strlen(so_aliases[i]) && memcmp(format, so_aliases[i], format_len) == 0) {
      format = "so";
      format_len = 2;
    }
  }
  wf_buf loader_name = {0};
  wf_buf_puts(&loader_name, "ffi.Module.load_from_file.");
  wf_buf_append(&loader_name, format, format_len);
  if (loader_name.failed) {
    wf_buf_free(&loader_name);
    return wf_err_raise_oom(path.size);
  }
  TVMFFIByteArray key = {loader_name.data, loader_name.size};
  TVMFFIObjectHandle loader = NULL;
  int rc = TVMFFIFunctionGetGlobal(&key, &loader);
  if (rc == 0 && loader == NULL) {
    rc = wf_err_raise("RuntimeError",
                      "Cannot load module `%.*s`: no loader for `%s` files (`%s` is not "
                      "registered)",
                      (int)path.size, path.data, dot, loader_name.data);
  }
  wf_buf_free(&loader_name);
  if (rc != 0) return -1;
  TVMFFIAny loader_args[2];
  loader_args[0] = args[0];
  TVMFFIByteArray format_text = {format, format_len};
  loader_args[1].type_index = kTVMFFIByteArrayPtr;
  loader_args[1].zero_padding = 0;
  loader_args[1].v_ptr = &format_text;
  rc = wf_func_call((TVMFFIObject*)loader, loader_args, 2, result);
  wf_obj_decref((TVMFFIObject*)loader);
  return rc;
}

int wf_module_register_builtins(void) {
  static const struct {
    const char* name;
    TVMFFISafeCallType fn;
  } fns[] = {
      {"ffi.SystemLib", wf_module_system_lib_global},
      {"ffi.ModuleLoadFromFile", wf_module_load_from_file_global},
      {"ffi.ModuleGetFunction", wf_module_get_function_global},
      {"ffi.ModuleImplementsFunction", wf_module_implements_global},
      {"ffi.ModuleGetKind", wf_module_kind_global},
      {"webffi.ModuleGetName", wf_module_name_global},
      {"ffi.ModuleImportModule", wf_module_import_global},
      {"ffi.ModuleGetFunctionMetadata", wf_module_metadata_global},
      {"ffi.ModuleGetFunctionDoc", wf_module_doc_global},
      {"ffi.ModuleClearImports", wf_module_clear_imports_global},
      {"webffi.ModuleFindLoaded", wf_module_find_loaded_global},
      {"webffi.ModuleUnload", wf_module_unload_global},
  };
  for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); ++i) {
    if (wf_global_register(fns[i].name, fns[i].fn, NULL) != 0) return -1;
  }
  return 0;
}
