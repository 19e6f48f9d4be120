// Loads webffi C modules (wasm side modules built with `webffi build
// --module`) into a running runtime, following the WebAssembly
// tool-conventions dynamic-linking ABI (the `dylink.0` custom section).
// A module shares the runtime's memory, function table and stack pointer,
// imports the runtime's exported C API and libc, and becomes an
// `ffi.Module` in the runtime's table of loaded modules (src/module.c).
//
// It needs nothing but the runtime instance's exports: it also registers
// the global functions `ffi.Module.load_from_bytes.wasm`,
// `ffi.Module.load_from_file.wasm` and `ffi.Module.load_from_file.so`
// (upstream's name for "a shared library": C code written for tvm-ffi
// loads `.so` files), so C code and `ffi.ModuleLoadFromFile` reach it too.
//
// C++ modules (built with wasm exception handling) import the exception
// tag `__cpp_exception`: every module of a runtime gets the same one. Their
// weak C++ runtime functions are imports they also export: such an import
// binds to the module's own export when the runtime has none.
import { registerInstance } from './symbols.js';

/** The custom section `webffi build --module` adds: JSON {name, module_abi_version, tvm_ffi_version}. */
export const MODULE_SECTION = 'webffi.module';

/** A module that cannot be loaded; `kind` is the FFI error kind it is raised as in C. */
export class ModuleLoadError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = 'ModuleLoadError';
    this.kind = kind;
  }
}

const fail = (kind, message) => {
  throw new ModuleLoadError(kind, message);
};

// A one-function wasm module that re-exports a JS function with the
// safe-call signature (i32, i32, i32, i32) -> i32: only wasm functions can
// be stored in a function table.
const SAFE_CALL_STUB = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x09, 0x01, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, // type
  0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00, // import "e" "f"
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export "f"
]);

// The same for (i32) -> (): what C calls when a loaded module dies
// (WebFFIModuleSetUnload), so its memory and table slots are given back.
const UNLOAD_STUB = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x01, 0x7f, 0x00, // type
  0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00, // import "e" "f"
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export "f"
]);

/** Reads an unsigned LEB128 at bytes[at]; returns [value, next offset]. */
function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    if (b === undefined) fail('ValueError', 'truncated dylink.0 section');
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, at];
  }
}

/** The memory and table a side module needs, from its `dylink.0` section. */
function readDylink(module, label) {
  const sections = WebAssembly.Module.customSections(module, 'dylink.0');
  if (sections.length === 0) {
    fail('ValueError', `${label} is not a webffi module: it has no \`dylink.0\` section ` +
      '(build it with `webffi build --module`)');
  }
  const bytes = new Uint8Array(sections[0]);
  const info = { memorySize: 0, memoryAlign: 0, tableSize: 0, tableAlign: 0 };
  let at = 0;
  while (at < bytes.length) {
    const type = bytes[at++];
    let size;
    [size, at] = leb(bytes, at);
    const end = at + size;
    if (type === 1) { // WASM_DYLINK_MEM_INFO
      [info.memorySize, at] = leb(bytes, at);
      [info.memoryAlign, at] = leb(bytes, at);
      [info.tableSize, at] = leb(bytes, at);
      [info.tableAlign, at] = leb(bytes, at);
    } else if (type === 2) { // WASM_DYLINK_NEEDED
      const [count] = leb(bytes, at);
      if (count > 0) {
        fail('ValueError', `${label} needs other shared libraries, which webffi does not load`);
      }
    }
    at = end;
  }
  return info;
}

/** The module's `webffi.module` declaration. */
function readDeclaration(module, label) {
  const sections = WebAssembly.Module.customSections(module, MODULE_SECTION);
  if (sections.length === 0) {
    fail('ValueError', `${label} is not a webffi module: it has no \`${MODULE_SECTION}\` section ` +
      '(build it with `webffi build --module`)');
  }
  let decl;
  try {
    decl = JSON.parse(new TextDecoder().decode(sections[0]));
  } catch {
    decl = null;
  }
  if (typeof decl?.name !== 'string' || decl.name === '' || !Array.isArray(decl.tvm_ffi_version)) {
    fail('ValueError', `${label} has a malformed \`${MODULE_SECTION}\` section`);
  }
  return decl;
}

/** The runtime instance's exports a loader uses. */
const REQUIRED = ['memory', '__indirect_function_table', '__stack_pointer', 'WebFFIHeapAlloc',
  'WebFFIHeapFree', 'WebFFIModuleCreate', 'WebFFIModuleAddSymbol', 'WebFFIModuleFindLoaded',
  'WebFFIModuleUnload', 'WebFFIGetABIMetadata', 'TVMFFIFunctionCreate', 'TVMFFIFunctionSetGlobal',
  'TVMFFIErrorSetRaisedFromCStr', 'TVMFFIErrorMoveFromRaised', 'TVMFFIObjectDecRef'];

/**
 * Host functions the libc a C++ module carries calls (Emscripten's JS
 * library provides them to its own programs); each gets the runtime's exports.
 */
const LIBC_HOST = {
  emscripten_memcpy_big: (x) => (dest, src, num) => {
    new Uint8Array(x.memory.buffer).copyWithin(dest, src, src + num);
  },
  emscripten_get_now: () => () => performance.now(),
  emscripten_get_heap_max: () => () => 2 ** 31,
  exit: () => (code) => fail('RuntimeError', `a module called exit(${code})`),
  // libc's own allocator entry points are the runtime's (one heap)
  __libc_malloc: (x) => x.malloc,
  __libc_calloc: (x) => x.calloc,
  __libc_free: (x) => x.free,
  emscripten_builtin_malloc: (x) => x.malloc,
  emscripten_builtin_free: (x) => x.free,
  // a module has no files: opening one fails (-ENOSYS)
  __syscall_open: () => () => -52,
  __syscall_fcntl64: () => () => -52,
  __syscall_ioctl: () => () => -52,
  strftime_l: () => () => 0,
};

