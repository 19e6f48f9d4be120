// WGSL sources of the kernels, parameterised by element type (f32 or f16).
// Every kernel binds whole-tensor storage windows and receives element
// offsets and sizes in a uniform struct `p` (binding after the tensors).
// Work larger than one grid row is spread over y: index = y * row + x.

export const ELEMENTWISE_WG = 64;
export const REDUCE_WG = 64;
export const MATMUL_TILE = 32; // 8x8 threads, 4x4 outputs each

function header(T) {
  return T === 'f16' ? 'enable f16;\n' : '';
}

/** out = a OP b, or a OP scalar. */
export function elementwiseWGSL(op, T, scalar) {
  const rhs = scalar ? `${T}(p.scalar)` : 'b[p.bOff + i]';
  const bInput = scalar ? '' : `@group(0) @binding(1) var<storage, read> b: array<${T}>;\n`;
  const o = scalar ? 1 : 2;
  return `${header(T)}
struct P { n: u32, aOff: u32, bOff: u32, oOff: u32, rowThreads: u32, scalar: f32 }
@group(0) @binding(0) var<storage, read> a: array<${T}>;
${bInput}@group(0) @binding(${o}) var<storage, read_write> out: array<${T}>;
@group(0) @binding(${o + 1}) var<uniform> p: P;
@compute @workgroup_size(${ELEMENTWISE_WG})
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.y * p.rowThreads + g.x;
  if (i >= p.n) { return; }
  out[p.oOff + i] = a[p.aOff + i] ${op} ${rhs};
}
`;
}

/** out[M,N] = a[M,K] x b[K,N]; 32x32 output tiles staged in workgroup memory. */
export function matmulWGSL(T) {
  return `${header(T)}
struct P { M: u32, K: u32, N: u32, aOff: u32, bOff: u32, oOff: u32 }
@group(0) @binding(0) var<storage, read> a: array<${T}>;
@group(0) @binding(1) var<storage, read> b: array<${T}>;
@group(0) @binding(2) var<storage, read_write> out: array<${T}>;
@group(0) @binding(3) var<uniform> p: P;
var<workgroup> At: array<array<${T}, 32>, 32>; // [row][k]
var<workgroup> Bt: array<array<${T}, 32>, 32>; // [k][col]
@compute @workgroup_size(8, 8)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wid.y * 32u;
  let col0 = wid.x * 32u;
  let li = lid.y * 8u + lid.x;
  var acc: array<array<f32, 4>, 4>; // f32 accumulation for f16 too
  for (var k0 = 0u; k0 < p.K; k0 += 32u) {
    for (var e = li; e < 1024u; e += 64u) {
      let r = e / 32u;
      let c = e % 32u;
      var av = ${T}(0);
      if (row0 + r < p.M && k0 + c < p.K) { av = a[p.aOff + (row0 + r) * p.K + k0 + c]; }
      At[r][c] = av;
      var bv = ${T}(0);
      if (k0 + r < p.K && col0 + c < p.N) { bv = b[p.bOff + (k0 + r) * p.N + col0 + c]; }
      Bt[r][c] = bv;
    }
    workgroupBarrier();
    for (var k = 0u; k < 32u; k++) {
      var bk: array<f32, 4>;
      for (var j = 0u; j < 4u; j++) { bk[j] = f32(Bt[k][lid.x * 4u + j]); }
      for (var i = 0u; i < 4u; i++) {
        let ak = f32(At[lid.y * 4u + i][k]);
        for (var j = 0u; j < 4u; j++) { acc[i][j] += ak * bk[j]; }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    let r = row0 + lid.y * 4u + i;
    for (var j = 0u; j < 4u; j++) {
      let c = col0 + lid.x * 4u + j;
      if (r < p.M && c < p.N) { out[p.oOff + r * p.N + c] = ${T}(acc[i][j]); }
    }
  }
}
`;
}

