// Which kind of core a compiled wasm module is, read from its imports and
// exports before anything is instantiated: webffi's own core, or a library
// TVM compiled (an MLC/web-llm model library) that carries upstream
// tvm-ffi's core. Anything else is refused with what was found.
import { RuntimeError } from '../errors.js';

export const WEBFFI_CORE = 'webffi';
export const TVM_FFI_LIBRARY = 'tvm-ffi';

const SUPPORTED =
  'webffi loads its own core (webffi.wasm) and libraries TVM compiled with tvm-ffi ' +
  '(MLC/web-llm model libraries from web-llm-models/v0_2_80 on)';

/** A short list of names for an error message. */
function sample(names) {
  const shown = names.slice(0, 6).join(', ');
  return names.length > 6 ? `${shown}, ... (${names.length} in all)` : shown || 'nothing';
}

/**
 * The kind of core `module` is: WEBFFI_CORE or TVM_FFI_LIBRARY, or a
 * RuntimeError naming what it is instead.
 * @param {WebAssembly.Module} module
 * @param {string} where how to name the source in messages
 */
export function coreKindOf(module, where) {
  const exports = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  const imports = WebAssembly.Module.imports(module);
  const imported = new Set(imports.map((i) => `${i.module}.${i.name}`));
  if (exports.has('WebFFIGetABIMetadata')) return WEBFFI_CORE;
  if (exports.has('TVMFFIWasmFunctionCreate') && imported.has('env.TVMFFIWasmSafeCall')) {
    for (const need of ['TVMFFIFunctionCall', 'TVMWasmAllocSpace', 'TVMWasmFreeSpace', 'memory', 'stackSave', 'stackRestore']) {
      if (!exports.has(need)) {
        throw new RuntimeError(`webffi: ${where} is a tvm-ffi library without the export \`${need}\` that webffi drives it through; ${SUPPORTED}`);
      }
    }
    if (!exports.has('TVMFFIGetVersion')) {
      // refused before it is instantiated (its start function never runs)
      const old = ['TVMFFIObjectFree', 'TVMFFINDArrayCreateView'].filter((n) => exports.has(n));
      throw new RuntimeError(`webffi: ${where} carries a tvm-ffi from before 0.1 (it has no TVMFFIGetVersion` +
        (old.length ? `, and exports ${old.join(', ')}` : '') + `); webffi drives tvm-ffi 0.1.x libraries: ${SUPPORTED}`);
    }
    return TVM_FFI_LIBRARY;
  }
  if (imported.has('env.TVMWasmPackedCFunc') || exports.has('TVMFuncCall')) {
    throw new RuntimeError(
      `webffi: ${where} is a library built for TVM's ABI before tvm-ffi (it imports TVMWasmPackedCFunc and ` +
      `exports TVMFuncCall: web-llm model libraries before v0_2_80); ${SUPPORTED}. ` +
      'Use a library compiled by a TVM with tvm-ffi, or run this one with @mlc-ai/web-runtime of its time');
  }
  if (WebAssembly.Module.customSections(module, 'dylink.0').length > 0) {
    throw new RuntimeError(
      `webffi: ${where} is a side module (it has a dylink.0 section), not a core: load the runtime with load() ` +
      'and this module with rt.loadModule()');
  }
  throw new RuntimeError(
    `webffi: ${where} is neither webffi's core nor a tvm-ffi library: it exports ${sample([...exports])} ` +
    `and imports ${sample(imports.map((i) => `${i.module}.${i.name}`))}; ${SUPPORTED}`);
}
