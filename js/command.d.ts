/**
 * Command programs: a wasm that `webffi build` made from sources that
 * define `main()` (the runtime with the program linked in), run with its
 * arguments, output and exit code. `webffi run PROGRAM.wasm ARGS` is this
 * in Node; in a page, pass `write` and `readFileSync`.
 *
 * @example
 * <!-- doc: fixture=load_and_call -->
 * ```ts
 * import { runCommand } from 'webffi/js/command.js';
 * import { readFileSync } from 'node:fs';
 * // load_and_call.wasm (tests/modules/load_and_call.c): `load_and_call MODULE FUNCTION INT`
 * const code = await runCommand(readFileSync('load_and_call.wasm'), { args: ['load_and_call', 'add_one.wasm', 'add_int', '1'] });
 * console.log('exit code', code);
 * ```
 * <!-- doc: output -->
 * ```text
 * add_int(1) = 2
 * exit code 0
 * ```
 * @module webffi/js/command
 */

/**
 * How `runCommand` runs a program: its argv, where its output goes, and how
 * it reads the module files it loads.
 *
 * @group Command programs
 * @example
 * <!-- doc: fixture=load_and_call -->
 * ```ts
 * import { runCommand, type RunCommandOptions } from 'webffi/js/command.js';
 * import { readFileSync } from 'node:fs';
 * const output: string[] = [];
 * const options: RunCommandOptions = {
 *   args: ['load_and_call', 'add_one.wasm', 'no_such_function', '1'],
 *   write: (fd, text) => output.push(`${fd === 1 ? 'stdout' : 'stderr'}: ${text}`),
 *   readFileSync: (path) => readFileSync(path),
 * };
 * console.log(await runCommand(readFileSync('load_and_call.wasm'), options), output);
 * ```
 * <!-- doc: output -->
 * ```text
 * 1 [ 'stderr: add_one.wasm has no function no_such_function\n' ]
 * ```
 */
export interface RunCommandOptions {
  /** The whole argv; args[0] is the program's name. Default: ['program']. */
  args?: string[];
  /** Receives stdout (fd 1) and stderr (fd 2) text. Default in Node: the process's own. */
  write?: (fd: number, text: string) => void;
  /** Reads the module files the program loads. Default in Node: fs.readFileSync. */
  readFileSync?: (path: string) => Uint8Array;
  /**
   * A program built with `webffi build --threads`: the threads of its
   * parallel pool (TVMBackendParallelLaunch), main's included, an integer
   * in [1, 256]; its pthreads each get a worker of their own. Default: a
   * thread per core, at least 2. Ignored by a single-threaded program.
   */
  threads?: number;
}

/**
 * Runs a webffi command program (built by `webffi build` from sources that
 * define `main`) and resolves to its exit code: main's return value or the
 * code passed to `exit()`. A trap rejects with the `WebAssembly.RuntimeError`
 * (`webffi run` makes it exit code 134); a wasm that is not a command
 * program is an Error that says how to build one.
 *
 * @group Command programs
 * @example
 * <!-- doc: fixture=load_and_call -->
 * ```ts
 * import { runCommand } from 'webffi/js/command.js';
 * import { readFileSync } from 'node:fs';
 * // load_and_call.wasm: tests/modules/load_and_call.c, a program that loads a module and calls a function
 * const code = await runCommand(readFileSync('load_and_call.wasm'), { args: ['load_and_call', 'add_one.wasm', 'add_int', '41'] });
 * console.log('exit code', code);
 * ```
 * <!-- doc: output -->
 * ```text
 * add_int(41) = 42
 * exit code 0
 * ```
 */
export function runCommand(
  source: ArrayBufferView | ArrayBuffer | WebAssembly.Module,
  options?: RunCommandOptions,
): Promise<number>;
