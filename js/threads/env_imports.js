// The `env` imports of the threaded core (webffi-mt.wasm), on the thread
// that loaded it and on each worker. A -pthread link of Emscripten 3.1.6
// names these functions of its own JS runtime; webffi provides them itself
// (a pool of its own, no Emscripten JS), so their names and meanings are
// pinned to that version: tests/node/threads.test.mjs checks the list.

/** Pages of 64 KiB. */
const PAGE = 65536;
const EAGAIN = 6;

/** What a threaded core imports from `env`, besides `memory` (the pin). */
export const THREAD_ENV_IMPORTS = [
  '__emscripten_init_main_thread_js', '__emscripten_thread_cleanup', '__pthread_create_js',
  '_emscripten_default_pthread_stack_size', '_emscripten_notify_thread_queue', '__clock_gettime', 'clock_gettime',
  'emscripten_check_blocking_allowed', 'emscripten_get_now', 'emscripten_memcpy_big',
  'emscripten_receive_on_main_thread_js', 'emscripten_resize_heap', 'emscripten_set_canvas_element_size',
  'emscripten_unwind_to_js_event_loop', 'emscripten_webgl_create_context', 'exit',
];

/** Whether this thread may block in Atomics.wait (not a page's main thread). */
export const canBlock = () => typeof window === 'undefined' || typeof document === 'undefined';

/** Whether this is a process's or a page's main thread (Emscripten's "main browser thread"). */
const isMainThread = () =>
  typeof WorkerGlobalScope === 'undefined' &&
  globalThis.process?.getBuiltinModule?.('node:worker_threads')?.isMainThread !== false;

/**
 * @param {object} o
 * @param {WebAssembly.Memory} o.memory the shared memory
 * @param {() => object} o.exports the instance's exports, once instantiated
 * @param {(pthread: number, start: number, arg: number) => number} [o.createThread]
 *   the loading thread's: hands a new pthread to an idle worker (0, or an errno)
 * @param {(pthread: number) => void} [o.threadDone] a joined (or detached and ended) thread's
 *   worker is idle again
 * @param {() => void} [o.wakeMain] a worker queued work for the loading thread
 * @param {(code: number) => never} o.exit what exit() does
 */
export function threadEnv({ memory, exports, createThread, threadDone, wakeMain, exit }) {
  const main = createThread !== undefined;
  let u8 = new Uint8Array(memory.buffer);
  const bytes = () => (u8.length === memory.buffer.byteLength ? u8 : (u8 = new Uint8Array(memory.buffer)));
  const clockGettime = (clock, tp) => {
    const ms = clock === 0 ? Date.now() : performance.now();
    const view = new Int32Array(memory.buffer, tp, 2);
    view[0] = Math.floor(ms / 1e3);
    view[1] = Math.floor((ms % 1e3) * 1e6);
    return 0;
  };
  return {
    memory,
    __emscripten_init_main_thread_js(pthread) {
      // the loading thread: its thread state, then its own TLS block
      const x = exports();
      x._emscripten_thread_init(pthread, isMainThread() ? 1 : 0, 1, canBlock() ? 1 : 0, 0);
      x.emscripten_tls_init();
    },
    __emscripten_thread_cleanup(pthread) {
      threadDone?.(pthread); // (a worker's tells the loading thread)
    },
    __pthread_create_js(pthread, attr, start, arg) {
      return main ? createThread(pthread, start, arg) : EAGAIN; // only the pool's owner starts threads
    },
    _emscripten_default_pthread_stack_size: () => 2 << 20,
    _emscripten_notify_thread_queue(target, mainThread) {
      if (!main && target === mainThread) wakeMain?.();
      return 1;
    },
    // (__clock_gettime is musl's name, which the pthread waits the core exports for modules call)
    __clock_gettime: clockGettime,
    clock_gettime: clockGettime,
    emscripten_check_blocking_allowed() {},
    emscripten_get_now: () => performance.now(),
    emscripten_memcpy_big(dest, src, n) {
      bytes().copyWithin(dest, src, src + n);
    },
    emscripten_receive_on_main_thread_js() {
      throw new Error('webffi: the threaded core proxies no JS calls to the loading thread');
    },
    emscripten_resize_heap(size) {
      const have = memory.buffer.byteLength;
      const want = size >>> 0;
      if (want <= have) return 1;
      try {
        memory.grow(Math.ceil((want - have) / PAGE));
        return 1;
      } catch {
        return 0; // past the maximum: malloc returns NULL, a MemoryError
      }
    },
    emscripten_set_canvas_element_size: () => -1,
    emscripten_unwind_to_js_event_loop() {
      throw new Error('webffi: emscripten_unwind_to_js_event_loop is not supported');
    },
    emscripten_webgl_create_context: () => 0,
    exit,
  };
}

/** -ENOSYS (Emscripten's numbering): what a file-system call returns where there are no files. */
const enosys = () => -52;

/**
 * The rest of what a threaded command program (`webffi build --threads`
 * with main) imports from Emscripten's JS library, on every thread: libc's
 * time zone (UTC), assert(), and file-system calls that fail with ENOSYS
 * (a single-threaded program has these in wasm, STANDALONE_WASM's). A
 * proxy's target: `get(name)` for a name the core did not import.
 * @param {WebAssembly.Memory} memory
 * @param {() => object} exports the instance's exports, once instantiated
 */
export function commandEnv(memory, exports) {
  const text = new TextDecoder();
  const cstr = (p) => {
    const bytes = new Uint8Array(memory.buffer);
    return p === 0 ? '' : text.decode(bytes.slice(p, bytes.indexOf(0, p)));
  };
  let utc = 0;
  const own = {
    // struct tm's fields, 4 bytes each: sec min hour mday mon year wday yday isdst gmtoff
    _localtime_js(time, tm) {
      const date = new Date(new Int32Array(memory.buffer, time, 1)[0] * 1000);
      const fields = new Int32Array(memory.buffer, tm, 10);
      const yday = Math.floor((date - Date.UTC(date.getUTCFullYear(), 0, 1)) / 864e5);
      fields.set([date.getUTCSeconds(), date.getUTCMinutes(), date.getUTCHours(), date.getUTCDate(),
        date.getUTCMonth(), date.getUTCFullYear() - 1900, date.getUTCDay(), yday, 0, 0]);
    },
    _tzset_js(timezone, daylight, tzname) {
      if (utc === 0) {
        utc = exports().malloc(4);
        new Uint8Array(memory.buffer, utc, 4).set([85, 84, 67, 0]); // "UTC"
      }
      new Int32Array(memory.buffer, timezone, 1)[0] = 0;
      new Int32Array(memory.buffer, daylight, 1)[0] = 0;
      new Int32Array(memory.buffer, tzname, 2).set([utc, utc]);
    },
    __assert_fail(condition, file, line, func) {
      throw new Error(`Assertion failed: ${cstr(condition)}, at: ${cstr(file) || 'unknown filename'}, ${line}, ` +
        `${cstr(func) || 'unknown function'}`);
    },
    strftime_l: () => 0,
  };
  return (name) => own[name] ?? (typeof name === 'string' && name.startsWith('__syscall_') ? enosys : undefined);
}
