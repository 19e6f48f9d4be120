/* Modules: the system library, symbol-table modules, imports, loaders. */
#include <tvm/ffi/extra/c_env_api.h>
#include <webffi/module.h>
#include <webffi/webffi.h>

#include "harness.h"

static int sys_add_one(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects one int");
    return -1;
  }
  *result = any_int(args[0].v_int64 + 1);
  return 0;
}

static int sys_mylib_sub(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)n;
  *result = any_int(args[0].v_int64 - args[1].v_int64);
  return 0;
}

static int sys_add_one_metadata(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  TVMFFIByteArray s = {"{\"arity\":1}", 11};
  return TVMFFIStringFromByteArray(&s, result);
}

static void register_system_symbols(void) {
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_add_one", (void*)sys_add_one) == 0);
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_mylib_sub", (void*)sys_mylib_sub) == 0);
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi__metadata_add_one",
                                            (void*)sys_add_one_metadata) == 0);
}

static TVMFFIObjectHandle system_lib(const char* prefix) {
  TVMFFIAny arg = any_cstr(prefix), result;
  CHECK(call_global("ffi.SystemLib", &arg, prefix != NULL ? 1 : 0, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIModule);
  return result.v_obj;
}

static TVMFFIAny get_function(TVMFFIObjectHandle mod, const char* name, int query_imports) {
  TVMFFIAny args[3] = {any_obj(mod), any_cstr(name), any_bool(query_imports)}, result;
  CHECK(call_global("ffi.ModuleGetFunction", args, 3, &result) == 0);
  return result;
}

void module_system_lib_serves_registered_symbols(void) {
  register_system_symbols();
  TVMFFIObjectHandle lib = system_lib(NULL);
  TVMFFIAny f = get_function(lib, "add_one", 0);
  CHECK_EQ_INT(f.type_index, kTVMFFIFunction);
  TVMFFIAny arg = any_int(41), result = any_none();
  CHECK(TVMFFIFunctionCall(f.v_obj, &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 42);
  /* errors from the library function come through unchanged */
  arg = any_float(1.0);
  CHECK(TVMFFIFunctionCall(f.v_obj, &arg, 1, &result) == -1);
  CHECK_RAISED("TypeError", "add_one expects one int");
  TVMFFIObjectDecRef(f.v_obj);
  CHECK_EQ_INT(get_function(lib, "no_such_function", 1).type_index, kTVMFFINone);
  /* the same module object for the same prefix */
  TVMFFIObjectHandle again = system_lib(NULL);
  CHECK(again == lib);
  TVMFFIObjectDecRef(again);
  TVMFFIObjectDecRef(lib);
}

void module_system_lib_prefix_falls_back_to_bare_name(void) {
  register_system_symbols();
  TVMFFIObjectHandle lib = system_lib("mylib_");
  TVMFFIAny sub = get_function(lib, "sub", 0), add = get_function(lib, "add_one", 0);
  CHECK_EQ_INT(sub.type_index, kTVMFFIFunction);
  CHECK_EQ_INT(add.type_index, kTVMFFIFunction);
  TVMFFIAny args[2] = {any_int(10), any_int(3)}, result = any_none();
  CHECK(TVMFFIFunctionCall(sub.v_obj, args, 2, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 7);
  TVMFFIObjectDecRef(sub.v_obj);
  TVMFFIObjectDecRef(add.v_obj);
  TVMFFIObjectDecRef(lib);
}

void module_kind_metadata_and_implements(void) {
  register_system_symbols();
  TVMFFIObjectHandle lib = system_lib(NULL);
  TVMFFIAny arg = any_obj(lib), result;
  CHECK(call_global("ffi.ModuleGetKind", &arg, 1, &result) == 0);
  CHECK_EQ_STR(any_str(&result), "library");
  TVMFFIAny args[3] = {any_obj(lib), any_cstr("add_one"), any_bool(1)};
  CHECK(call_global("ffi.ModuleImplementsFunction", args, 3, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 1);
  args[1] = any_cstr("missing");
  CHECK(call_global("ffi.ModuleImplementsFunction", args, 3, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 0);
  args[1] = any_cstr("add_one");
  CHECK(call_global("ffi.ModuleGetFunctionMetadata", args, 2, &result) == 0);
  CHECK_EQ_STR(any_str(&result), "{\"arity\":1}");
  TVMFFIObjectDecRef(result.v_obj);
  CHECK(call_global("ffi.ModuleGetFunctionDoc", args, 2, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFINone);
  TVMFFIObjectDecRef(lib);
}

void module_function_keeps_module_alive(void) {
  TVMFFIObjectHandle mod = NULL;
  CHECK(WebFFIModuleCreate(NULL, &mod) == 0);
  CHECK(WebFFIModuleAddSymbol(mod, "__tvm_ffi_add_one", (void*)sys_add_one) == 0);
  TVMFFIAny f = get_function(mod, "add_one", 0);
  CHECK_EQ_INT(f.type_index, kTVMFFIFunction);
  CHECK_EQ_INT(WebFFIObjectStrongCount(mod), 2);
  TVMFFIObjectDecRef(mod);
  TVMFFIAny arg = any_int(1), result = any_none();
  CHECK(TVMFFIFunctionCall(f.v_obj, &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 2);
  TVMFFIObjectDecRef(f.v_obj); /* frees the module too (ASan checks) */
}

static void* library_ctx_slot;
static void* context_slot;
static int context_value;

void module_imports_and_lookup_from_imports(void) {
  TVMFFIObjectHandle main_mod = NULL, dep = NULL;
  CHECK(TVMFFIEnvModRegisterContextSymbol("__webffi_test_context", &context_value) == 0);
  CHECK(WebFFIModuleCreate(NULL, &main_mod) == 0);
  CHECK(WebFFIModuleCreate(NULL, &dep) == 0);
  CHECK(WebFFIModuleAddSymbol(main_mod, "__tvm_ffi__library_ctx", &library_ctx_slot) == 0);
  CHECK(library_ctx_slot == main_mod);
  CHECK(WebFFIModuleAddSymbol(main_mod, "__webffi_test_context", &context_slot) == 0);
  CHECK(context_slot == &context_value);
  CHECK(WebFFIModuleAddSymbol(dep, "__tvm_ffi_add_one", (void*)sys_add_one) == 0);
  TVMFFIAny args[2] = {any_obj(main_mod), any_obj(dep)}, result;
  CHECK(call_global("ffi.ModuleImportModule", args, 2, &result) == 0);
  CHECK_EQ_INT(get_function(main_mod, "add_one", 0).type_index, kTVMFFINone);
  TVMFFIAny f = get_function(main_mod, "add_one", 1);
  CHECK_EQ_INT(f.type_index, kTVMFFIFunction);
  TVMFFIObjectDecRef(f.v_obj);
  /* generated code looks imports up through the library context */
  TVMFFIObjectHandle cached = NULL, again = NULL;
  CHECK(TVMFFIEnvModLookupFromImports(library_ctx_slot, "add_one", &cached) == 0);
  CHECK(TVMFFIEnvModLookupFromImports(library_ctx_slot, "add_one", &again) == 0);
  CHECK(cached == again);
  CHECK(TVMFFIEnvModLookupFromImports(library_ctx_slot, "nope", &again) == -1);
  CHECK_RAISED("RuntimeError", "Cannot find function `nope` in the imported modules");
  /* cycles are refused */
  TVMFFIAny back[2] = {any_obj(dep), any_obj(main_mod)};
  CHECK(call_global("ffi.ModuleImportModule", back, 2, &result) == -1);
  CHECK_RAISED("ValueError", "Cannot import a module into itself, directly or not");
  TVMFFIObjectDecRef(main_mod);
  TVMFFIObjectDecRef(dep);
}

void module_loaded_table_by_name(void) {
  TVMFFIObjectHandle mod = NULL, dup = NULL;
  CHECK(WebFFIModuleCreate("test_mod.wasm", &mod) == 0);
  CHECK(WebFFIModuleCreate("test_mod.wasm", &dup) == -1);
  CHECK_RAISED("ValueError", "A module named `test_mod.wasm` is already loaded");
  TVMFFIObjectHandle found = WebFFIModuleFindLoaded("test_mod.wasm");
  CHECK(found == mod);
  TVMFFIObjectDecRef(found);
  CHECK(WebFFIModuleFindLoaded("other.wasm") == NULL);
  CHECK_EQ_INT(WebFFIModuleUnload("test_mod.wasm"), 1);
  CHECK_EQ_INT(WebFFIModuleUnload("test_mod.wasm"), 0);
  CHECK(WebFFIModuleFindLoaded("test_mod.wasm") == NULL);
  CHECK_EQ_INT(WebFFIObjectStrongCount(mod), 1);
  TVMFFIObjectDecRef(mod);
}

/* Called as upstream's loaders are: (path, format). */
static int fake_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle mod = NULL;
  CHECK_EQ_INT(n, 2);
  CHECK_EQ_STR(any_str(&args[0]), "/models/model.fake");
  CHECK_EQ_INT(args[1].type_index, kTVMFFIByteArrayPtr);
  const TVMFFIByteArray* format = (const TVMFFIByteArray*)args[1].v_ptr;
  CHECK(format->size == 4 && memcmp(format->data, "fake", 4) == 0);
  if (WebFFIModuleCreate(NULL, &mod) != 0) return -1;
  *result = any_obj(mod);
  return 0;
}

void module_load_from_file_dispatches_on_extension(void) {
  TVMFFIObjectHandle loader = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, fake_loader, NULL, &loader) == 0);
  TVMFFIByteArray name = {"ffi.Module.load_from_file.fake", 30};
  CHECK(TVMFFIFunctionSetGlobal(&name, loader, 0) == 0);
  TVMFFIObjectDecRef(loader);
  TVMFFIAny arg = any_cstr("/models/model.fake"), result;
  CHECK(call_global("ffi.ModuleLoadFromFile", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIModule);
  TVMFFIObjectDecRef(result.v_obj);
  arg = any_cstr("/models/model.xyz");
  CHECK(call_global("ffi.ModuleLoadFromFile", &arg, 1, &result) == -1);
  CHECK_RAISED("RuntimeError",
               "Cannot load module `/models/model.xyz`: no loader for `.xyz` files "
               "(`ffi.Module.load_from_file.xyz` is not registered)");
  arg = any_cstr("/models.d/model");
  CHECK(call_global("ffi.ModuleLoadFromFile", &arg, 1, &result) == -1);
  CHECK_RAISED("ValueError", "Cannot load module `/models.d/model`: the file has no extension");
}

static int fake_so_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  CHECK_EQ_INT(n, 2);
  const TVMFFIByteArray* format = (const TVMFFIByteArray*)args[1].v_ptr;
  CHECK(format->size == 2 && memcmp(format->data, "so", 2) == 0);
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", any_str(&args[0]));
  return -1;
}

void module_load_from_file_dll_dylib_dso_are_so(void) {
  TVMFFIObjectHandle loader = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, fake_so_loader, NULL, &loader) == 0);
  TVMFFIByteArray name = {"ffi.Module.load_from_file.so", 28};
  /* replaces the platform's own loader for this test */
  CHECK(TVMFFIFunctionSetGlobal(&name, loader, 1) == 0);
  TVMFFIObjectDecRef(loader);
  const char* paths[] = {"lib/a.so", "lib/a.dll", "lib/a.dylib", "lib/a.dso"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny arg = any_cstr(paths[i]), result;
    CHECK(call_global("ffi.ModuleLoadFromFile", &arg, 1, &result) == -1);
    CHECK_RAISED("RuntimeError", paths[i]);
  }
}

void module_functions_check_argument_types(void) {
  TVMFFIAny args[3] = {any_int(1), any_cstr("f"), any_bool(1)}, result;
  CHECK(call_global("ffi.ModuleGetFunction", args, 3, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #0 when calling: `ffi.ModuleGetFunction(0: "
               "ffi.Module, 1: str, 2: bool) -> Optional<ffi.Function>`. Expected `ffi.Module` "
               "but got `int`");
}

void module_loaded_table_globals_for_hosts(void) {
  TVMFFIObjectHandle mod = NULL;
  CHECK(WebFFIModuleCreate("host_view.wasm", &mod) == 0);
  TVMFFIAny arg = any_cstr("host_view.wasm"), result;
  CHECK(call_global("webffi.ModuleFindLoaded", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIModule);
  CHECK(result.v_obj == mod);
  TVMFFIObjectDecRef(result.v_obj);
  CHECK(call_global("webffi.ModuleUnload", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFIBool);
  CHECK_EQ_INT(result.v_int64, 1);
  CHECK(call_global("webffi.ModuleUnload", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.v_int64, 0);
  CHECK(call_global("webffi.ModuleFindLoaded", &arg, 1, &result) == 0);
  CHECK_EQ_INT(result.type_index, kTVMFFINone);
  /* the caller's reference keeps the unloaded module alive */
  CHECK_EQ_INT(WebFFIObjectStrongCount(mod), 1);
  TVMFFIObjectDecRef(mod);
  arg = any_int(3);
  CHECK(call_global("webffi.ModuleUnload", &arg, 1, &result) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #0 when calling: `webffi.ModuleUnload(0: str) -> "
               "bool`. Expected `str` but got `int`");
}

/* Natively, `.so` files are shared libraries opened with dlopen. */
void module_load_from_file_so_opens_shared_libraries(void) {
  TVMFFIAny args[3] = {any_cstr(WEBFFI_TEST_ADD_ONE_SO), any_cstr("so")}, mod, func, out;
  /* upstream's loader name and arguments */
  CHECK(call_global("ffi.Module.load_from_file.so", args, 2, &mod) == 0);
  CHECK_EQ_INT(mod.type_index, kTVMFFIModule);
  args[0] = mod;
  args[1] = any_cstr("add_int");
  args[2] = any_bool(1);
  CHECK(call_global("ffi.ModuleGetFunction", args, 3, &func) == 0);
  CHECK_EQ_INT(func.type_index, kTVMFFIFunction);
  release(&mod); /* the function keeps its library loaded */
  args[0] = any_int(41);
  out = any_none();
  CHECK(TVMFFIFunctionCall(func.v_obj, args, 1, &out) == 0);
  CHECK_EQ_INT(out.v_int64, 42);
  args[0] = any_cstr("x");
  CHECK(TVMFFIFunctionCall(func.v_obj, args, 1, &out) == -1);
  CHECK_RAISED("TypeError", "add_int expects one int");
  release(&func);
  /* through ffi.ModuleLoadFromFile too, which passes the format */
  args[0] = any_cstr(WEBFFI_TEST_ADD_ONE_SO);
  CHECK(call_global("ffi.ModuleLoadFromFile", args, 1, &mod) == 0);
  release(&mod);
  args[0] = any_cstr("/no/such/lib.so");
  CHECK(call_global("ffi.ModuleLoadFromFile", args, 1, &mod) == -1);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  CHECK_EQ_STR(cell->kind.data, "RuntimeError");
  CHECK(strncmp(cell->message.data, "Cannot load module `/no/such/lib.so`: ", 38) == 0);
  TVMFFIObjectDecRef(err);
}

/* ffi.ModuleGetPropertyMask, GetWriteFormats, InspectSource, WriteToFile,
 * ClearImports, GlobalsAdd/Remove, and metadata with query_imports. */
void module_upstream_functions(void) {
  register_system_symbols();
  TVMFFIObjectHandle lib = system_lib(NULL), sub = system_lib("mylib_");
  TVMFFIAny one = any_obj(lib), r;
  CHECK(call_global("ffi.ModuleGetPropertyMask", &one, 1, &r) == 0);
  CHECK_EQ_INT(r.v_int64, 3); /* binary serializable | runnable, as upstream's libraries */
  CHECK(call_global("ffi.ModuleGetWriteFormats", &one, 1, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIArray);
  TVMFFIAny size;
  CHECK(call_global("ffi.ArraySize", &r, 1, &size) == 0 && size.v_int64 == 0);
  release(&r);
  TVMFFIAny inspect[2] = {one, any_cstr("asm")};
  CHECK(call_global("ffi.ModuleInspectSource", inspect, 2, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "");
  TVMFFIAny write[3] = {one, any_cstr("/tmp/x.so"), any_cstr("so")};
  CHECK(call_global("ffi.ModuleWriteToFile", write, 3, &r) != 0);
  CHECK_RAISED("RuntimeError", "Module[library] does not support WriteToFile");
  CHECK(call_global("ffi.ModuleGetPropertyMask", &one, 0, &r) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `ffi.ModuleGetPropertyMask(0: "
               "ffi.Module) -> int`. Expected 1 but got 0 arguments");
  /* metadata through an import, only when imports are asked */
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi__metadata_mylib_sub",
                                            (void*)sys_add_one_metadata) == 0);
  TVMFFIAny import[2] = {one, any_obj(sub)};
  CHECK(call_global("ffi.ModuleImportModule", import, 2, &r) == 0);
  TVMFFIAny meta[3] = {one, any_cstr("sub"), any_bool(1)};
  CHECK(call_global("ffi.ModuleGetFunctionMetadata", meta, 3, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "{\"arity\":1}");
  release(&r);
  meta[2] = any_bool(0);
  CHECK(call_global("ffi.ModuleGetFunctionMetadata", meta, 3, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFINone);
  CHECK(call_global("ffi.ModuleGetFunctionDoc", meta, 3, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFINone);
  /* cleared imports no longer serve functions */
  TVMFFIAny f = get_function(lib, "sub", 1);
  CHECK_EQ_INT(f.type_index, kTVMFFIFunction);
  release(&f);
  CHECK(call_global("ffi.ModuleClearImports", &one, 1, &r) == 0);
  f = get_function(lib, "sub", 1);
  CHECK_EQ_INT(f.type_index, kTVMFFINone);
  TVMFFIAny s = any_obj(sub);
  /* the keep-alive set: adding twice and removing twice are fine */
  CHECK(call_global("ffi.ModuleGlobalsAdd", &s, 1, &r) == 0);
  CHECK(call_global("ffi.ModuleGlobalsAdd", &s, 1, &r) == 0);
  CHECK(call_global("ffi.ModuleGlobalsRemove", &s, 1, &r) == 0);
  CHECK(call_global("ffi.ModuleGlobalsRemove", &s, 1, &r) == 0);
  TVMFFIObjectDecRef(sub);
  TVMFFIObjectDecRef(lib);
}

static void foreign_module_deleter(void* self, int flags) {
  (void)self;
  (void)flags;
}

/* An object with the module type index that the core did not make (C++
 * code on upstream's headers makes ModuleObj subclasses): the module
 * functions refuse it with a TypeError instead of reading it as theirs. */
void module_functions_refuse_foreign_modules(void) {
  static TVMFFIObject foreign = {1, kTVMFFIModule, 0, {foreign_module_deleter}};
  TVMFFIAny args[3] = {any_obj(&foreign), any_cstr("f"), any_bool(1)}, r;
  CHECK(call_global("ffi.ModuleGetFunction", args, 3, &r) == -1);
  CHECK_RAISED("TypeError",
               "ffi.ModuleGetFunction: argument #0 is a module webffi's core did not make (a C++ "
               "ModuleObj); it takes modules webffi loaded");
  CHECK(call_global("ffi.ModuleGetKind", args, 1, &r) == -1);
  CHECK_RAISED("TypeError",
               "ffi.ModuleGetKind: argument #0 is a module webffi's core did not make (a C++ "
               "ModuleObj); it takes modules webffi loaded");
  CHECK(call_global("ffi.ModuleGetPropertyMask", args, 1, &r) == -1);
  CHECK_RAISED("TypeError",
               "ffi.ModuleGetPropertyMask: argument #0 is a module webffi's core did not make (a "
               "C++ ModuleObj); it takes modules webffi loaded");
  register_system_symbols();
  TVMFFIObjectHandle lib = system_lib(NULL);
  TVMFFIAny import[2] = {any_obj(lib), any_obj(&foreign)};
  CHECK(call_global("ffi.ModuleImportModule", import, 2, &r) == -1);
  CHECK_RAISED("TypeError",
               "ffi.ModuleImportModule: argument #1 is a module webffi's core did not make (a C++ "
               "ModuleObj); it takes modules webffi loaded");
  TVMFFIObjectHandle out = NULL;
  CHECK(TVMFFIEnvModLookupFromImports(&foreign, "f", &out) == -1);
  CHECK_RAISED("ValueError", "TVMFFIEnvModLookupFromImports: invalid arguments");
  CHECK(foreign.combined_ref_count == 1);
  TVMFFIObjectDecRef(lib);
}

/* Context symbols in registration order, a name registered again listed
 * again (as upstream's Module::VisitContextSymbols); a non-zero return stops. */
typedef struct {
  char seen[256];
  int stop_after;
  int calls;
} context_walk;

static int visit_context(const char* name, void* symbol, void* ctx) {
  context_walk* w = (context_walk*)ctx;
  if (strncmp(name, "__webffi_visit_", 15) != 0) return 0;
  size_t len = strlen(w->seen);
  snprintf(w->seen + len, sizeof(w->seen) - len, "%s=%d ", name + 15, *(int*)symbol);
  return ++w->calls == w->stop_after ? 7 : 0;
}

void module_context_symbols_are_visited_in_order(void) {
  static int one = 1, two = 2;
  CHECK(TVMFFIEnvModRegisterContextSymbol("__webffi_visit_b", &two) == 0);
  CHECK(TVMFFIEnvModRegisterContextSymbol("__webffi_visit_a", &one) == 0);
  CHECK(TVMFFIEnvModRegisterContextSymbol("__webffi_visit_b", &two) == 0);
  context_walk all = {{0}, 0, 0};
  CHECK_EQ_INT(WebFFIEnvVisitContextSymbols(visit_context, &all), 0);
  CHECK_EQ_STR(all.seen, "b=2 a=1 b=2 ");
  context_walk first = {{0}, 1, 0};
  CHECK_EQ_INT(WebFFIEnvVisitContextSymbols(visit_context, &first), 7);
  CHECK_EQ_STR(first.seen, "b=2 ");
  CHECK(WebFFIEnvVisitContextSymbols(NULL, NULL) == -1);
  CHECK_RAISED("ValueError", "WebFFIEnvVisitContextSymbols: visit is NULL");
}
