// The WebGPU implementation Node tests and benchmarks use: Dawn from npm
// `webgpu` on its OpenGL ES backend, which runs on Mesa's llvmpipe without a
// GPU or a display (EGL_PLATFORM=surfaceless). The browser's globals that
// onnxruntime-web and TensorFlow.js look for come from the package's own
// webffi/node-gpu (installWebGPU).
import { create } from 'webgpu';

export function nodeGPU(backend = 'opengles') {
  process.env.EGL_PLATFORM ??= 'surfaceless';
  return create([`backend=${backend}`]);
}
