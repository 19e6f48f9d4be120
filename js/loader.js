// load(): compile and instantiate a core anywhere (Node ESM/CJS, browser
// module or classic script, Workers, worker_threads) and return the runtime
// over it. The core is webffi.wasm, or a library TVM compiled that carries
// its own tvm-ffi core (an MLC/web-llm model library): js/core/ tells them
// apart and gives the runtime the few operations that differ.
import { createWasi } from './wasi.js';
import { createRuntime } from './runtime.js';
import { coreKindOf, WEBFFI_CORE } from './core/detect.js';
import { webffiCore } from './core/webffi_core.js';
import { importTVMCore } from './core/tvm_module.js';
import { defaultWasmUrl, defaultThreadedWasmUrl } from './locate.js';
import { threadsFor } from './threads/request.js';
import { startWorkers } from './threads/pool.js';
import { RuntimeError, FFITypeError } from './errors.js';
import { optionsOf, describe } from './runtime/checks.js';
import { createTensorSupport } from './tensor.js';
import { registerInstance, readDebugInfo } from './symbols.js';
import { createBackendRegistry } from './backends/registry.js';
import { discoverBackends, autoloadEnabled } from './backends/discover.js';
import { importWebGPU } from './backends/webgpu_module.js';
import { installGPUInterop, checkLibraryNeeds } from './gpu_interop.js';

const isNodeFileUrl = (url) => url.protocol === 'file:';

/**
 * A failed fetch of the wasm. The default URL is next to webffi's JS: a
 * bundler that moved the JS and not the wasm (esbuild, a worker bundled
 * apart) lands here, so that case says how to hand the URL over.
 */
function fetchFailure(url, why, byDefault) {
  const hint = byDefault
    ? ' (the default: dist/webffi.wasm next to webffi\'s js/ folder). Bundled, where the wasm is not next to ' +
      'the JS (esbuild, a worker bundled on its own), import its URL and pass it: ' +
      '`import wasm from \'webffi/webffi.wasm\'` (esbuild: --loader:.wasm=file) and `load({ wasm })`'
    : ' (the `wasm` given to load())';
  return new RuntimeError(`webffi: cannot fetch ${url}: ${why}${hint}`);
}

async function fetchModule(url, logger, byDefault) {
  // Node's file reading through process.getBuiltinModule, not an import: the
  // module graph names nothing from Node, so bundlers build it for browsers.
  const readFile = isNodeFileUrl(url) && globalThis.process?.getBuiltinModule?.('node:fs/promises')?.readFile;
  if (readFile) {
    let bytes;
    try {
      bytes = await readFile(url);
    } catch (e) {
      throw fetchFailure(url, e?.code ?? e?.message ?? String(e), byDefault);
    }
    return WebAssembly.compile(bytes);
  }
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw fetchFailure(url, e?.message ?? String(e), byDefault);
  }
  if (!response.ok) throw fetchFailure(url, `HTTP ${response.status}`, byDefault);
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

/** A URL from a URL or a string: relative to the page, or in Node a path (relative to the working directory). */
function urlOf(source) {
  if (source instanceof URL) return source;
  const base = globalThis.location?.href;
  if (base) return new URL(source, base);
  const toFileUrl = globalThis.process?.getBuiltinModule?.('node:url')?.pathToFileURL;
  if (toFileUrl && !/^[a-z][a-z0-9+.-]*:/i.test(source)) return toFileUrl(source);
  return new URL(source);
}

/** Compiles a wasm source: a WebAssembly.Module, bytes, a Response, a URL or a URL string. */
async function compile(source, logger, byDefault = false) {
  if (source instanceof WebAssembly.Module) return source;
  try {
    if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return await WebAssembly.compile(source);
    if (typeof Response !== 'undefined' && source instanceof Response) {
      if (!source.ok) throw new RuntimeError(`webffi: cannot load ${source.url || 'the response'}: HTTP ${source.status}`);
      return await WebAssembly.compile(await source.arrayBuffer());
    }
    if (source instanceof URL || typeof source === 'string') return await fetchModule(urlOf(source), logger, byDefault);
  } catch (e) {
    if (e instanceof WebAssembly.CompileError) {
      throw new RuntimeError(`webffi: not a valid WebAssembly module (a truncated or corrupt file?): ${e.message}`, { cause: e });
    }
    throw e;
  }
  throw new FFITypeError('webffi.load: `wasm` must be a URL, a string, bytes, a Response or a WebAssembly.Module');
}

/** Where the source is, for messages. */
function sourceName(source) {
  if (source instanceof URL || typeof source === 'string') return String(source);
  if (typeof Response !== 'undefined' && source instanceof Response && source.url) return source.url;
  return 'the wasm given';
}

/**
 * The core's stdout (to logger.log) and stderr (to logger.warn). Called from
 * inside the core (a WASI import): a logger that throws must not unwind the
 * wasm frames below, so its errors stop here.
 */
const logWrite = (logger) => (fd, text) => {
  try {
    (fd === 2 ? logger.warn ?? logger.log : logger.log)?.call(logger, text.replace(/\n$/, ''));
  } catch {
    // the output is lost, the instance is not
  }
};

/** The threaded core's memory in 64 KiB pages, as it was linked (CMakeLists.txt: 16 MiB, at most 1 GiB). */
const SHARED_MEMORY = { initial: 256, maximum: 16384 };

/** Whether a webffi core was linked with threads (it imports Emscripten's thread creation). */
const isThreadedCore = (module) =>
  WebAssembly.Module.imports(module).some((i) => i.module === 'env' && i.name === '__pthread_create_js');

