// Compiled (not run) by tests/node/types.test.mjs under every configuration,
// including plain es2022 with neither the DOM library nor @types/node: the
// API alone, with no host globals.
import {
  load, encodeValue, decodeValue, FFIError, RuntimeError, RPCError, OpError, type Runtime,
  type Tensor, type ReflectedObject, type TransferItem,
} from 'webffi';
import { loadTesting, TESTING_MODULE_URL } from 'webffi/js/testing.js';

interface TestIntPair extends ReflectedObject {
  a: number;
  b: number;
  sum(): number;
}

export async function portable(): Promise<number> {
  const rt: Runtime = await loadTesting(await load({ autoloadBackends: false }));
  const again: Runtime = await loadTesting(rt, TESTING_MODULE_URL.href);
  const f32 = rt.tensor(new Float32Array([1, 2, 3]));
  const view: Float32Array = f32.view();                    // no cast: the dtype is known
  const copy: Float32Array = await f32.data();
  const i64 = rt.empty([4], 'int64');
  const big: BigInt64Array = i64.toTypedArray();
  const half: Tensor<Uint16Array> = rt.tensor(new Uint16Array(2), { dtype: 'float16' });
  const clamped: Uint8Array = rt.tensor(new Uint8ClampedArray(4)).view();
  const anyTensor: Tensor = f32;
  const Pair = rt.objectClass<TestIntPair>('testing.TestIntPair');
  const pair: TestIntPair = Pair.__ffi_init__(1, 2);
  const total: number = pair.sum() + pair.a + pair.b;
  const transfer: TransferItem[] = [];
  const data = encodeValue([view], { transfer });
  const back: unknown = decodeValue(data);
  try {
    rt.getGlobal('testing.test_raise_error')('OpError', 'x');
  } catch (e) {
    if (e instanceof OpError && e instanceof RuntimeError && e instanceof FFIError) return e.kind.length;
    if (e instanceof RPCError) throw e;
  }
  pair.dispose();
  return view.length + copy.length + big.length + half.size + clamped.length + anyTensor.ndim + total +
    (back === null ? 0 : 1) + (again === rt ? 0 : 1);
}

// webffi/client: the session side alone; dispose and the lookup rule.
import {
  connectRuntime as connectClient, type RemoteRuntime, type RemoteFunction, SESSION_LIMITS, ValueError as ClientValueError,
  type MessagePortLike,
} from 'webffi/client';

export async function client(port: MessagePortLike, rt: Runtime): Promise<number> {
  const remote: RemoteRuntime = await connectClient(port, { handshakeTimeout: SESSION_LIMITS.handshake });
  const sum: number = await remote.getGlobal('my.add')(1, 2);
  remote[Symbol.dispose]();
  const mod = await rt.loadModule(new Uint8Array(8));
  const f = mod.getFunction('f');                          // FFIFunction: a miss throws
  const g = mod.getFunction('g', { optional: true });       // FFIFunction | null
  const remoteModule = await remote.loadModule(new Uint8Array(8));
  const h: RemoteFunction = await remoteModule.getFunction('h');
  const k: RemoteFunction | null = await remoteModule.getFunction('k', { optional: true, timeout: 10 });
  rt.dispose();
  rt[Symbol.dispose]();
  const gone: boolean = rt.disposed;
  const e: unknown = new ClientValueError('x');
  return sum + (f === g ? 1 : 0) + (h === k ? 1 : 0) + (gone ? 1 : 0) + (e instanceof Error ? 1 : 0);
}
