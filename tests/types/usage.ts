// Compiled (not run) by tests/node/types.test.mjs: the public API as a
// TypeScript user writes it.
import { load, connect, encodeValue, decodeValue, RPCSessionTimeoutError, type Session, FFIError, FFITypeError, IndexError, registerError, RuntimeError, asFloat, type Runtime, type FFIFunction, type Tensor, type TensorView, type Backend, type BackendStatus } from 'webffi';

async function main(): Promise<number> {
  const rt: Runtime = await load({ logger: console });
  const addOne: FFIFunction = rt.getGlobal('testing.add_one');
  const n: number = addOne(41);
  const maybe: FFIFunction | null = rt.getGlobal('no.such', { optional: true });
  rt.registerGlobal('js.twice', (x: number) => 2 * x, { override: true });
  const names: string[] = rt.listGlobals();
  const removed: boolean = rt.removeGlobal('js.twice');
  const arr = rt.toFFI([1, 2, 3]);
  const len: number = arr.length;
  for (const item of arr) console.log(item);
  const dev: string = String(rt.device('webgpu:0'));
  const dt: string = rt.dtype('float32').toString();
  using f = rt.toFFI((a: number) => a + 1);
  rt.scope(() => addOne(asFloat(1)));
  class ScheduleError extends RuntimeError {}
  registerError('ScheduleError', ScheduleError);
  try {
    addOne('x');
  } catch (e) {
    if (e instanceof FFIError) console.log(e.kind, e.message, e.backtrace, e.extraContext);
    if (e instanceof FFITypeError) console.log(e.kind);
    if (e instanceof IndexError) console.log(e instanceof RangeError);
  }
  const data = encodeValue([1, 'x'], { transfer: [] });
  const back: unknown = decodeValue(data, { runtime: rt });
  const session: Session = await connect(new MessageChannel().port1, { timeout: 1000 });
  try {
    const r: number = await session.call('testing.add_one', [1], { signal: new AbortController().signal });
    console.log(r, back);
  } catch (e) {
    if (!(e instanceof RPCSessionTimeoutError)) throw e;
  }
  addOne.dispose();
  const t: Tensor = rt.tensor(new Float32Array([1, 2, 3]), { shape: [3] });
  const view = t.view() as Float32Array;
  const onGpu: Tensor = await t.toDevice('webgpu');
  const copy: Float32Array = await onGpu.data(new Float32Array(3));
  const ready: Backend | null = await rt.backends.ensure('webgpu');
  // Sharing the GPU with other libraries: the device, imports and exports.
  const gpuDevice = rt.gpuDevice;
  if (gpuDevice) {
    const shared: Runtime = await load({ gpuDevice });
    const imported: Tensor = await shared.tensorFromGPUBuffer(onGpu.gpuBuffer, { shape: [3], dtype: 'float32', byteOffset: 0, dispose: false });
    const size: number = imported.gpuBuffer.size;
    ready?.flush?.();
    console.log(size);
  }
  const statuses: BackendStatus[] = rt.backends.list();
  rt.empty([2, 2], 'float16').set(new Uint16Array(4));
  const keep = rt.toFFI((v: TensorView) => (v instanceof rt.TensorView ? v.toTensor() : null));
  const kept: Tensor | null = rt.getGlobal('testing.apply')(keep, t.asDLTensorPtr()) as Tensor | null;
  const rtOff: Runtime = await load({ autoloadBackends: false, backends: [(r: Runtime) => ({ name: 'x', init() {} })] });
  return view.length + copy.length + statuses.length + (ready ? 1 : 0) + (kept ? kept.size : 0) + rtOff.listGlobals().length + n + len + names.length + Number(removed) + dev.length + dt.length + (maybe ? 1 : 0) + f(1);
}

void main();
