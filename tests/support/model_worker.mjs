// A worker that serves a model-library runtime (Node worker_threads): the
// library from workerData.library, weights from the tensor cache in
// workerData.weights, and `model.embed(ids, mask)` running prefill there.
import { parentPort, workerData } from 'node:worker_threads';
import { load, serve } from '../../js/index.js';
import { RelaxVM } from '../../js/model_library.js';

const rt = await load({ wasm: workerData.library, logger: { log() {}, warn() {} } });
const vm = await RelaxVM.create(rt);
await vm.loadParams(workerData.weights);
const prefill = vm.getFunction('prefill');

serve(rt, parentPort, {
  expose: ['testing.*', 'model.*'],
  functions: {
    /** Embeddings of one sequence, computed on this worker's GPU, returned by value. */
    async 'model.embed'(ids, mask) {
      const L = ids.length;
      const a = rt.empty([1, L], 'int32', 'webgpu').set(Int32Array.from(ids));
      const b = rt.empty([1, L], 'int32', 'webgpu').set(Int32Array.from(mask));
      const out = prefill(a, b, vm.params);
      try {
        return { shape: out.shape, data: await out.data() };
      } finally {
        for (const t of [a, b, out]) t.dispose();
      }
    },
  },
});
