// Backend discovery at load: the built-in WebGPU backend when the host has
// WebGPU (navigator.gpu, or npm `webgpu` in Node), third-party backends
// declared by npm packages among the application's dependencies (Node:
// package.json `"webffi": { "backend": "./entry.js" }`; the application is
// the package holding the entry module, else the working directory), and backends that
// scripts push onto the global queue `globalThis.webffiBackends` (browser;
// before or after the runtime loads).
import { importWebGPU } from './webgpu_module.js';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;
const QUEUE = 'webffiBackends';
// Registries of loaded runtimes, for later pushes; weakly held, so the queue
// keeps no runtime alive.
const listeners = new Set(); // WeakRef<registry>
const npmScans = new Map(); // app directory -> Promise of its backend packages

/** True unless discovery is switched off (option, or WEBFFI_BACKEND_AUTOLOAD=0 in Node). */
export function autoloadEnabled(option) {
  if (option === false) return false;
  return !(isNode && process.env.WEBFFI_BACKEND_AUTOLOAD === '0');
}

/**
 * Registers every backend found with `registry`.
 * @param {{ register(b, source?): boolean }} registry
 * @param {{ appDir?: string|URL, logger: Console, importPackage?: (name: string) => Promise<object|null>, webgpu?: boolean }} options
 *   importPackage: how an optional package is imported (null when it is not installed); tests replace it.
 *   webgpu: false when the runtime already has its WebGPU backend (load({ gpuDevice })).
 */
export async function discoverBackends(registry, { appDir, logger, importPackage = importOptional, webgpu = true }) {
  const gpu = globalThis.navigator?.gpu;
  if (!webgpu) {
    // the WebGPU backend was registered by the caller
  } else if (gpu) {
    const backend = await webgpuBackend(logger);
    if (backend) registry.register(backend(() => gpu), 'webgpu');
  } else if (!isNode) {
    registry.explainMissing?.('webgpu', 'this browser exposes no WebGPU (navigator.gpu is undefined): it needs a ' +
      'secure context (https, or http on localhost) and a browser that has WebGPU');
  }
  if (isNode && !gpu) {
    const dawn = webgpu ? await importPackage('webgpu') : null;
    const backend = dawn && await webgpuBackend(logger);
    if (backend) {
      registry.register(backend(() => dawnGPU(dawn.create)), 'webgpu');
    } else if (webgpu && !dawn) {
      // Said when a tensor asks for WebGPU, not at every load.
      registry.explainMissing?.('webgpu', 'WebGPU in Node comes from the `webgpu` package: npm install webgpu');
    }
    const dir = appDir ?? (await entryPackageDir()) ?? process.cwd();
    const key = String(dir);
    // The dependency scan is done once per app directory and process.
    if (!npmScans.has(key)) npmScans.set(key, npmBackends(dir, logger));
    for (const { name, load } of await npmScans.get(key)) {
      try {
        registry.register(await load(), name);
      } catch (e) {
        logger.warn?.(`webffi: backend package ${name} could not be registered: ${e?.message ?? e}`);
      }
    }
  }
  drainQueue(registry);
}

/**
 * The WebGPU backend's maker, imported on a host that has WebGPU; null (one
 * warning) when its code cannot be loaded (the script bundle's
 * dist/webffi.webgpu.js missing), which never fails load().
 */
async function webgpuBackend(logger) {
  try {
    return (await importWebGPU()).webgpuRuntimeBackend;
  } catch (e) {
    logger.warn?.(`webffi: backend webgpu could not be registered: ${e?.message ?? e}`);
    return null;
  }
}

/** The global queue: drained now, and later pushes go to every loaded runtime. */
function drainQueue(registry) {
  const queue = (globalThis[QUEUE] ??= []);
  for (const ref of listeners) if (!ref.deref()) listeners.delete(ref);
  listeners.add(new WeakRef(registry));
  if (!queue.webffiListening) {
    Object.defineProperty(queue, 'webffiListening', { value: true });
    queue.push = (...items) => {
      for (const ref of listeners) {
        const r = ref.deref();
        if (!r) listeners.delete(ref);
        else for (const item of items) r.register(item, 'webffiBackends');
      }
      return Array.prototype.push.apply(queue, items);
    };
  }
  for (const item of queue) registry.register(item, 'webffiBackends');
}

async function importOptional(name) {
  try {
    // Left to the runtime's loader: bundlers neither resolve nor warn about it.
    return await import(/* webpackIgnore: true */ /* @vite-ignore */ name);
  } catch (e) {
    if (e?.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes(`'${name}'`)) return null;
    throw e;
  }
}

