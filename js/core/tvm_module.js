// The core of a library TVM compiled (tvm_core.js), imported only when
// load() is given one (an MLC/web-llm model library): a bundler that splits
// code puts it in a chunk of its own, and the script bundle loads it from
// dist/webffi.models.js, next to itself (scripts/bundle.mjs).
export const importTVMCore = () => import('./tvm_core.js');
