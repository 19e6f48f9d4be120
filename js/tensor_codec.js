// Tensors by value (see js/clone.js): a CPU tensor travels as its shape,
// dtype and a copy of its data, whose buffer is transferred (it is a copy no
// one else holds) wherever the sender passes a list for such buffers; a tensor whose data lives on a device refuses, since
// that memory belongs to this runtime instance. Received descriptions are
// checked (shape, dtype text, data kind, element count) before any tensor is
// made; sizes are compared without arithmetic that can overflow.
import { registerValueCodec, plainFields, LIMITS } from './clone.js';

const CPU = 1;
/** DLPack's ndim is an int32; no real tensor has more dimensions than this. */
const MAX_NDIM = 64;

registerValueCodec('ffi.Tensor', {
  encode(tensor, ctx) {
    if (tensor.device.deviceType !== CPU) {
      ctx.refuse(`its data lives on ${tensor.device}, in memory of this runtime instance; ` +
        "copy it to the CPU first (`await tensor.toDevice('cpu')`)");
    }
    const data = tensor.toTypedArray(); // out of wasm memory: a copy of our own, free to move
    ctx.fresh?.push(data.buffer);
    return { shape: tensor.shape, dtype: String(tensor.dtype), data };
  },
  /** A tensor in the receiving runtime; without one, the plain description. */
  decode(encoded, ctx) {
    const { shape, dtype, data } = description(encoded, ctx);
    return ctx.runtime ? ctx.runtime.tensor(data, { shape, dtype }) : { shape, dtype, data };
  },
});

function description(encoded, ctx) {
  const fields = Object.fromEntries(plainFields(encoded, 'a tensor'));
  for (const k of Object.keys(fields)) {
    if (k !== 'shape' && k !== 'dtype' && k !== 'data') throw ctx.invalid(`a tensor has no field \`${k}\``);
  }
  const { shape, dtype, data } = fields;
  if (!ArrayBuffer.isView(data) || data instanceof DataView) throw ctx.invalid('the data of a tensor is a typed array');
  if (typeof dtype !== 'string' || dtype === '' || dtype.length > LIMITS.name) throw ctx.invalid('the dtype of a tensor is a short string');
  if (!Array.isArray(shape) || shape.length > MAX_NDIM) throw ctx.invalid(`the shape of a tensor is an array of at most ${MAX_NDIM} dimensions`);
  const dims = new Array(shape.length);
  let count = 1;
  for (let i = 0; i < dims.length; i++) {
    const n = shape[i];
    if (!Number.isSafeInteger(n) || n < 0) {
      // Only a number is shown: the text of untrusted data can be arbitrarily costly (a sparse array's join).
      throw ctx.invalid(`dimension ${i} of a tensor is a non-negative integer, not ${typeof n === 'number' ? n : n === null ? 'null' : Array.isArray(n) ? 'an array' : `a value of type ${typeof n}`}`);
    }
    dims[i] = n;
    // Stays exact: count never exceeds data.length (a safe integer) before this multiplication.
    count *= n;
    if (count > data.length) break;
  }
  if (count !== data.length) {
    throw ctx.invalid(`a tensor of shape [${dims.map((n) => n ?? '?').join(', ')}] does not hold ${data.length} elements`);
  }
  return { shape: dims, dtype, data };
}