/**
 * Whether Linux's dynamic linker can find the Vulkan loader (false: it
 * cannot; null: cannot tell, e.g. no glibc cache). Dawn's default backend on
 * Linux is Vulkan: without the loader it only prints a warning and fails.
 */
function vulkanLoaderFound() {
  const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');
  const lib = 'libvulkan.so.1';
  for (const dir of (process.env.LD_LIBRARY_PATH ?? '').split(':')) {
    if (dir && existsSync(`${dir}/${lib}`)) return true;
  }
  try {
    return readFileSync('/etc/ld.so.cache').includes(lib);
  } catch {
    return null;
  }
}

/**
 * Dawn on its default backend (a GPU's Vulkan/Metal/D3D12), falling back to
 * OpenGL ES, which runs on Mesa's llvmpipe without a GPU or display; on
 * Linux without a Vulkan loader, OpenGL ES at once (the default backend
 * would only print Dawn's "Couldn't load Vulkan" warning). WEBFFI_DAWN_BACKEND=name
 * picks one.
 */
export function dawnGPU(create) {
  const chosen = process.env.WEBFFI_DAWN_BACKEND;
  const opengles = () => {
    process.env.EGL_PLATFORM ??= 'surfaceless';
    return create(['backend=opengles']);
  };
  if (chosen) return chosen === 'opengles' ? opengles() : create([`backend=${chosen}`]);
  if (process.platform === 'linux' && vulkanLoaderFound() === false) return opengles();
  let primary = null;
  let fallback = null;
  return {
    async requestAdapter(options) {
      primary ??= create([]);
      const adapter = await primary.requestAdapter(options);
      if (adapter) return adapter;
      fallback ??= opengles();
      return fallback.requestAdapter(options);
    },
  };
}

/**
 * The application's own directory: the nearest package.json above its entry
 * module (`process.argv[1]`), wherever the process was started from; null
 * when there is no entry script (a REPL, `node -e`) or no package above it.
 */
async function entryPackageDir() {
  const entry = process.argv[1];
  if (!entry) return null;
  const { realpath, access } = process.getBuiltinModule('node:fs/promises');
  const { dirname, join, resolve } = process.getBuiltinModule('node:path');
  let start;
  try {
    start = dirname(await realpath(resolve(entry)));
  } catch {
    return null; // not a file (a name the shell resolved elsewhere)
  }
  for (let d = start; ; d = dirname(d)) {
    try {
      await access(join(d, 'package.json'));
      return d;
    } catch {
      // keep looking upward
    }
    if (dirname(d) === d) return null;
  }
}

/** Packages among the app's dependencies whose package.json has a `webffi` field. */
async function npmBackends(appDir, logger) {
  // Node built-ins through getBuiltinModule, not imports: bundlers building
  // this graph for a browser meet nothing from Node.
  const builtin = (name) => process.getBuiltinModule(name);
  const { readFile } = builtin('node:fs/promises');
  const { join, dirname, resolve } = builtin('node:path');
  const { pathToFileURL, fileURLToPath } = builtin('node:url');
  const dir = resolve(appDir instanceof URL ? fileURLToPath(appDir) : appDir);
  const readJSON = async (file) => JSON.parse(await readFile(file, 'utf8'));
  let app;
  try {
    app = await readJSON(join(dir, 'package.json'));
  } catch {
    return [];
  }
  const names = new Set(Object.keys({ ...app.dependencies, ...app.optionalDependencies, ...app.devDependencies }));
  const found = [];
  for (const name of names) {
    const pkgDir = await findPackage(name, dir, readFile, join, dirname);
    if (!pkgDir) continue;
    let pkg;
    try {
      pkg = await readJSON(join(pkgDir, 'package.json'));
    } catch {
      continue;
    }
    if (pkg.webffi === undefined) continue;
    const entry = typeof pkg.webffi === 'string' ? pkg.webffi : pkg.webffi?.backend;
    if (typeof entry !== 'string') {
      logger.warn?.(`webffi: package ${name} declares "webffi" without a backend entry ("webffi": { "backend": "./file.js" })`);
      continue;
    }
    found.push({
      name,
      load: async () => {
        const mod = await import(/* webpackIgnore: true */ /* @vite-ignore */ pathToFileURL(join(pkgDir, entry)).href);
        return mod.default ?? mod.backend;
      },
    });
  }
  return found;
}

/** The directory of package `name` as Node resolves it from `dir` (node_modules upward). */
async function findPackage(name, dir, readFile, join, dirname) {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, 'node_modules', name);
    try {
      await readFile(join(candidate, 'package.json'));
      return candidate;
    } catch {
      // keep looking upward
    }
    if (dirname(d) === d) return null;
  }
}
