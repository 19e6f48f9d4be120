// js/backends/webgpu_module.js in the script bundle: the WebGPU backend is
// dist/webffi.webgpu.js, loaded where the host has WebGPU.
import { loadPart } from './chunks.js';

export const importWebGPU = () => loadPart('webgpu');
