/** Runs a webffi command program (built by `webffi build` from sources that define main). */
export interface RunCommandOptions {
  /** The whole argv; args[0] is the program's name. Default: ['program']. */
  args?: string[];
  /** Receives stdout (fd 1) and stderr (fd 2) text. Default in Node: the process's own. */
  write?: (fd: number, text: string) => void;
  /** Reads the module files the program loads. Default in Node: fs.readFileSync. */
  readFileSync?: (path: string) => Uint8Array;
}

/** Resolves to the exit code: main's return value or the code passed to exit(). */
export function runCommand(
  source: ArrayBufferView | ArrayBuffer | WebAssembly.Module,
  options?: RunCommandOptions,
): Promise<number>;
