// One worker of the threaded core's pool (js/threads/pool.js): it
// instantiates the core on the shared memory, then runs each pthread the
// core hands it. A task that traps is reported to the core (its launch
// returns an error instead of waiting for ever) and to the loading thread.
import { commandEnv, threadEnv } from './env_imports.js';
import { createWasi } from '../wasi.js';
import { workerModules } from '../dylink.js';

// Emscripten 3.1.6's struct pthread: where the thread's stack top and size are.
const PTHREAD_STACK = 44;
const PTHREAD_STACK_SIZE = 48;
/** The size of the core's trap text (wf_par_trap_text in src/parallel.c). */
const TRAP_TEXT_BYTES = 256;

const port = globalThis.process?.getBuiltinModule?.('node:worker_threads')?.parentPort ?? globalThis;
const post = (message) => port.postMessage(message);

let memory = null;
let x = null;
let table = null;
let replay = () => 0;

/** Where this worker's stdout and stderr go: the process's own (Node, when asked), else the loading thread. */
function output(direct) {
  const fs = direct ? globalThis.process?.getBuiltinModule?.('node:fs') : undefined;
  return fs ? (fd, text) => fs.writeSync(fd, text) : (fd, text) => post({ cmd: 'print', fd, text });
}

function instantiate({ module, memory: shared, directOutput }) {
  memory = shared;
  const wasi = createWasi({ write: output(directOutput) });
  wasi.setMemory(memory);
  const env = threadEnv({
    memory,
    exports: () => x,
    wakeMain: () => post({ cmd: 'wake' }),
    // a detached thread that ended: its worker can host another
    threadDone: (pthread) => post({ cmd: 'cleanup', pthread }),
    exit: (code) => {
      throw new Error(`webffi: exit(${code}) called on a worker thread`);
    },
  });
  const more = commandEnv(memory, () => x);
  const imports = {
    // (what else a command program imports: js/command.js gives its main thread the same)
    env: new Proxy(env, { get: (target, name) => target[name] ?? more(name) }),
    wasi_snapshot_preview1: wasi.imports,
    webffi: {
      // Backtraces are captured on the loading thread only; C still names
      // the error's kind and message.
      backtrace: () => 0,
      backtrace_capture: () => -1,
      backtrace_frames: () => 0,
      backtrace_drop() {},
      // JS values live on the loading thread; the core refuses the call
      // itself before it gets here (src/wasm/js_function.c).
      call_js: () => -1,
      // A JS value C dropped on this thread is released where it lives.
      release_js: (handle) => post({ cmd: 'release', handle }),
      // Modules loaded at run time, instantiated here before a task (src/parallel.c).
      replay_loads: (block) => replay(block),
    },
  };
  const instance = new WebAssembly.Instance(module, imports);
  x = instance.exports;
  table = x.__indirect_function_table;
  replay = workerModules({ ...x, memory }, memory, (message) => post({ cmd: 'print', fd: 2, text: `${message}\n` }));
}

/** Runs the pthread `pthread` (its start routine and argument) to its end. */
function run({ pthread, start, arg }) {
  x._emscripten_thread_init(pthread, 0, 0, 1, 0);
  const words = new Int32Array(memory.buffer);
  const top = words[(pthread + PTHREAD_STACK) >> 2] >>> 0;
  const size = words[(pthread + PTHREAD_STACK_SIZE) >> 2] >>> 0;
  if (words[pthread >> 2] !== pthread || size === 0 || top <= size) {
    throw new Error(`webffi: struct pthread at ${pthread} is not Emscripten 3.1.6's layout`);
  }
  x.emscripten_stack_set_limits(top, top - size);
  x.stackRestore(top);
  x.emscripten_tls_init();
  let result = 0;
  try {
    result = table.get(start)(arg);
  } catch (e) {
    report(e, arg);
    return;
  }
  x._emscripten_thread_exit(result);
}

/** A trap in a task: the core learns why and which task's thread it was. */
function report(e, index) {
  const message = String(e?.message ?? e).slice(0, 200);
  try {
    // the core's buffer holds TRAP_TEXT_BYTES with its NUL (src/parallel.c);
    // 200 UTF-16 units may encode to 600 bytes, so the bytes are cut to fit
    const bytes = new TextEncoder().encode(message).subarray(0, TRAP_TEXT_BYTES - 1);
    const text = new Uint8Array(memory.buffer, x.WebFFIParallelTrapText(), TRAP_TEXT_BYTES);
    text.set(bytes);
    text[bytes.length] = 0;
    x.WebFFIParallelWorkerTrapped(index);
  } finally {
    post({ cmd: 'trapped', message });
  }
}

function onMessage(data) {
  try {
    if (data.cmd === 'load') {
      instantiate(data);
      post({ cmd: 'ready' });
    } else if (data.cmd === 'run') {
      run(data);
    }
  } catch (e) {
    post({ cmd: 'failed', message: String(e?.message ?? e) });
  }
}

if (typeof port.on === 'function') port.on('message', onMessage);
else port.onmessage = (event) => onMessage(event.data);
