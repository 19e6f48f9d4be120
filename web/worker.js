// A classic worker that owns the demo's GPU work and its C kernel: it hosts
// its own runtime (WebGPU discovered here, from the worker's navigator.gpu)
// and serves it to the page (web/demo.js), which reaches it through
// webffi.connectRuntime. GPU tensors made here stay here as remote handles
// until the page fetches them; the page's main thread only waits.
importScripts('../dist/webffi.iife.js');

// What the page calls here: a peer reaches only what a server exposes.
const EXPOSED = ['demo.matmul', 'demo.matmul_timed', 'webgpu.matmul'];

async function setup() {
  const rt = await webffi.load();
  const kernels = await rt.loadModule('dist/matmul.wasm');
  const matmul = kernels.getFunction('matmul');
  rt.registerGlobal('demo.matmul', matmul);
  // The kernel's own time, measured here, next to the result.
  rt.registerGlobal('demo.matmul_timed', (a, b) => {
    const t0 = performance.now();
    const c = matmul(a, b);
    return [c, performance.now() - t0];
  });
  return rt;
}

const functions = {
  /** Initialises WebGPU in this worker: the adapter's name, or the runtime's error saying why not. */
  async 'demo.webgpu'() {
    await this.runtime.backends.ensure('webgpu');
    try {
      const info = (await navigator.gpu?.requestAdapter())?.info;
      return [info?.vendor, info?.architecture || info?.description].filter(Boolean).join(' ') || 'ready';
    } catch {
      return 'ready'; // only a label
    }
  },
};

webffi.serve(setup(), self, { expose: EXPOSED, functions, transferResults: true });
