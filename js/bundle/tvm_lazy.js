// js/core/tvm_module.js in the script bundle: the core of a library TVM
// compiled is dist/webffi.models.js, loaded when load() is given one.
import { loadPart } from './chunks.js';

export const importTVMCore = () => loadPart('models');
