// The worker side of bench/workers.bench.mjs: `sink` counts messages (and
// decodes them when told to) and reports when a batch is in; `echo` answers
// every message at once; `server` serves a runtime as a session; `gpu`
// serves a runtime with WebGPU as a session and, on the same port, a
// hand-written postMessage protocol doing the same GPU work (messages with
// a `raw` field: the session ignores them).
// workerData.root names another checkout to take the runtime from
// (bench/workers_paired.mjs); by default this tree's.
import { parentPort, workerData } from 'node:worker_threads';

const js = workerData.root ? `file://${workerData.root.replace(/\/$/, '')}/js/` : new URL('../js/', import.meta.url).href;
const { decodeValue, serve, load } = await import(`${js}index.js`);
const { loadTesting } = await import(`${js}testing.js`);

if (workerData.role === 'sink') {
  let count = 0;
  let keep = null;
  parentPort.on('message', (m) => {
    if (m.batch !== undefined) {
      count = 0;
      return;
    }
    keep = m.encoded ? decodeValue(m.data) : m.data;
    if (++count === workerData.batch) parentPort.postMessage(keep === undefined ? 0 : count);
  });
} else if (workerData.role === 'echo') {
  parentPort.on('message', (m) => parentPort.postMessage({ wrpc: 'ok', id: m.id, value: 2 }));
} else if (workerData.role === 'gpu') {
  const rt = await load();
  await rt.backends.ensure('webgpu');
  const matmul = rt.getGlobal('webgpu.matmul');
  // The hand-written protocol: tensors by id in a Map, results posted with their id.
  const tensors = new Map();
  let next = 1;
  parentPort.on('message', async (m) => {
    if (m.raw === undefined) return;
    try {
      switch (m.raw) {
        case 'tensor': {
          const cpu = rt.tensor(m.data, { shape: m.shape });
          const g = await cpu.toDevice('webgpu');
          cpu.dispose();
          tensors.set(next, g);
          parentPort.postMessage({ id: m.id, ref: next++, shape: g.shape });
          return;
        }
        case 'matmul': {
          const out = matmul(tensors.get(m.a), tensors.get(m.b));
          tensors.set(next, out);
          parentPort.postMessage({ id: m.id, ref: next++, shape: out.shape, dtype: String(out.dtype), device: String(out.device) });
          return;
        }
        case 'free':
          tensors.get(m.ref)?.dispose();
          tensors.delete(m.ref);
          return;
        case 'data': {
          const data = await tensors.get(m.ref).data();
          parentPort.postMessage({ id: m.id, data }, [data.buffer]);
          return;
        }
        case 'buffer': {
          // A prepared buffer of the same size, transferred: postMessage alone.
          const data = new Uint8Array(m.bytes);
          parentPort.postMessage({ id: m.id, data }, [data.buffer]);
          return;
        }
        default:
      }
    } catch (e) {
      parentPort.postMessage({ id: m.id, error: String(e) });
    }
  });
  /** A long GPU job: `rounds` chained matmuls of an n x n matrix, then its sum read back. */
  const longJob = async function (n, rounds) {
    const cpu = rt.tensor(new Float32Array(n * n).fill(1 / n), { shape: [n, n] });
    let x = await cpu.toDevice('webgpu');
    cpu.dispose();
    const t0 = performance.now();
    for (let i = 0; i < rounds; i++) {
      const y = matmul(x, x);
      x.dispose();
      x = y;
      await rt.backends.get('webgpu').engine.sync(); // one job at a time, as a model's layers would run
    }
    const data = await x.data();
    x.dispose();
    return [performance.now() - t0, data[0]];
  };
  serve(rt, parentPort, { expose: ['webgpu.*'], functions: { 'bench.long_job': longJob } });
} else {
  serve(load().then(loadTesting), parentPort, { expose: ['testing.add_one'] });
}