const ERRNO_BADF = 8;
const ERRNO_NOSYS = 52;

/**
 * The WASI calls the libc a C++ module carries makes (iostreams): its
 * stdout/stderr go to the console, line by line; it has no files or
 * environment.
 */
function moduleWasi(x) {
  const pending = { 1: '', 2: '' };
  const text = new TextDecoder();
  return {
    fd_write(fd, iovs, count, written) {
      if (fd !== 1 && fd !== 2) return ERRNO_BADF;
      const view = new DataView(x.memory.buffer);
      let total = 0;
      for (let i = 0; i < count; i++) {
        const ptr = view.getUint32(iovs + 8 * i, true);
        const len = view.getUint32(iovs + 8 * i + 4, true);
        pending[fd] += text.decode(new Uint8Array(x.memory.buffer, ptr, len).slice()); // (a copy: see #cstr)
        total += len;
      }
      const lines = pending[fd].split('\n');
      pending[fd] = lines.pop();
      for (const line of lines) (fd === 1 ? console.log : console.error)(line);
      view.setUint32(written, total, true);
      return 0;
    },
    fd_read: () => ERRNO_BADF,
    fd_close: () => 0,
    fd_seek: () => ERRNO_NOSYS,
    fd_fdstat_get: (fd) => (fd <= 2 ? ERRNO_NOSYS : ERRNO_BADF),
    environ_sizes_get(countPtr, sizePtr) {
      const view = new DataView(x.memory.buffer);
      view.setUint32(countPtr, 0, true);
      view.setUint32(sizePtr, 0, true);
      return 0;
    },
    environ_get: () => 0,
  };
}

/** The kind of a runtime export as WebAssembly.Module.exports names it, or undefined. */
function kindOf(value) {
  if (typeof value === 'function') return 'function';
  if (value instanceof WebAssembly.Global) return 'global';
  if (value instanceof WebAssembly.Memory) return 'memory';
  if (value instanceof WebAssembly.Table) return 'table';
  return undefined;
}

/** Imports the loader provides itself (the shared memory, table, stack pointer and bases). */
const BUILTIN_ENV = new Set(['memory', '__indirect_function_table', '__stack_pointer',
  '__memory_base', '__table_base']);

/** The WASI functions moduleWasi provides. */
const MODULE_WASI = new Set(['fd_write', 'fd_read', 'fd_close', 'fd_seek', 'fd_fdstat_get',
  'environ_sizes_get', 'environ_get']);

/**
 * How the loader satisfies one import of a module: 'builtin', 'runtime'
 * (the runtime's export), 'self' (the module's own export), 'host'
 * (LIBC_HOST), 'tag', 'wasi', 'got-runtime', 'got-self'; null when
 * nothing does. runtimeKind(name) is the kind of the runtime's export NAME.
 */
function resolveImport(imp, runtimeKind, ownExports) {
  if (imp.module === 'env') {
    if (BUILTIN_ENV.has(imp.name)) return 'builtin';
    if (imp.kind === 'function' && runtimeKind(imp.name) === 'function') return 'runtime';
    if (imp.kind === 'function' && ownExports.get(imp.name) === 'function') return 'self';
    if (imp.kind === 'function' && imp.name in LIBC_HOST) return 'host';
    if (imp.kind === 'tag' && imp.name === '__cpp_exception') return 'tag';
    return null;
  }
  if (imp.module === 'GOT.mem' || imp.module === 'GOT.func') {
    const kind = imp.module === 'GOT.func' ? 'function' : 'global';
    if (runtimeKind(imp.name) === kind) return 'got-runtime';
    if (ownExports.get(imp.name) === kind) return 'got-self';
    return null;
  }
  if (imp.module === 'wasi_snapshot_preview1' && imp.kind === 'function' &&
      MODULE_WASI.has(imp.name)) {
    return 'wasi';
  }
  return null;
}

/**
 * The imports of a compiled module that a runtime with these exports
 * cannot satisfy (`webffi build --module` checks them at build time): names
 * from `env` and the GOT bare, others as `module.name`.
 * @param {WebAssembly.Module} module
 * @param {WebAssembly.Module} runtime the runtime's compiled wasm
 * @returns {string[]}
 */
export function unresolvedImports(module, runtime) {
  const runtimeKinds = new Map(WebAssembly.Module.exports(runtime).map((e) => [e.name, e.kind]));
  const ownExports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
  return WebAssembly.Module.imports(module)
    .filter((imp) => resolveImport(imp, (n) => runtimeKinds.get(n), ownExports) === null)
    .map((imp) => (imp.module === 'env' || imp.module.startsWith('GOT.') ? imp.name :
      `${imp.module}.${imp.name}`));
}

const loaders = new WeakMap();

/**
 * The module loader of a runtime instance (one per instance; the first call
 * registers `ffi.Module.load_from_bytes.wasm` and
 * `ffi.Module.load_from_file.wasm`). Call it after `_initialize`.
 * @param {WebAssembly.Exports} exports the runtime instance's exports
 * @param {{ readFileSync?: (path: string | URL) => Uint8Array }} [options]
 *   how files are read (paths given to load() and to
 *   `ffi.Module.load_from_file.wasm`); Node's fs by default, none in browsers.
 */
export function moduleLoader(exports, options = {}) {
  let loader = loaders.get(exports);
  if (loader === undefined) {
    loader = new ModuleLoader(exports, options);
    loaders.set(exports, loader);
  }
  return loader;
}

