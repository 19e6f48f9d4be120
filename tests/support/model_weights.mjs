// Seeded random weights shaped by a model library's `_metadata`, as
// web-llm's tensor cache (tensor-cache.json and raw shards), since the real
// weights live on HuggingFace, which tests cannot reach; and the inputs the
// tests feed. No Node APIs: pages import it too.

/** A deterministic generator of floats in [-0.5, 0.5) (LCG: the same bits in every engine). */
export function seeded(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

/**
 * Weights for `params` (from `_metadata`): layer-norm scales 1, the rest
 * small random values, packed into shards of at most shardBytes as
 * web-llm's tensor cache. Records listed in `bf16` are stored f32-to-bf16.
 * @returns {{ index: object, shards: Record<string, Uint8Array>, values: Map<string, Float32Array> }}
 */
export function makeTensorCache(params, { seed = 42, scale = 0.1, shardBytes = 32 << 20, bf16 = new Set() } = {}) {
  const next = seeded(seed);
  const shards = {};
  const index = { metadata: { ParamSize: params.length, ParamBytes: 0 }, records: [] };
  const values = new Map();
  let current = null;
  const close = () => {
    if (!current) return;
    const bytes = new Uint8Array(current.size);
    let at = 0;
    for (const part of current.parts) {
      bytes.set(part, at);
      at += part.byteLength;
    }
    shards[current.entry.dataPath] = bytes;
    current.entry.nbytes = bytes.byteLength;
    index.records.push(current.entry);
    current = null;
  };
  for (const p of params) {
    if (p.dtype !== 'float32') throw new Error(`makeTensorCache: ${p.name} is ${p.dtype}; only float32 weights are made`);
    const count = p.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(count);
    if (/LayerNorm\.weight$|norm\.weight$/.test(p.name)) data.fill(1);
    else for (let i = 0; i < count; i++) data[i] = next() * scale;
    let stored;
    let format = 'raw';
    if (bf16.has(p.name)) {
      // bfloat16: the high half of each float32 (values then read back exactly)
      const words = new Uint32Array(data.buffer);
      const half = new Uint16Array(count);
      for (let i = 0; i < count; i++) {
        half[i] = words[i] >>> 16;
        words[i] = half[i] << 16;
      }
      stored = new Uint8Array(half.buffer);
      format = 'f32-to-bf16';
    } else {
      stored = new Uint8Array(data.buffer);
    }
    values.set(p.name, data);
    if (current && current.size + stored.byteLength > shardBytes) close();
    if (!current) {
      const dataPath = `params_shard_${index.records.length}.bin`;
      current = { entry: { dataPath, format: 'raw-shard', nbytes: 0, records: [] }, parts: [], size: 0 };
    }
    current.entry.records.push({
      name: p.name, shape: p.shape, dtype: p.dtype, format, nbytes: stored.byteLength, byteOffset: current.size,
    });
    current.parts.push(stored);
    current.size += stored.byteLength;
    index.metadata.ParamBytes += stored.byteLength;
  }
  close();
  return { index, shards, values };
}

/** Token ids and an attention mask of length L (ids below vocab). */
export function makeInputs(L, vocab = 30522) {
  const ids = new Int32Array(L);
  for (let i = 0; i < L; i++) ids[i] = (i * 997 + 101) % vocab;
  return { ids, mask: new Int32Array(L).fill(1) };
}
