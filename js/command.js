// Runs a webffi command program: a wasm built by `webffi build` from
// sources that define main(). It is the runtime with the program linked
// in, built as a reactor that exports main and exit, so the host can set
// up module loading (js/dylink.js: ffi.ModuleLoadFromFile,
// ffi.Module.load_from_file.so/.wasm) before main runs. Used by
// `webffi run` (Node) and usable from a page.
import { createWasi, WasiExit } from './wasi.js';
import { createHostImports } from './host_imports.js';
import { moduleLoader } from './dylink.js';
import { registerInstance } from './symbols.js';
import { commandEnv, threadEnv } from './threads/env_imports.js';
import { startWorkers } from './threads/pool.js';

const COMMAND_SECTION = 'webffi.command';

/** The name of main's export, from the program's `webffi.command` section. */
function mainName(module) {
  const [section] = WebAssembly.Module.customSections(module, COMMAND_SECTION);
  let name = null;
  if (section !== undefined) {
    try {
      name = JSON.parse(new TextDecoder().decode(section)).main;
    } catch {
      name = null;
    }
  }
  const exported = WebAssembly.Module.exports(module).some((e) => e.name === name);
  if (typeof name !== 'string' || !exported) {
    throw new Error('not a webffi command program (build one with `webffi build` from ' +
      'sources that define main())');
  }
  return name;
}

/** -ENOSYS (WASI's errno 52, Emscripten's numbering): what an unsupported syscall returns. */
const enosys = () => -52;

/** Whether a program was linked with threads (`webffi build --threads`): it imports Emscripten's thread creation. */
const isThreaded = (module) => WebAssembly.Module.imports(module)
  .some((i) => i.module === 'env' && i.name === '__pthread_create_js');

/** A threaded program's shared memory: 16 MiB growing to 1 GiB, as load({ threads }) makes it. */
const SHARED_MEMORY = { initial: 256, maximum: 16384 };

/** The machine's cores, as the engine reports them (at least 2: a threaded program gets a pool). */
function cores() {
  const os = globalThis.process?.getBuiltinModule?.('node:os');
  const n = os?.availableParallelism?.() ?? globalThis.navigator?.hardwareConcurrency ?? 2;
  return Math.max(2, Math.min(256, n | 0));
}

const isNode = () => Boolean(globalThis.process?.versions?.node);

/** Writes each output to the process's own file descriptors, in order (Node). */
async function nodeWrite() {
  const { writeSync } = await import('node:fs');
  return (fd, text) => writeSync(fd, text);
}

/**
 * Runs the program to its end and resolves to its exit code: main's return
 * value, or the code it passed to exit().
 * @param {ArrayBufferView | ArrayBuffer | WebAssembly.Module} source
 * @param {{ args?: string[], write?: (fd: number, text: string) => void,
 *   readFileSync?: (path: string) => Uint8Array, threads?: number }} [options]
 *   args is the whole argv (args[0] the program's name); write receives
 *   stdout (1) and stderr (2) text (Node: the process's own); readFileSync
 *   reads the modules the program loads (Node: fs); threads sizes a
 *   threaded program's parallel pool, the main thread's included (default:
 *   a thread per core, at least 2); its pthreads each get a worker of their own.
 */
