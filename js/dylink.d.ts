// Types for js/dylink.js: loading webffi C modules into a running runtime.

/** The custom section `webffi build --module` adds to a module. */
export declare const MODULE_SECTION: 'webffi.module';

/** A module that cannot be loaded; `kind` is the FFI error kind C sees. */
export declare class ModuleLoadError extends Error {
  constructor(kind: string, message: string);
  readonly kind: 'ValueError' | 'RuntimeError' | 'MemoryError' | 'TypeError' | string;
}

/** A module source: a URL or (in Node) a path, wasm bytes, or a compiled module. */
export type ModuleSource = string | URL | ArrayBuffer | ArrayBufferView | WebAssembly.Module;

export interface ModuleLoaderOptions {
  /** How paths given to load() and `ffi.Module.load_from_file.wasm` are read; Node's fs by default. */
  readFileSync?: (path: string | URL) => Uint8Array;
}

/** An `ffi.Module` handle (a TVMFFIObjectHandle, a new reference the caller releases). */
export type ModuleHandle = number;

export interface ModuleLoader {
  /** Loads a module; a module already loaded under its name is returned instead. */
  load(source: ModuleSource): Promise<ModuleHandle>;
  /** The same for bytes or a compiled module, synchronously; path labels errors and load_from_file. */
  loadSync(source: ArrayBuffer | ArrayBufferView | WebAssembly.Module, path?: string): ModuleHandle;
}

/**
 * The loader of a runtime instance (one per instance; the first call
 * registers `ffi.Module.load_from_bytes.wasm` and `ffi.Module.load_from_file.wasm`).
 */
export declare function moduleLoader(
  exports: WebAssembly.Exports,
  options?: ModuleLoaderOptions,
): ModuleLoader;

/** moduleLoader(exports, options).load(source). */
export declare function loadModule(
  exports: WebAssembly.Exports,
  source: ModuleSource,
  options?: ModuleLoaderOptions,
): Promise<ModuleHandle>;