/** A core and a `threads` option that do not go together: say how to make them. */
function checkThreading(kind, module, option, threads, where) {
  if (kind !== WEBFFI_CORE) {
    if (threads > 1) {
      throw new RuntimeError(`webffi: ${where} is a model library, which runs on one thread; load it without \`threads\``);
    }
    return;
  }
  const threaded = isThreadedCore(module);
  if (threaded && threads === 1) {
    throw new RuntimeError(option === undefined
      ? `webffi: ${where} is a threaded core (built with \`webffi build --threads\`): load it with load({ threads: n }) or load({ threads: 'auto' })`
      : `webffi: ${where} is a threaded core, and this page or option gives it no threads; load a single-threaded build instead (\`webffi build\` without --threads)`);
  }
  if (!threaded && threads > 1) {
    throw new RuntimeError(`webffi: ${where} is a single-threaded core: build it with \`webffi build --threads\`, or load the threaded core (leave out \`wasm\`)`);
  }
}

/**
 * Loads a webffi runtime.
 * @param {object} [options]
 * @param {URL|string|ArrayBuffer|ArrayBufferView|Response|WebAssembly.Module} [options.wasm]
 *   where the core is; by default webffi.wasm next to this package's JS. A
 *   library TVM compiled with tvm-ffi (an MLC/web-llm model library) is a
 *   core too: the runtime then drives the tvm-ffi core it carries.
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
 * @param {GPUDevice} [options.gpuDevice] a GPUDevice another library made
 *   (onnxruntime-web, TensorFlow.js): webffi's WebGPU backend uses it
 *   instead of acquiring one, after checking it has the limits and features
 *   webffi's kernels (and a model library's) need; load() rejects naming
 *   what is missing. webffi never destroys it.
 * @param {number|'auto'} [options.threads] threads for parallel C
 *   (TVMBackendParallelLaunch), the caller's included: n loads the threaded
 *   core (dist/webffi-mt.wasm) with n - 1 workers started now, or rejects
 *   where threads cannot exist (a page not cross-origin isolated); 'auto'
 *   takes every core where threads can exist, else warns once and loads
 *   the single-threaded core. Default: 1.
 */
export async function load(options) {
  options = optionsOf(options, 'load');
  const logger = options.logger ?? console;
  if (options.backtraces !== undefined && typeof options.backtraces !== 'boolean') {
    throw new FFITypeError(`load: backtraces must be a boolean, got ${describe(options.backtraces)}`);
  }
  // Read by the host imports at each raise; set by runtime.setBacktraces.
  const backtraces = { on: options.backtraces !== false };
  const threads = threadsFor(options.threads, logger);
  const source = options.wasm ?? (threads > 1 ? defaultThreadedWasmUrl() : defaultWasmUrl());
  const module = await compile(source, logger, options.wasm === undefined);
  const kind = coreKindOf(module, sourceName(source));
  checkThreading(kind, module, options.threads, threads, sourceName(source));
  // a library TVM compiled brings its own core: its glue loads with it
  const tvm = kind === WEBFFI_CORE ? null : await importTVMCore();
  const debugInfo = options.debugInfo === undefined || options.debugInfo === false ? null
    : await readDebugInfo(options.debugInfo, source instanceof URL || typeof source === 'string' ? source : null, module, logger);
  // The runtime is made after instantiation; the imports reach it through this.
  const hooks = {};
  let threading = null;
  if (threads > 1) {
    // The threaded core's memory is made here and shared with every worker.
    const memory = new WebAssembly.Memory({ initial: SHARED_MEMORY.initial, maximum: SHARED_MEMORY.maximum, shared: true });
    const pool = await startWorkers({ module, memory, count: threads - 1, logger, hooks: {
      release: (h) => hooks.releaseJS?.(h),
    } });
    threading = { memory, pool, count: threads };
  }
  const core = kind === WEBFFI_CORE
    ? webffiCore({ wasi: createWasi({ write: logWrite(logger) }), hooks, backtraces, threads: threading })
    : tvm.tvmLibraryCore({ logger, hooks });
  let instance;
  let attached;
  try {
    instance = await WebAssembly.instantiate(module, core.imports);
    registerInstance(instance, module, debugInfo);
    attached = core.attach(instance);
  } catch (e) {
    threading?.pool.terminate(); // a load that fails leaves no workers behind
    throw e;
  }
  const { runtime, imports: impl } = createRuntime(attached, { logger, backtraces });
  Object.assign(hooks, impl);
  if (runtime.coreKind !== WEBFFI_CORE) tvm.registerDeviceFallbacks(runtime);
  const backends = createBackendRegistry(runtime);
  const { Tensor, TensorView, tensor, empty, tensorOver } = createTensorSupport(runtime, backends);
  Object.assign(runtime, { backends, Tensor, TensorView, tensor, empty });
  installGPUInterop(runtime, backends, tensorOver);
  const { gpuDevice } = options;
  if (gpuDevice !== undefined) {
    // The caller's device: adopted (and checked) now, so a device that falls short fails load().
    const { webgpuRuntimeBackend } = await importWebGPU();
    backends.register(webgpuRuntimeBackend(null, { device: gpuDevice }), 'load({ gpuDevice })');
    await backends.init('webgpu');
    if (runtime.coreKind !== WEBFFI_CORE) checkLibraryNeeds(runtime, gpuDevice);
  }
  if (autoloadEnabled(options.autoloadBackends)) {
    try {
      await discoverBackends(backends, { appDir: options.appDir, logger, webgpu: gpuDevice === undefined });
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
