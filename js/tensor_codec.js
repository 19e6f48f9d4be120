// Tensors by value (see js/clone.js): a CPU tensor travels as its shape,
// dtype and a copy of its data, whose buffer is transferred when the caller
// asks for transfer; a tensor whose data lives on a device refuses, since
// that memory belongs to this runtime instance.
import { registerValueCodec } from './clone.js';

const CPU = 1;

registerValueCodec('ffi.Tensor', {
  encode(tensor, ctx) {
    if (tensor.device.deviceType !== CPU) {
      ctx.refuse(`its data lives on ${tensor.device}, in memory of this runtime instance; ` +
        "copy it to the CPU first (`await tensor.toDevice('cpu')`)");
    }
    const data = tensor.toTypedArray(); // out of wasm memory: a copy either way
    ctx.transfer?.push(data.buffer);
    return { shape: tensor.shape, dtype: String(tensor.dtype), data };
  },
  /** A tensor in the receiving runtime; without one, the plain description. */
  decode({ shape, dtype, data }, ctx) {
    return ctx.runtime ? ctx.runtime.tensor(data, { shape, dtype }) : { shape, dtype, data };
  },
});
