// Where the wasm lives by default: dist/webffi.wasm, next to js/ (the
// package layout and the repository after a build).
export const defaultWasmUrl = () => new URL('../dist/webffi.wasm', import.meta.url);
/** The threaded core (load({ threads })): dist/webffi-mt.wasm beside it. */
export const defaultThreadedWasmUrl = () => new URL('../dist/webffi-mt.wasm', import.meta.url);