/**
 * Loads a module into the runtime: `source` is a URL or path (string or
 * URL), wasm bytes, or a WebAssembly.Module. Resolves to the module's
 * handle (a new `ffi.Module` reference the caller releases). A module whose
 * name is already loaded is returned, not instantiated again, when it is the
 * same module (the same bytes, or the same compiled WebAssembly.Module, whose
 * bytes are not at hand); a different one under that name is refused
 * (a ValueError) unless `options.replace` is true, which unloads the old one
 * from the table of loaded modules (it lives on while referenced) first.
 * @param {{ replace?: boolean, readFileSync?: Function }} [options]
 */
export function loadModule(exports, source, options) {
  return moduleLoader(exports, options).load(source, options);
}

/** Whether two byte arrays hold the same bytes. */
function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

class ModuleLoader {
  #x;
  #table;
  #meta;
  #slots = new Map(); // wasm function -> its table index
  #scanned = 0; // slots of the runtime's own table already entered into #slots
  #runtimeSlots = 0; // the runtime's own table (never given back)
  #loaded = new Map(); // module name -> { module, bytes (null when not known) } it was loaded from
  // Giving back what a module took when it dies (C calls #unloadStub):
  #free = []; // free table ranges [start, length], by start (slots of modules that died)
  #alive = new Map(); // token -> { name, entry, raw, start, size, fns } of each loaded instance
  #nextToken = 1;
  #unloadStub = 0; // its table index (0: not made; the runtime cannot tell us)
  #sources = new Map(); // path or URL -> module name, for load_from_file where files cannot be read
  #readFileSync;
  #threaded = false; // the threaded core: each load is published for its workers (replayLoads)
  #tag; // WebAssembly.Tag of C++ exceptions, made on first use
  #utf8 = new TextEncoder();
  #text = new TextDecoder();

  constructor(exports, options) {
    const missing = REQUIRED.filter((name) => !(name in exports));
    if (missing.length > 0) {
      fail('RuntimeError', 'this runtime cannot load modules: it does not export ' +
        `${missing.join(', ')} (build it with the dynamic-linking flags of CMakeLists.txt)`);
    }
    this.#x = exports;
    this.#table = exports.__indirect_function_table;
    this.#runtimeSlots = this.#table.length;
    this.#meta = JSON.parse(this.#cstr(exports.WebFFIGetABIMetadata()));
    this.#threaded = typeof exports.WebFFIParallelPublishLoads === 'function' &&
      typeof SharedArrayBuffer !== 'undefined' && exports.memory.buffer instanceof SharedArrayBuffer;
    this.#readFileSync = options.readFileSync ??
      globalThis.process?.getBuiltinModule?.('node:fs')?.readFileSync;
    this.#registerGlobal('ffi.Module.load_from_bytes.wasm', (args) =>
      this.loadSync(this.#argBytes(args)));
    // (path) or upstream's (path, format); the format is the file's kind,
    // which the module's own sections decide here
    const fromFile = (args) => this.#loadFile(this.#text.decode(this.#argBytes(args)));
    this.#registerGlobal('ffi.Module.load_from_file.wasm', fromFile, 2);
    this.#registerGlobal('ffi.Module.load_from_file.so', fromFile, 2);
  }

  /** See loadModule. */
  async load(source, options = {}) {
    if (source instanceof WebAssembly.Module || ArrayBuffer.isView(source) ||
        source instanceof ArrayBuffer) {
      return this.loadSync(source, undefined, options);
    }
    // read every time: the file may have been rebuilt since
    const where = String(source);
    const bytes = await fetchBytes(where, this.#readFileSync);
    const module = await WebAssembly.compile(bytes).catch((e) => fail('ValueError',
      `${where} is not a wasm module: ${e.message}`));
    return this.#loadCompiled(module, bytes, where, options);
  }

  /**
   * Loads bytes or a compiled WebAssembly.Module synchronously; see
   * loadModule. `path` labels it in errors.
   */
  loadSync(source, path, options = {}) {
    const label = path ?? 'the module';
    if (source instanceof WebAssembly.Module) return this.#loadCompiled(source, null, path, options);
    let bytes;
    try {
      bytes = source instanceof ArrayBuffer ? new Uint8Array(source)
        : new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    } catch (e) {
      fail('TypeError', `${label} must be wasm bytes or a WebAssembly.Module: ${e.message}`);
    }
    let module;
    try {
      module = new WebAssembly.Module(bytes);
    } catch (e) {
      fail('ValueError', `${label} is not a wasm module: ${e.message}`);
    }
    return this.#loadCompiled(module, bytes, path, options);
  }

  /** Loads a compiled module (from `bytes` when known, else null). */
  #loadCompiled(module, bytes, path, options) {
    const label = path ?? 'the module';
    const dylink = readDylink(module, label);
    const decl = readDeclaration(module, label);
    this.#checkCompatible(decl, label);
    const name = decl.name;
    let handle = this.#withCString(name, (p) => this.#x.WebFFIModuleFindLoaded(p));
    if (handle !== 0) {
      if (this.#isLoaded(name, module, bytes)) {
        if (path !== undefined) this.#sources.set(path, name);
        return handle;
      }
      this.#x.TVMFFIObjectDecRef(handle);
      if (options?.replace !== true) {
        fail('ValueError', `Cannot load ${label}: a different module named \`${name}\` is ` +
          'already loaded (unload it first, or load with { replace: true })' +
          (bytes === null ? '; a compiled WebAssembly.Module counts as the same only when it ' +
            'is the one loaded: pass its bytes to compare them' : ''));
      }
      this.#withCString(name, (p) => this.#x.WebFFIModuleUnload(p));
      this.#loaded.delete(name);
    }
    // copied: the caller may reuse its buffer
    const copy = bytes === null ? null : bytes.slice();
    const entry = { module, bytes: copy };
    handle = this.#instantiate(module, dylink, name, entry);
    this.#loaded.set(name, entry);
    if (path !== undefined) this.#sources.set(path, name);
    return handle;
  }

  /** Whether the loaded module NAME is this one: the same bytes, or the same compiled module. */
  #isLoaded(name, module, bytes) {
    const known = this.#loaded.get(name);
    if (known === undefined) return false; // put in the table by something else
    if (known.module === module) return true;
    // a compiled module's bytes are not at hand: it is the same only as itself
    return known.bytes !== null && bytes !== null && sameBytes(known.bytes, bytes);
  }

