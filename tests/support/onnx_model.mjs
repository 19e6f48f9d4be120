// Small ONNX models made by the tests themselves: a protobuf writer for the
// few ModelProto fields a graph of elementwise nodes needs (field numbers
// from onnx/onnx.proto). Runs in Node and in the browser.

const enc = new TextEncoder();

/** Protobuf wire format: varints, length-delimited fields, packed floats. */
class Writer {
  constructor() {
    this.parts = [];
  }

  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v));
    const bytes = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n) b |= 0x80;
      bytes.push(b);
    } while (n);
    this.parts.push(Uint8Array.from(bytes));
    return this;
  }

  key(field, wire) {
    return this.varint((field << 3) | wire);
  }

  int(field, v) {
    return this.key(field, 0).varint(v);
  }

  bytes(field, data) {
    this.key(field, 2).varint(data.byteLength);
    this.parts.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return this;
  }

  string(field, s) {
    return this.bytes(field, enc.encode(s));
  }

  message(field, w) {
    return this.bytes(field, w.finish());
  }

  float(field, v) {
    this.key(field, 5);
    this.parts.push(new Uint8Array(Float32Array.of(v).buffer));
    return this;
  }

  finish() {
    const n = this.parts.reduce((a, p) => a + p.byteLength, 0);
    const out = new Uint8Array(n);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }
}

/** ONNX TensorProto.DataType codes. */
export const ONNX_TYPES = { float32: 1, int32: 6, int64: 7, float16: 10 };

function valueInfo(name, dtype, shape) {
  const dims = new Writer();
  for (const d of shape) dims.message(1, typeof d === 'string' ? new Writer().string(2, d) : new Writer().int(1, d));
  const tensorType = new Writer().int(1, ONNX_TYPES[dtype]).message(2, dims);
  return new Writer().string(1, name).message(2, new Writer().message(1, tensorType));
}

function attribute(name, value) {
  const w = new Writer().string(1, name);
  if (Number.isInteger(value)) return w.int(3, value).int(20, 2);
  if (typeof value === 'number') return w.float(2, value).int(20, 1);
  if (Array.isArray(value)) {
    for (const v of value) w.int(8, v);
    return w.int(20, 7);
  }
  throw new TypeError(`onnx attribute ${name}: unsupported value ${value}`);
}

/**
 * An ONNX model (its bytes).
 * @param {object} graph
 * @param {Array<[string, string, (number|string)[]]>} graph.inputs [name, dtype, shape]
 * @param {Array<[string, string, (number|string)[]]>} graph.outputs
 * @param {Array<{ op: string, inputs: string[], outputs: string[], attributes?: object }>} graph.nodes
 * @param {Array<[string, Float32Array, number[]]>} [graph.initializers] [name, data, shape]
 * @param {number} [graph.opset] default 17
 */
export function onnxModel({ inputs, outputs, nodes, initializers = [], opset = 17 }) {
  const g = new Writer();
  nodes.forEach((n, i) => {
    const node = new Writer();
    for (const x of n.inputs) node.string(1, x);
    for (const y of n.outputs) node.string(2, y);
    node.string(3, `n${i}`).string(4, n.op);
    for (const [k, v] of Object.entries(n.attributes ?? {})) node.message(5, attribute(k, v));
    g.message(1, node);
  });
  g.string(2, 'webffi_test');
  for (const [name, data, shape] of initializers) {
    const t = new Writer();
    for (const d of shape) t.int(1, d);
    t.int(2, ONNX_TYPES.float32).string(8, name).bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    g.message(5, t);
  }
  for (const [name, dtype, shape] of inputs) g.message(11, valueInfo(name, dtype, shape));
  for (const [name, dtype, shape] of outputs) g.message(12, valueInfo(name, dtype, shape));
  return new Writer()
    .int(1, 8) // ir_version
    .string(2, 'webffi-tests')
    .message(7, g)
    .message(8, new Writer().string(1, '').int(2, opset))
    .finish();
}
