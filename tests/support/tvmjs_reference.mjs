// TVM's own web runtime (npm @mlc-ai/web-runtime, "tvmjs") running a model
// library the way web-llm drives it, as the reference webffi's results are
// compared with in the same test run: instantiate, initWebGPU, the VM,
// pipelines compiled ahead, parameters decoded by the library's own
// `tvmjs.array.decode_storage` into its tensor cache, then `prefill`.
import * as tvmjs from '@mlc-ai/web-runtime';

// tvmjs reads these WebGPU globals, which Node does not define.
globalThis.GPUBufferUsage ??= {
  MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, INDEX: 16, VERTEX: 32, UNIFORM: 64, STORAGE: 128,
  INDIRECT: 256, QUERY_RESOLVE: 512,
};
globalThis.GPUMapMode ??= { READ: 1, WRITE: 2 };
globalThis.GPUShaderStage ??= { VERTEX: 1, FRAGMENT: 2, COMPUTE: 4 };

/** tvmjs's instance over a model library's bytes (Uint8Array), as web-llm makes it. */
export async function instantiateTvmjs(wasm) {
  const wasi = tvmjs.createPolyfillWASI();
  // The library imports TVM's thread-pool hooks, which tvmjs leaves to its embedder.
  Object.assign(wasi.imports.env, {
    _ZN3tvm7runtime9threading15ResetThreadPoolEv: () => {},
    _ZN3tvm7runtime9threading10NumThreadsEv: () => 1,
  });
  return tvmjs.instantiate(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength), wasi, () => {});
}

/**
 * @param {object} o { wasm: Uint8Array, device: GPUDevice, cache: makeTensorCache's result,
 *   inputs: { ids, mask }, fn = 'prefill', repeat = 1, prebuild: compile every pipeline ahead (web-llm does) }
 * @returns {Promise<{ output: Float32Array, shape: number[], ms: number[] }>} the output
 *   and each call's time (ms: from the call to the result's bytes on the host)
 */
export async function runWithTvmjs({ wasm, device, cache, inputs, fn = 'prefill', repeat = 1, prebuild = true }) {
  const tvm = await instantiateTvmjs(wasm);
  tvm.initWebGPU(device);
  tvm.beginScope();
  try {
    const dev = tvm.webgpu();
    const vm = tvm.detachFromCurrentScope(tvm.createVirtualMachine(dev));
    if (prebuild) await tvm.asyncLoadWebGPUPipelines(vm.getInternalModule());
    const names = [];
    for (const shard of cache.index.records) {
      const shardBytes = cache.shards[shard.dataPath];
      for (const r of shard.records) {
        const cpu = tvm.empty(r.shape, r.dtype, tvm.cpu());
        tvm.ctx.arrayDecodeStorage(cpu, shardBytes.subarray(r.byteOffset, r.byteOffset + r.nbytes), r.format, r.dtype);
        const gpu = tvm.empty(r.shape, r.dtype, dev);
        gpu.copyFrom(cpu);
        tvm.tensorCacheUpdate(r.name, gpu, false);
        names.push(r.name);
      }
    }
    await dev.sync();
    const params = tvm.getParamsFromCacheByName(names);
    const L = inputs.ids.length;
    const ids = tvm.empty([1, L], 'int32', dev).copyFrom(inputs.ids);
    const mask = tvm.empty([1, L], 'int32', dev).copyFrom(inputs.mask);
    const f = vm.getFunction(fn);
    const ms = [];
    let output;
    let shape;
    for (let i = 0; i < repeat; i++) {
      tvm.beginScope();
      const t0 = performance.now();
      const out = f(ids, mask, params);
      shape = out.shape.slice();
      const host = tvm.empty(out.shape, out.dtype, tvm.cpu());
      host.copyFrom(out);
      await dev.sync();
      ms.push(performance.now() - t0);
      output = host.toArray().slice();
      tvm.endScope();
    }
    return { output, shape, ms };
  } finally {
    tvm.endScope();
    tvm.dispose();
  }
}