/**
 * Reduces x viewed as [outer, r, inner] over chunks of the middle axis:
 * out[o, c, i] = reduce(x[o, c*chunk .. min((c+1)*chunk, r), i]), one
 * workgroup per output element. Accumulates in f32; TI/TO are the input
 * and output element types (partials between passes are f32).
 */
export function reduceWGSL(kind, TI, TO) {
  const combine = kind === 'sum' ? (x, y) => `${x} + ${y}` : (x, y) => `max(${x}, ${y})`;
  const identity = kind === 'sum' ? '0.0' : 'bitcast<f32>(p.negInfBits)';
  return `${header(TI === 'f16' || TO === 'f16' ? 'f16' : 'f32')}
struct P { outer: u32, r: u32, inner: u32, chunk: u32, nChunks: u32, xOff: u32, oOff: u32, rowGroups: u32, negInfBits: u32 }
@group(0) @binding(0) var<storage, read> x: array<${TI}>;
@group(0) @binding(1) var<storage, read_write> out: array<${TO}>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> partial: array<f32, ${REDUCE_WG}>;
@compute @workgroup_size(${REDUCE_WG})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let o = wid.y * p.rowGroups + wid.x;
  if (o >= p.outer * p.nChunks * p.inner) { return; }
  let i = o % p.inner;
  let c = (o / p.inner) % p.nChunks;
  let base = p.xOff + (o / (p.inner * p.nChunks)) * p.r * p.inner + i;
  let end = min((c + 1u) * p.chunk, p.r);
  var acc = ${identity};
  for (var k = c * p.chunk + lid.x; k < end; k += ${REDUCE_WG}u) {
    acc = ${combine('acc', `f32(x[base + k * p.inner])`)};
  }
  partial[lid.x] = acc;
  workgroupBarrier();
  for (var s = ${REDUCE_WG / 2}u; s > 0u; s >>= 1u) {
    if (lid.x < s) { partial[lid.x] = ${combine('partial[lid.x]', 'partial[lid.x + s]')}; }
    workgroupBarrier();
  }
  if (lid.x == 0u) { out[p.oOff + o] = ${TO}(partial[0]); }
}
`;
}

/** Numerically stable softmax over rows of length cols, one workgroup per row. */
export function softmaxWGSL(T) {
  return `${header(T)}
struct P { rows: u32, cols: u32, xOff: u32, oOff: u32, rowGroups: u32, negInfBits: u32 }
@group(0) @binding(0) var<storage, read> x: array<${T}>;
@group(0) @binding(1) var<storage, read_write> out: array<${T}>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> partial: array<f32, ${REDUCE_WG}>;
fn combine(lid: u32, useMax: bool) -> f32 {
  workgroupBarrier();
  for (var s = ${REDUCE_WG / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) {
      if (useMax) { partial[lid] = max(partial[lid], partial[lid + s]); }
      else { partial[lid] = partial[lid] + partial[lid + s]; }
    }
    workgroupBarrier();
  }
  let v = partial[0];
  workgroupBarrier();
  return v;
}
@compute @workgroup_size(${REDUCE_WG})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row = wid.y * p.rowGroups + wid.x;
  if (row >= p.rows) { return; }
  let xb = p.xOff + row * p.cols;
  let ob = p.oOff + row * p.cols;
  var m = bitcast<f32>(p.negInfBits);
  for (var k = lid.x; k < p.cols; k += ${REDUCE_WG}u) { m = max(m, f32(x[xb + k])); }
  partial[lid.x] = m;
  let rowMax = combine(lid.x, true);
  var sum = 0.0;
  for (var k = lid.x; k < p.cols; k += ${REDUCE_WG}u) { sum += exp(f32(x[xb + k]) - rowMax); }
  partial[lid.x] = sum;
  let scale = 1.0 / combine(lid.x, false);
  for (var k = lid.x; k < p.cols; k += ${REDUCE_WG}u) { out[ob + k] = ${T}(exp(f32(x[xb + k]) - rowMax) * scale); }
}
`;
}
