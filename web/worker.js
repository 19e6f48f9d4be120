// A classic worker hosting its own runtime and the demo's C kernel; the
// page calls it through a session (web/demo.js). Tensors travel by value
// both ways, so the page keeps its main thread free while C multiplies.
importScripts('../dist/webffi.iife.js');

// What the page calls here: a peer reaches only the globals a server exposes.
const EXPOSED = ['demo.matmul', 'demo.matmul_timed'];

async function setup() {
  const rt = await webffi.load({ autoloadBackends: false }); // the worker needs no GPU
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

webffi.serve(setup(), self, { expose: EXPOSED, transferResults: true });
