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
 *   readFileSync?: (path: string) => Uint8Array }} [options]
 *   args is the whole argv (args[0] the program's name); write receives
 *   stdout (1) and stderr (2) text (Node: the process's own); readFileSync
 *   reads the modules the program loads (Node: fs).
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
  imports.env = new Proxy(host.env, {
    get: (target, name) => target[name] ??
      (typeof name === 'string' && name.startsWith('__syscall_') ? enosys : undefined),
  });
  const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
  const name = mainName(module);
  const instance = await WebAssembly.instantiate(module, imports);
  registerInstance(instance, module);
  const x = instance.exports;
  memory = x.memory;
  wasi.setMemory(memory);
  const main = x[name];
  try {
    x._initialize();
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
    x.exit(code); // runs atexit handlers, flushes stdio, then proc_exit
    return code;
  } catch (e) {
    if (e instanceof WasiExit) return e.code;
    throw e;
  }
}