export async function runCommand(source, options = {}) {
  const args = (options.args ?? ['program']).map(String);
  const write = options.write ?? (isNode() ? await nodeWrite() : undefined);
  const readFileSync = options.readFileSync ??
    (isNode() ? (await import('node:fs')).readFileSync : undefined);
  const wasi = createWasi({ write });
  const utf8 = new TextEncoder();
  const encoded = args.map((a) => utf8.encode(`${a}\0`));
  const argBytes = encoded.reduce((n, a) => n + a.length, 0);
  let memory;
  const wasiImports = wasi.imports;
  const imports = {
    wasi_snapshot_preview1: new Proxy({
      args_sizes_get(countPtr, sizePtr) {
        const view = new DataView(memory.buffer);
        view.setUint32(countPtr, encoded.length, true);
        view.setUint32(sizePtr, argBytes, true);
        return 0;
      },
      args_get(argvPtr, bufPtr) {
        const view = new DataView(memory.buffer);
        const bytes = new Uint8Array(memory.buffer);
        let at = bufPtr;
        encoded.forEach((a, i) => {
          view.setUint32(argvPtr + 4 * i, at, true);
          bytes.set(a, at);
          at += a.length;
        });
        return 0;
      },
    }, { get: (target, name) => target[name] ?? wasiImports[name] }),
  };
  const host = createHostImports(() => memory);
  imports.webffi = host.webffi;
  // Emscripten's syscalls beyond WASI (stat, mkdir, unlink, ...: libc's
  // file-system calls, which C++ libraries such as googletest link) have
  // no file system here: each fails with ENOSYS, as a native call on a
  // system without it would, instead of the program failing to start.
  const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
  const name = mainName(module);
  let x = null;
  let pool = null;
  let env = host.env;
  const threads = options.threads ?? cores();
  if (isThreaded(module)) {
    // `webffi build --threads`: the program's pthreads and the parallel
    // pool's threads run on workers (js/threads/) over one shared memory;
    // main runs here, where exit() ends the program.
    memory = new WebAssembly.Memory({ ...SHARED_MEMORY, shared: true });
    if (!Number.isInteger(threads) || threads < 1 || threads > 256) {
      throw new RangeError(`runCommand: threads must be an integer in [1, 256], got ${threads}`);
    }
    pool = await startWorkers({ module, memory, count: threads - 1, grow: true, directOutput: options.write === undefined,
      logger: { log: (text) => write?.(1, `${text}\n`), warn: (text) => write?.(2, `${text}\n`) },
      hooks: { freeThread: (pthread) => x._emscripten_thread_free_data(pthread) } });
    host.webffi.replay_loads = () => 0; // (workers instantiate loaded modules: js/dylink.js)
    env = {
      ...host.env,
      ...threadEnv({
        memory,
        exports: () => x,
        createThread: pool.createThread,
        threadDone: pool.threadDone,
        exit: (code) => {
          x.fflush(0);
          wasi.imports.proc_exit(code);
        },
      }),
    };
  }
  // (a threaded program's: the rest of Emscripten's JS library it uses, js/threads/env_imports.js)
  const more = pool ? commandEnv(memory, () => x) : () => undefined;
  imports.env = new Proxy(env, {
    get: (target, name) => target[name] ?? more(name) ??
      (typeof name === 'string' && name.startsWith('__syscall_') ? enosys : undefined),
  });
  let instance;
  try {
    instance = await WebAssembly.instantiate(module, imports);
  } catch (e) {
    pool?.terminate();
    throw e;
  }
  registerInstance(instance, module);
  x = pool ? { ...instance.exports, memory } : instance.exports;
  memory = x.memory;
  wasi.setMemory(memory);
  const main = x[name];
  try {
    if (pool) {
      x.__wasm_call_ctors(); // the main thread's state and TLS, then the constructors
      if (x.WebFFIParallelStart(threads) !== 0) throw new Error('the thread pool did not start');
    } else {
      x._initialize();
    }
    moduleLoader(x, { readFileSync });
    // argv in the program's heap, as _start would have built it
    const argv = x.WebFFIHeapAlloc(4 * (encoded.length + 1) + argBytes);
    if (argv === 0) throw new Error('out of memory for argv');
    const view = new DataView(memory.buffer);
    const bytes = new Uint8Array(memory.buffer);
    let at = argv + 4 * (encoded.length + 1);
    encoded.forEach((a, i) => {
      view.setUint32(argv + 4 * i, at, true);
      bytes.set(a, at);
      at += a.length;
    });
    view.setUint32(argv + 4 * encoded.length, 0, true);
    const code = main.length >= 2 ? main(encoded.length, argv) : main();
    if (pool) x.fflush(0); // (exit() is the host's: stdio is flushed here)
    else x.exit(code); // runs atexit handlers, flushes stdio, then proc_exit
    return code;
  } catch (e) {
    if (e instanceof WasiExit) return e.code;
    throw e;
  } finally {
    pool?.terminate();
  }
}
