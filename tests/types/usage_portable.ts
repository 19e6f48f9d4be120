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
