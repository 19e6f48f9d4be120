/*
 * webffi: modules backed by a table of symbols, for loaders. The dynamic
 * wasm loader creates one per loaded module and adds the module's exports;
 * `ffi.SystemLib` serves symbols linked into the runtime itself.
 */
#ifndef WEBFFI_MODULE_H_
#define WEBFFI_MODULE_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version of the contract between the runtime and modules loaded at run
 * time (the runtime exports a module may import, how a module declares
 * itself). `webffi build --module` writes it into the module's
 * `webffi.module` custom section; the loader refuses any other version.
 * Bumped when a loaded module could no longer run against the runtime.
 */
#define WEBFFI_MODULE_ABI_VERSION 1

/*
 * Creates an empty library module. A non-NULL name enters it into the
 * runtime's table of loaded modules (a second module of the same name is a
 * ValueError; look it up with WebFFIModuleFindLoaded first).
 */
TVM_FFI_DLL int WebFFIModuleCreate(const char* name, TVMFFIObjectHandle* out);

/*
 * Adds a symbol. `__tvm_ffi_NAME` safe calls become the module's functions
 * (`__tvm_ffi__metadata_NAME` / `__tvm_ffi__doc_NAME` describe them); the
 * variable `__tvm_ffi__library_ctx` is set to the module handle; a variable
 * named like a symbol registered with TVMFFIEnvModRegisterContextSymbol is
 * set to that symbol.
 */
TVM_FFI_DLL int WebFFIModuleAddSymbol(TVMFFIObjectHandle module, const char* name, void* symbol);

/*
 * What a loader gives back when the module dies (its last reference
 * released): unload(ctx) is called after its symbols are forgotten, so the
 * loader can free the module's data and reuse its code's slots. Code the
 * module registered elsewhere (global functions from its constructors)
 * must not outlive it, as with dlclose.
 */
TVM_FFI_DLL int WebFFIModuleSetUnload(TVMFFIObjectHandle module, void (*unload)(void* ctx), void* ctx);

/* A loaded module by name: a new reference, or NULL when none is loaded. */
TVM_FFI_DLL TVMFFIObjectHandle WebFFIModuleFindLoaded(const char* name);

/* Removes a module from the loaded table; it is freed once unreferenced.
 * Returns 1 when it was loaded, 0 when not. The global functions
 * `webffi.ModuleFindLoaded(name) -> Optional<ffi.Module>` and
 * `webffi.ModuleUnload(name) -> bool` offer both to hosts. */
TVM_FFI_DLL int WebFFIModuleUnload(const char* name);

/*
 * Calls visit(name, symbol, ctx) for each symbol registered with
 * TVMFFIEnvModRegisterContextSymbol, in the order registered (what
 * upstream's C++ `Module::VisitContextSymbols` reports); a non-zero return
 * stops the walk and is returned. Returns 0 after the last.
 */
TVM_FFI_DLL int WebFFIEnvVisitContextSymbols(int (*visit)(const char* name, void* symbol,
                                                          void* ctx),
                                             void* ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEBFFI_MODULE_H_ */