  #checkCompatible(decl, label) {
    const [major, minor] = this.#meta.tvm_ffi_version;
    const [modMajor, modMinor] = decl.tvm_ffi_version;
    if (decl.module_abi_version !== this.#meta.module_abi_version || modMajor !== major ||
        modMinor !== minor) {
      fail('ValueError', `${label} (\`${decl.name}\`) was built for an incompatible ABI: ` +
        `module ABI ${decl.module_abi_version}, tvm-ffi ${decl.tvm_ffi_version.join('.')}; ` +
        `this runtime has module ABI ${this.#meta.module_abi_version}, tvm-ffi ` +
        `${this.#meta.tvm_ffi_version.join('.')}`);
    }
    // A module links against one kind of memory: shared (the threaded core) or not.
    const threadedCore = typeof SharedArrayBuffer !== 'undefined' && this.#x.memory.buffer instanceof SharedArrayBuffer;
    if (decl.threads === true && !threadedCore) {
      fail('ValueError', `${label} (\`${decl.name}\`) was built with \`webffi build --module --threads\` for the ` +
        'threaded runtime, and this runtime is single-threaded: load the runtime with load({ threads }), or ' +
        'rebuild the module without --threads');
    }
    if (decl.threads !== true && threadedCore) {
      fail('ValueError', `${label} (\`${decl.name}\`) was built for the single-threaded runtime, and this ` +
        'runtime is threaded (load({ threads })): rebuild the module with `webffi build --module --threads`, ' +
        'or load the runtime without threads');
    }
  }

  #instantiate(module, dylink, name, entry) {
    const x = this.#x;
    const ownExports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
    // Resolve every import before anything is allocated: a module that
    // cannot link leaves the runtime as it was.
    const env = {
      memory: x.memory,
      __indirect_function_table: this.#table,
      __stack_pointer: x.__stack_pointer,
    };
    const got = { 'GOT.mem': {}, 'GOT.func': {} };
    let wasi = null; // made when the module's libc needs it
    const fromRuntime = []; // [GOT global, runtime function] to enter into the table
    const fromModule = []; // [GOT global, is a function, export name]: filled after instantiation
    const gotEntries = []; // [GOT module, name, 'runtime' | 'self', global]: what workers replay
    const selfBound = new Map(); // import name -> the module's own function, after instantiation
    const missing = [];
    for (const imp of WebAssembly.Module.imports(module)) {
      const how = resolveImport(imp, (n) => kindOf(x[n]), ownExports);
      if (how === null) {
        missing.push(imp.module === 'env' || imp.module in got ? imp.name : `${imp.module}.${imp.name}`);
      } else if (how === 'runtime') {
        env[imp.name] = x[imp.name];
      } else if (how === 'self') {
        const symbol = imp.name;
        // (named so backtraces see through it: C calling C, via JS)
        env[symbol] = function webffiSelfImport(...args) {
          return selfBound.get(symbol)(...args);
        };
      } else if (how === 'host') {
        env[imp.name] = LIBC_HOST[imp.name](x);
      } else if (how === 'tag') {
        env[imp.name] = this.#cppExceptionTag(name);
      } else if (how === 'wasi') {
        wasi ??= moduleWasi(x);
      } else if (how !== 'builtin') { // a GOT entry
        const global = new WebAssembly.Global({ value: 'i32', mutable: true }, 0);
        got[imp.module][imp.name] = global;
        gotEntries.push([imp.module, imp.name, how === 'got-self' ? 'self' : 'runtime', global]);
        const func = imp.module === 'GOT.func';
        if (how === 'got-self') fromModule.push([global, func, imp.name]);
        else if (func) fromRuntime.push([global, x[imp.name]]);
        else global.value = x[imp.name].value;
      }
    }
    if (missing.length > 0) {
      fail('RuntimeError', `Cannot load module \`${name}\`: it imports ${missing.map((m) =>
        `\`${m}\``).join(', ')}, which the runtime does not export`);
    }

    for (const [global, fn] of fromRuntime) global.value = this.#tableIndex(fn);

    const align = 2 ** dylink.memoryAlign;
    const raw = dylink.memorySize > 0 ? x.WebFFIHeapAlloc(dylink.memorySize + align - 1) : 0;
    if (dylink.memorySize > 0 && raw === 0) {
      fail('MemoryError', `Cannot load module \`${name}\`: out of memory for its data`);
    }
    const memoryBase = Math.ceil(raw / align) * align;
    new Uint8Array(x.memory.buffer, memoryBase, dylink.memorySize).fill(0);
    // slots of modules that died are taken first: load/unload churn leaves the table as it was
    const tableBase = this.#takeSlots(dylink.tableSize, 2 ** dylink.tableAlign);
    const rec = { name, entry, raw, start: tableBase, size: dylink.tableSize, fns: [], tls: 0, desc: 0, slots: [] };
    const giveBack = () => {
      this.#forget(rec);
      if (raw !== 0) x.WebFFIHeapFree(raw);
    };
    env.__memory_base = new WebAssembly.Global({ value: 'i32', mutable: false }, memoryBase);
    env.__table_base = new WebAssembly.Global({ value: 'i32', mutable: false }, tableBase);

    // A trap in the module's start function or constructors unwinds
    // without restoring the shared stack pointer: restore it here.
    const stackPointer = x.__stack_pointer.value;
    let instance;
    try {
      instance = new WebAssembly.Instance(module, {
        env, ...got, ...(wasi ? { wasi_snapshot_preview1: wasi } : {}),
      });
    } catch (e) {
      x.__stack_pointer.value = stackPointer;
      giveBack();
      fail('RuntimeError', `Cannot load module \`${name}\`: ${e.message}`);
    }
    registerInstance(instance, module); // its line table is read when a backtrace is
    const own = instance.exports;
    // the module's own functions its element segment put in its slots: the
    // same &f on both sides (given back with the module, unlike the runtime's)
    for (let i = tableBase; i < tableBase + dylink.tableSize; i++) {
      const f = this.#table.get(i);
      if (f !== null && !this.#slots.has(f)) {
        this.#slots.set(f, i);
        rec.fns.push(f);
      }
    }
    for (const symbol of Object.keys(env)) {
      if (ownExports.get(symbol) === 'function' && !(symbol in x)) selfBound.set(symbol, own[symbol]);
    }
    // The start function applied data relocations before the GOT held the
    // module's own symbols; __wasm_call_ctors applies them again, then runs
    // the constructors.
    for (const [global, func, symbol] of fromModule) {
      global.value = func ? this.#tableIndex(own[symbol], rec) : memoryBase + own[symbol].value;
    }
    try {
      // a threaded module's thread-local data, for the loading thread (its
      // code runs there only: TVMBackendParallelLaunch runs it serially)
      rec.tls = own.emscripten_tls_init?.() ?? 0;
      (own.__wasm_call_ctors ?? own.__wasm_apply_data_relocs)?.();
    } catch (e) {
      x.__stack_pointer.value = stackPointer;
      fail('RuntimeError', `Cannot load module \`${name}\`: its initialisation failed: ${e.message}`);
    }
    const handle = this.#register(name, own, memoryBase, rec);
    if (this.#threaded) {
      try {
        this.#describe(rec, entry.bytes, {
          memoryBase, tableBase, tableSize: dylink.tableSize, tableLength: this.#table.length,
          got: gotEntries.map(([mod, symbol, from, global]) => [mod, symbol, from, global.value]), slots: rec.slots,
        });
      } catch (e) {
        // a module the workers cannot have is not loaded at all
        this.#withCString(name, (p) => x.WebFFIModuleUnload(p));
        x.TVMFFIObjectDecRef(handle);
        throw e;
      }
    }
    return handle;
  }

  /**
   * The threaded core: what a worker needs to instantiate this module as
   * the loading thread did (its bytes, bases, GOT values and the table
   * slots the loader filled), in the heap, published with every other
   * loaded module's (WebFFIParallelPublishLoads); a worker replays it
   * before its next task (replayLoads). A module whose bytes are not at
   * hand (a compiled WebAssembly.Module) cannot be: while one is loaded,
   * every module's launches run serially on the calling thread.
   */
  #describe(rec, bytes, facts) {
    const x = this.#x;
    if (bytes === null) {
      rec.serial = true;
      this.#publish();
      return;
    }
    const json = this.#utf8.encode(JSON.stringify(facts));
    const desc = x.WebFFIHeapAlloc(8 + json.length + bytes.length);
    if (desc === 0) fail('MemoryError', `Cannot load module \`${rec.name}\`: out of memory for its description`);
    new Uint32Array(x.memory.buffer, desc, 2).set([json.length, bytes.length]);
    const heap = new Uint8Array(x.memory.buffer);
    heap.set(json, desc + 8);
    heap.set(bytes, desc + 8 + json.length);
    rec.desc = desc;
    this.#publish();
  }

  /** Publishes the block of loaded modules' descriptions ([count, (id, description)...]) to the workers. */
  #publish() {
    const x = this.#x;
    const live = [...this.#alive].filter(([, rec]) => rec.desc !== 0);
    const serial = [...this.#alive.values()].some((rec) => rec.serial);
    x.WebFFIParallelSetCodeLimit(serial ? this.#runtimeSlots : 0xffffffff);
    const block = x.WebFFIHeapAlloc(4 + 8 * live.length);
    if (block === 0) fail('MemoryError', 'out of memory for the list of loaded modules');
    const words = new Uint32Array(x.memory.buffer, block, 1 + 2 * live.length);
    words[0] = live.length;
    live.forEach(([token, rec], i) => words.set([token, rec.desc], 1 + 2 * i));
    x.WebFFIParallelPublishLoads(block);
  }

  /**
   * The first of n free table slots (aligned): from those modules that died
   * gave back, else the table grows. 0 slots: none taken.
   */
  #takeSlots(n, align) {
    const table = this.#table;
    if (n === 0) return table.length;
    const free = this.#free;
    for (let i = 0; i < free.length; i++) {
      const [start, length] = free[i];
      const at = Math.ceil(start / align) * align;
      if (at + n > start + length) continue;
      const rest = [];
      if (at > start) rest.push([start, at - start]);
      if (start + length > at + n) rest.push([at + n, start + length - at - n]);
      free.splice(i, 1, ...rest);
      return at;
    }
    const padding = (align - (table.length % align)) % align;
    const base = table.grow(n + padding) + padding;
    if (padding > 0) this.#giveSlots(base - padding, padding);
    return base;
  }

  /** Empties slots [start, start + n) (their functions can be collected) and keeps them for reuse. */
  #giveSlots(start, n) {
    for (let i = start; i < start + n; i++) this.#table.set(i, null);
    const free = this.#free;
    let i = 0;
    while (i < free.length && free[i][0] < start) i++;
    free.splice(i, 0, [start, n]);
    // merge with the neighbours
    if (i + 1 < free.length && free[i][0] + free[i][1] === free[i + 1][0]) {
      free[i][1] += free[i + 1][1];
      free.splice(i + 1, 1);
    }
    if (i > 0 && free[i - 1][0] + free[i - 1][1] === free[i][0]) {
      free[i - 1][1] += free[i][1];
      free.splice(i, 1);
    }
  }

  /** Gives back the table slots of a module instance (its memory is the caller's). */
  #forget(rec) {
    for (const f of rec.fns) {
      const i = this.#slots.get(f);
      this.#slots.delete(f);
      if (i !== undefined && !(i >= rec.start && i < rec.start + rec.size)) this.#giveSlots(i, 1);
    }
    rec.fns.length = 0;
    if (rec.size > 0) this.#giveSlots(rec.start, rec.size);
    rec.size = 0;
  }

  /** C's module died (WebFFIModuleSetUnload): its slots, memory and compiled code go. */
  #unloaded(token) {
    const rec = this.#alive.get(token);
    if (rec === undefined) return;
    this.#alive.delete(token);
    this.#forget(rec);
    if (this.#threaded) {
      // workers drop their copies at their next task; the memory goes once no launch runs
      this.#publish();
      for (const p of [rec.desc, rec.raw, rec.tls]) if (p !== 0) this.#x.WebFFIParallelRetire(p);
    } else {
      if (rec.raw !== 0) this.#x.WebFFIHeapFree(rec.raw);
      if (rec.tls !== 0) this.#x.WebFFIHeapFree(rec.tls);
    }
    if (this.#loaded.get(rec.name) === rec.entry) this.#loaded.delete(rec.name);
  }

  /** The table index of the function C calls when a module dies. */
  #unloadIndex() {
    if (this.#unloadStub === 0) {
      const stub = new WebAssembly.Instance(new WebAssembly.Module(UNLOAD_STUB), {
        e: { f: (token) => this.#unloaded(token) },
      });
      this.#unloadStub = this.#tableIndex(stub.exports.f);
    }
    return this.#unloadStub;
  }

  /** The C++ exception tag every module of this runtime shares. */
  #cppExceptionTag(name) {
    if (this.#tag === undefined) {
      if (typeof WebAssembly.Tag !== 'function') {
        fail('RuntimeError', `Cannot load module \`${name}\`: it is C++ built with wasm ` +
          'exception handling, which this JavaScript engine does not support');
      }
      this.#tag = new WebAssembly.Tag({ parameters: ['i32'] });
    }
    return this.#tag;
  }

  /** Creates the C module and adds the instance's `__tvm_ffi_*` functions and data symbols. */
  #register(name, own, memoryBase, rec) {
    const x = this.#x;
    const out = x.WebFFIHeapAlloc(this.#meta.pointer_size);
    if (out === 0) fail('MemoryError', `Cannot load module \`${name}\`: out of memory`);
    try {
      if (this.#withCString(name, (p) => x.WebFFIModuleCreate(p, out)) !== 0) this.#throwRaised();
      const handle = new DataView(x.memory.buffer).getUint32(out, true);
      if (typeof x.WebFFIModuleSetUnload === 'function') {
        // from here the module's death gives back what it took
        const token = this.#nextToken++;
        this.#alive.set(token, rec);
        x.WebFFIModuleSetUnload(handle, this.#unloadIndex(), token);
      }
      for (const [symbol, value] of Object.entries(own)) {
        let address;
        if (typeof value === 'function' && symbol.startsWith('__tvm_ffi_')) {
          address = this.#tableIndex(value, rec);
          rec.slots.push([address, symbol]);
        } else if (value instanceof WebAssembly.Global) {
          address = memoryBase + value.value;
        } else {
          continue;
        }
        const rc = this.#withCString(symbol, (p) => x.WebFFIModuleAddSymbol(handle, p, address));
        if (rc !== 0) {
          this.#withCString(name, (p) => x.WebFFIModuleUnload(p));
          x.TVMFFIObjectDecRef(handle);
          this.#throwRaised();
        }
      }
      return handle;
    } finally {
      x.WebFFIHeapFree(out);
    }
  }

  #loadFile(path) {
    if (typeof this.#readFileSync !== 'function') {
      // a browser: the module JavaScript loaded from that URL, if any
      const name = this.#sources.get(path);
      const known = name === undefined ? 0
        : this.#withCString(name, (p) => this.#x.WebFFIModuleFindLoaded(p));
      if (known !== 0) return known;
      fail('RuntimeError', `Cannot load module \`${path}\`: this host cannot read files ` +
        'synchronously; load it from JavaScript first (loadModule(url))');
    }
    let bytes;
    try {
      bytes = this.#readFileSync(path);
    } catch (e) {
      fail('RuntimeError', `Cannot load module \`${path}\`: ${e.message}`);
    }
    return this.loadSync(bytes, path);
  }

  /**
   * The table index of a wasm function, adding it to the table when absent
   * (a slot `owner`, a module instance, gives back when it dies; without
   * one it stays for good: the runtime's functions, the loader's own).
   */
  #tableIndex(fn, owner) {
    const table = this.#table;
    for (; this.#scanned < this.#runtimeSlots; this.#scanned++) {
      const f = table.get(this.#scanned);
      if (f !== null && !this.#slots.has(f)) this.#slots.set(f, this.#scanned);
    }
    let index = this.#slots.get(fn);
    if (index === undefined) {
      index = this.#takeSlots(1, 1);
      table.set(index, fn);
      this.#slots.set(fn, index);
      owner?.fns.push(fn);
    }
    return index;
  }

  // ------------------------------------------------------ raw C helpers
  // (decoded from a copy: browsers refuse TextDecoder a view of the
  // threaded core's shared memory)
  #cstr(ptr) {
    const bytes = new Uint8Array(this.#x.memory.buffer);
    return this.#text.decode(bytes.slice(ptr, bytes.indexOf(0, ptr)));
  }

  #withCString(s, fn) {
    const bytes = this.#utf8.encode(s);
    const ptr = this.#x.WebFFIHeapAlloc(bytes.length + 1);
    if (ptr === 0) fail('MemoryError', 'out of memory');
    try {
      const mem = new Uint8Array(this.#x.memory.buffer);
      mem.set(bytes, ptr);
      mem[ptr + bytes.length] = 0;
      return fn(ptr);
    } finally {
      this.#x.WebFFIHeapFree(ptr);
    }
  }

  /** Moves the raised C error into a ModuleLoadError and throws it. */
  #throwRaised() {
    const x = this.#x;
    const { offsetof: off, sizeof } = this.#meta;
    const out = x.WebFFIHeapAlloc(this.#meta.pointer_size);
    if (out === 0) fail('MemoryError', 'out of memory');
    x.TVMFFIErrorMoveFromRaised(out);
    const view = new DataView(x.memory.buffer);
    const err = view.getUint32(out, true);
    x.WebFFIHeapFree(out);
    if (err === 0) fail('RuntimeError', 'module loading failed without an error');
    const field = (name) => {
      const at = err + sizeof.TVMFFIObject + off[`TVMFFIErrorCell.${name}`];
      const data = view.getUint32(at + off['TVMFFIByteArray.data'], true);
      const size = view.getUint32(at + off['TVMFFIByteArray.size'], true);
      return this.#text.decode(new Uint8Array(x.memory.buffer, data, size).slice());
    };
    const kind = field('kind');
    const message = field('message');
    x.TVMFFIObjectDecRef(err);
    fail(kind, message);
  }

  /** A copy of the bytes of a string or bytes argument args[0]. */
  #argBytes(args) {
    const { offsetof: off, sizeof, type_index: T } = this.#meta;
    const view = new DataView(this.#x.memory.buffer);
    const tindex = view.getInt32(args + off['TVMFFIAny.type_index'], true);
    const payload = args + off['TVMFFIAny.v_int64'];
    const bytes = (data, size) => new Uint8Array(this.#x.memory.buffer, data, size).slice();
    const byteArray = (p) => bytes(view.getUint32(p + off['TVMFFIByteArray.data'], true),
      view.getUint32(p + off['TVMFFIByteArray.size'], true));
    switch (tindex) {
      case T['ffi.SmallStr']:
      case T['ffi.SmallBytes']:
        return bytes(payload, view.getUint32(args + off['TVMFFIAny.small_str_len'], true));
      case T['ffi.String']:
      case T['ffi.Bytes']:
        return byteArray(view.getUint32(payload, true) + sizeof.TVMFFIObject);
      case T['TVMFFIByteArray*']:
        return byteArray(view.getUint32(payload, true));
      case T['const char*']: {
        const p = view.getUint32(payload, true);
        return this.#utf8.encode(this.#cstr(p));
      }
      default:
        return fail('TypeError', 'expects one argument, a str or bytes');
    }
  }

  /**
   * Registers fn(argsPtr) as global function NAME; fn returns a module
   * handle (a new reference, moved into the result) or throws.
   */
  #registerGlobal(name, fn, maxArgs = 1) {
    const x = this.#x;
    const T = this.#meta.type_index;
    const off = this.#meta.offsetof;
    const safeCall = (self, args, numArgs, result) => {
      try {
        if (numArgs < 1 || numArgs > maxArgs) {
          fail('TypeError', `\`${name}\` expects ${maxArgs === 1 ? '1 argument' :
            `1 to ${maxArgs} arguments`} but got ${numArgs}`);
        }
        const handle = fn(args);
        const view = new DataView(x.memory.buffer);
        view.setInt32(result + off['TVMFFIAny.type_index'], T['ffi.Module'], true);
        view.setUint32(result + off['TVMFFIAny.small_str_len'], 0, true);
        view.setBigUint64(result + off['TVMFFIAny.v_int64'], BigInt(handle), true);
        return 0;
      } catch (e) {
        const kind = e instanceof ModuleLoadError ? e.kind : 'RuntimeError';
        this.#withCString(kind, (k) => this.#withCString(String(e?.message ?? e), (m) =>
          x.TVMFFIErrorSetRaisedFromCStr(k, m)));
        return -1;
      }
    };
    const stub = new WebAssembly.Instance(new WebAssembly.Module(SAFE_CALL_STUB), {
      e: { f: safeCall },
    });
    const out = x.WebFFIHeapAlloc(this.#meta.pointer_size);
    if (out === 0) fail('MemoryError', 'out of memory');
    try {
      if (x.TVMFFIFunctionCreate(0, this.#tableIndex(stub.exports.f), 0, out) !== 0) {
        this.#throwRaised();
      }
      const f = new DataView(x.memory.buffer).getUint32(out, true);
      const rc = this.#withCString(name, (p) => {
        const ba = x.WebFFIHeapAlloc(this.#meta.sizeof.TVMFFIByteArray);
        if (ba === 0) fail('MemoryError', 'out of memory');
        const view = new DataView(x.memory.buffer);
        view.setUint32(ba + off['TVMFFIByteArray.data'], p, true);
        view.setUint32(ba + off['TVMFFIByteArray.size'], this.#utf8.encode(name).length, true);
        const status = x.TVMFFIFunctionSetGlobal(ba, f, 1);
        x.WebFFIHeapFree(ba);
        return status;
      });
      x.TVMFFIObjectDecRef(f);
      if (rc !== 0) this.#throwRaised();
    } finally {
      x.WebFFIHeapFree(out);
    }
  }
}

/** The bytes at a URL, or a file path or file: URL read with readFileSync (Node). */
async function fetchBytes(where, readFileSync) {
  if (readFileSync !== undefined && !/^(https?|data|blob):/.test(where)) {
    try {
      return readFileSync(where.startsWith('file:') ? new URL(where) : where);
    } catch (e) {
      fail('RuntimeError', `Cannot load module \`${where}\`: ${e.message}`);
    }
  }
  const response = await fetch(where).catch((e) => fail('RuntimeError',
    `Cannot load module \`${where}\`: ${e.message}`));
  if (!response.ok) {
    fail('RuntimeError', `Cannot load module \`${where}\`: HTTP ${response.status}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * A worker of the threaded core (js/threads/worker.js): its copies of the
 * modules loaded at run time. The returned function takes the block the
 * loading thread published (ModuleLoader's #publish) and brings this
 * thread up to date: copies of unloaded modules go (their thread-local
 * data freed, their table slots emptied), new ones are instantiated from
 * their bytes at the loading thread's memory and table bases with its GOT
 * values, without running constructors (their data is already in the
 * shared memory), and with this thread's own thread-local data. Returns 0,
 * or -1 when a module cannot be instantiated here.
 * @param {WebAssembly.Exports} x this worker's instance of the core
 * @param {WebAssembly.Memory} memory
 * @param {(message: string) => void} report says why a replay failed
 */
export function workerModules(x, memory, report) {
  const table = x.__indirect_function_table;
  const copies = new Map(); // id -> { tls, slots: table indices this copy filled }
  const text = new TextDecoder();
  const runtimeKind = (n) => kindOf(x[n]);
  let tag;
  const drop = (id) => {
    const copy = copies.get(id);
    copies.delete(id);
    for (const i of copy.slots) if (i < table.length) table.set(i, null);
    if (copy.tls !== 0) x.free(copy.tls);
  };
  const instantiate = (desc) => {
    const [jsonLength, byteLength] = new Uint32Array(memory.buffer, desc, 2);
    const heap = new Uint8Array(memory.buffer);
    const facts = JSON.parse(text.decode(heap.slice(desc + 8, desc + 8 + jsonLength)));
    const module = new WebAssembly.Module(heap.slice(desc + 8 + jsonLength, desc + 8 + jsonLength + byteLength));
    if (table.length < facts.tableLength) table.grow(facts.tableLength - table.length);
    const ownExports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
    const env = {
      memory,
      __indirect_function_table: table,
      __stack_pointer: x.__stack_pointer,
      __memory_base: new WebAssembly.Global({ value: 'i32', mutable: false }, facts.memoryBase),
      __table_base: new WebAssembly.Global({ value: 'i32', mutable: false }, facts.tableBase),
    };
    const got = { 'GOT.mem': {}, 'GOT.func': {} };
    for (const [mod, symbol, , value] of facts.got) {
      got[mod][symbol] = new WebAssembly.Global({ value: 'i32', mutable: true }, value);
    }
    let wasi = null;
    const selfBound = new Map();
    for (const imp of WebAssembly.Module.imports(module)) {
      const how = resolveImport(imp, runtimeKind, ownExports);
      if (how === 'runtime') env[imp.name] = x[imp.name];
      else if (how === 'self') {
        const symbol = imp.name;
        env[symbol] = function webffiSelfImport(...args) {
          return selfBound.get(symbol)(...args);
        };
      } else if (how === 'host') env[imp.name] = LIBC_HOST[imp.name](x);
      else if (how === 'tag') env[imp.name] = (tag ??= new WebAssembly.Tag({ parameters: ['i32'] }));
      else if (how === 'wasi') wasi ??= moduleWasi(x);
      else if (how === null) throw new Error(`it imports ${imp.module}.${imp.name}, which this thread's core lacks`);
    }
    const own = new WebAssembly.Instance(module, { env, ...got, ...(wasi ? { wasi_snapshot_preview1: wasi } : {}) }).exports;
    for (const symbol of Object.keys(env)) {
      if (ownExports.get(symbol) === 'function' && !(symbol in x)) selfBound.set(symbol, own[symbol]);
    }
    // the slots the loading thread filled beyond the module's own element segment
    const slots = [];
    for (let i = facts.tableBase; i < facts.tableBase + facts.tableSize; i++) slots.push(i);
    for (const [mod, symbol, from, value] of facts.got) {
      if (mod !== 'GOT.func') continue;
      table.set(value, from === 'self' ? own[symbol] : x[symbol]);
      if (from === 'self') slots.push(value);
    }
    for (const [index, symbol] of facts.slots) {
      table.set(index, own[symbol]);
      slots.push(index);
    }
    return { tls: own.emscripten_tls_init?.() ?? 0, slots };
  };
  return function replayLoads(block) {
    try {
      const count = block === 0 ? 0 : new Uint32Array(memory.buffer, block, 1)[0];
      const entries = count === 0 ? [] : Array.from({ length: count }, (_, i) =>
        Array.from(new Uint32Array(memory.buffer, block + 4 + 8 * i, 2)));
      const live = new Set(entries.map(([id]) => id));
      for (const id of [...copies.keys()]) if (!live.has(id)) drop(id);
      for (const [id, desc] of entries) if (!copies.has(id)) copies.set(id, instantiate(desc));
      return 0;
    } catch (e) {
      report(`webffi: a module loaded at run time cannot be instantiated on a worker thread: ${e?.message ?? e}`);
      return -1;
    }
  };
}
