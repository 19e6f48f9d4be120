// The WebGPU backend's code (webgpu_runtime.js and js/backends/webgpu/),
// imported only where a host has WebGPU (load() on such a host, or
// load({ gpuDevice })): a bundler that splits code puts it in a chunk of its
// own, and the script bundle loads it from dist/webffi.webgpu.js, next to
// itself (scripts/bundle.mjs).
export const importWebGPU = () => import('./webgpu_runtime.js');
