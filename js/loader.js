// load(): compile and instantiate webffi.wasm anywhere (Node ESM/CJS,
// browser module or classic script, Workers, worker_threads), check its ABI
// metadata and return the runtime.
import { createWasi } from './wasi.js';
import { createHostImports } from './host_imports.js';
import { createRuntime } from './runtime.js';
import { defaultWasmUrl } from './locate.js';
import { RuntimeError, FFITypeError } from './errors.js';
import { optionsOf, describe } from './runtime/checks.js';
import { createTensorSupport } from './tensor.js';
import { registerInstance, readDebugInfo } from './symbols.js';
import { createBackendRegistry } from './backends/registry.js';
import { discoverBackends, autoloadEnabled } from './backends/discover.js';

/** The ABI metadata versions and layout facts this JS understands. */
const SUPPORTED = { metadata_version: 1, tvm_ffi_major: 0, tvm_ffi_minor: 1, pointer_size: 4, any_size: 16 };
/** The Any layout the hot paths index as 32-bit words (type, small length, payload). */
const ANY_FIELDS = { 'TVMFFIAny.type_index': 0, 'TVMFFIAny.small_str_len': 4, 'TVMFFIAny.v_int64': 8 };

const isNodeFileUrl = (url) => url.protocol === 'file:';

async function fetchModule(url, logger) {
  // Node's file reading through process.getBuiltinModule, not an import: the
  // module graph names nothing from Node, so bundlers build it for browsers.
  const readFile = isNodeFileUrl(url) && globalThis.process?.getBuiltinModule?.('node:fs/promises')?.readFile;
  if (readFile) return WebAssembly.compile(await readFile(url));
  const response = await fetch(url);
  if (!response.ok) throw new RuntimeError(`webffi: cannot fetch ${url}: HTTP ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  if (typeof WebAssembly.compileStreaming === 'function' && type.startsWith('application/wasm')) {
    try {
      return await WebAssembly.compileStreaming(response.clone());
    } catch (e) {
      logger.warn?.(`webffi: streaming compile of ${url} failed (${e.message}); compiling from bytes`);
    }
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

/** Compiles a wasm source: a WebAssembly.Module, bytes, a URL or a URL string. */
async function compile(source, logger) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  if (source instanceof URL || typeof source === 'string') {
    const base = globalThis.location?.href;
    return fetchModule(base ? new URL(source, base) : new URL(source), logger);
  }
  throw new TypeError('webffi.load: `wasm` must be a URL, a string, bytes or a WebAssembly.Module');
}

function readMetadata(exports, heapText) {
  if (typeof exports.WebFFIGetABIMetadata !== 'function') {
    throw new RuntimeError('webffi: incompatible wasm: it does not export WebFFIGetABIMetadata (not a webffi runtime)');
  }
  const ptr = exports.WebFFIGetABIMetadata();
  let meta;
  try {
    meta = JSON.parse(heapText(ptr));
  } catch (e) {
    throw new RuntimeError(`webffi: incompatible wasm: unreadable ABI metadata (${e.message})`);
  }
  const problems = [];
  if (meta.metadata_version !== SUPPORTED.metadata_version) {
    problems.push(`ABI metadata version ${meta.metadata_version}, expected ${SUPPORTED.metadata_version}`);
  }
  const [major, minor] = meta.tvm_ffi_version ?? [];
  if (major !== SUPPORTED.tvm_ffi_major || minor !== SUPPORTED.tvm_ffi_minor) {
    problems.push(`tvm-ffi ABI ${meta.tvm_ffi_version?.join('.')}, expected ${SUPPORTED.tvm_ffi_major}.${SUPPORTED.tvm_ffi_minor}.x`);
  }
  if (meta.pointer_size !== SUPPORTED.pointer_size) problems.push(`pointer size ${meta.pointer_size}`);
  if (meta.sizeof?.TVMFFIAny !== SUPPORTED.any_size) problems.push(`TVMFFIAny size ${meta.sizeof?.TVMFFIAny}`);
  for (const [field, at] of Object.entries(ANY_FIELDS)) {
    if (meta.offsetof?.[field] !== at) problems.push(`${field} at offset ${meta.offsetof?.[field]}, expected ${at}`);
  }
  if (problems.length) throw new RuntimeError(`webffi: incompatible wasm: ${problems.join('; ')}`);
  return meta;
}

/**
 * Loads a webffi runtime.
 * @param {object} [options]
 * @param {URL|string|ArrayBuffer|ArrayBufferView|WebAssembly.Module} [options.wasm]
 *   where the core is; by default webffi.wasm next to this package's JS.
 * @param {{log?: Function, warn?: Function}} [options.logger] receives the
 *   core's stdout/stderr and load warnings (default: console).
 * @param {Array<object|Function>} [options.backends] device backends (or
 *   factories) to register and initialise once the core is up; a failing one
 *   logs a warning.
 * @param {boolean} [options.autoloadBackends] false: no backend discovery
 *   (WEBFFI_BACKEND_AUTOLOAD=0 does the same in Node).
 * @param {string|URL} [options.appDir] Node: the application whose
 *   package.json dependencies are searched for backends (default: the
 *   nearest package.json above the entry module, else cwd).
 * @param {boolean} [options.backtraces] false: errors raised in C carry no
 *   C frames (kind, message and the JS stack stay), which makes them several
 *   times cheaper; runtime.setBacktraces switches it later.
 * @param {true|URL|string|ArrayBuffer|ArrayBufferView} [options.debugInfo]
 *   the runtime's line table (`dist/webffi.lines`; true: the file beside
 *   the wasm), so its own frames show file and line too.
 */
export async function load(options) {
  options = optionsOf(options, 'load');
  const logger = options.logger ?? console;
  if (options.backtraces !== undefined && typeof options.backtraces !== 'boolean') {
    throw new FFITypeError(`load: backtraces must be a boolean, got ${describe(options.backtraces)}`);
  }
  // Read by the host imports at each raise; set by runtime.setBacktraces.
  const backtraces = { on: options.backtraces !== false };
  const wasmSource = options.wasm ?? defaultWasmUrl();
  const module = await compile(wasmSource, logger);
  const debugInfo = options.debugInfo === undefined || options.debugInfo === false ? null
    : await readDebugInfo(options.debugInfo, wasmSource instanceof URL || typeof wasmSource === 'string' ? wasmSource : null, module, logger);
  const wasi = createWasi({
    // Called from inside the core (a WASI import): a logger that throws must
    // not unwind the wasm frames below, so its errors stop here.
    write: (fd, text) => {
      try {
        (fd === 2 ? logger.warn ?? logger.log : logger.log)?.call(logger, text.replace(/\n$/, ''));
      } catch {
        // the output is lost, the instance is not
      }
    },
  });
  let memory;
  // The runtime is made after instantiation; the imports reach it through this.
  const hooks = {};
  const imports = {
    wasi_snapshot_preview1: wasi.imports,
    ...createHostImports(() => memory, {
      callJS: function webffiCallJSHook(h, args, n, result) {
        return hooks.callJS(h, args, n, result);
      },
      releaseJS: (h) => hooks.releaseJS(h),
    }, backtraces),
  };
  const instance = await WebAssembly.instantiate(module, imports);
  registerInstance(instance, module, debugInfo);
  const x = instance.exports;
  memory = x.memory;
  wasi.setMemory(memory);
  x._initialize?.();
  const meta = readMetadata(x, (ptr) => {
    const bytes = new Uint8Array(memory.buffer);
    return new TextDecoder().decode(bytes.subarray(ptr, bytes.indexOf(0, ptr)));
  });
  const { runtime, imports: impl } = createRuntime(instance, meta, { logger, backtraces });
  Object.assign(hooks, impl);
  const backends = createBackendRegistry(runtime);
  const { Tensor, TensorView, tensor, empty } = createTensorSupport(runtime, backends);
  Object.assign(runtime, { backends, Tensor, TensorView, tensor, empty });
  if (autoloadEnabled(options.autoloadBackends)) {
    try {
      await discoverBackends(backends, { appDir: options.appDir, logger });
    } catch (e) {
      logger.warn?.(`webffi: backend discovery failed: ${e?.message ?? e}`);
    }
  }
  // Backends passed explicitly are initialised now; discovered ones on first use.
  for (const [i, b] of (options.backends ?? []).entries()) {
    const name = backends.register(b, `load({ backends })[${i}]`);
    if (name) await backends.init(name).catch(() => {}); // reported by init()
  }
  return runtime;
}
