// A minimal WASI (snapshot preview 1) for the webffi runtime: the core needs
// only output, a clock, random bytes and exit. Everything else answers
// ENOSYS, so a call we did not plan for fails loudly instead of silently.

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_NOSYS = 52;

/** Thrown by proc_exit so the caller can read the exit code. */
export class WasiExit extends Error {
  constructor(code) {
    super(`wasm program exited with code ${code}`);
    this.name = 'WasiExit';
    this.code = code;
  }
}

const defaultWrite = (fd, text) => {
  const sink = fd === 2 ? console.error : console.log;
  sink(text.endsWith('\n') ? text.slice(0, -1) : text);
};

/**
 * @param {{ write?: (fd: number, text: string) => void }} [options]
 *   write receives each fd_write to stdout (1) or stderr (2) as UTF-8 text.
 */
export function createWasi(options = {}) {
  const write = options.write ?? defaultWrite;
  const decoder = new TextDecoder();
  let memory = null;
  // A shared memory's views are refused by TextDecoder and getRandomValues
  // in browsers: those read and write through a copy.
  let shared = false;
  // Views are rebuilt when memory grows (the old buffer is detached).
  let bytes = new Uint8Array(0);
  let view = new DataView(new ArrayBuffer(0));
  const views = () => {
    if (bytes.buffer !== memory.buffer) {
      bytes = new Uint8Array(memory.buffer);
      view = new DataView(memory.buffer);
    }
  };

  const imports = {
    fd_write(fd, iovs, iovsLen, nwrittenPtr) {
      if (fd !== 1 && fd !== 2) return ERRNO_BADF;
      views();
      let text = '';
      let total = 0;
      for (let i = 0; i < iovsLen; i++) {
        const ptr = view.getUint32(iovs + i * 8, true);
        const len = view.getUint32(iovs + i * 8 + 4, true);
        const chunk = shared ? bytes.slice(ptr, ptr + len) : bytes.subarray(ptr, ptr + len);
        text += decoder.decode(chunk, { stream: true });
        total += len;
      }
      text += decoder.decode();
      write(fd, text);
      view.setUint32(nwrittenPtr, total, true);
      return ERRNO_SUCCESS;
    },
    fd_close: () => ERRNO_SUCCESS,
    fd_seek: () => ERRNO_NOSYS,
    fd_fdstat_get(fd, statPtr) {
      if (fd > 2) return ERRNO_BADF;
      views();
      bytes.fill(0, statPtr, statPtr + 24);
      view.setUint8(statPtr, 2); // filetype: character device
      return ERRNO_SUCCESS;
    },
    clock_time_get(clockId, precision, timePtr) {
      views();
      const ns = clockId === 0
        ? BigInt(Date.now()) * 1000000n
        : BigInt(Math.round(performance.now() * 1e6));
      view.setBigUint64(timePtr, ns, true);
      return ERRNO_SUCCESS;
    },
    random_get(ptr, len) {
      views();
      for (let at = 0; at < len; at += 65536) {
        const end = Math.min(len, at + 65536);
        if (shared) bytes.set(crypto.getRandomValues(new Uint8Array(end - at)), ptr + at);
        else crypto.getRandomValues(bytes.subarray(ptr + at, ptr + end));
      }
      return ERRNO_SUCCESS;
    },
    environ_sizes_get(countPtr, sizePtr) {
      views();
      view.setUint32(countPtr, 0, true);
      view.setUint32(sizePtr, 0, true);
      return ERRNO_SUCCESS;
    },
    environ_get: () => ERRNO_SUCCESS,
    args_sizes_get(countPtr, sizePtr) {
      views();
      view.setUint32(countPtr, 0, true);
      view.setUint32(sizePtr, 0, true);
      return ERRNO_SUCCESS;
    },
    args_get: () => ERRNO_SUCCESS,
    proc_exit(code) {
      throw new WasiExit(code);
    },
  };

  return {
    imports: new Proxy(imports, {
      get: (target, name) => target[name] ?? (() => ERRNO_NOSYS),
    }),
    /** Must be called with the instance's memory before any import runs. */
    setMemory(m) {
      memory = m;
      shared = typeof SharedArrayBuffer !== 'undefined' && m.buffer instanceof SharedArrayBuffer;
    },
  };
}
