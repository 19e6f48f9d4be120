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

/**
 * out = a OP b with broadcasting over at most 4 dimensions (see
 * broadcastPlan in kernels.js): d1..d3 are the inner output sizes, sa and sb
 * each input's element strides, outermost first, 0 where it repeats.
 */
export function broadcastWGSL(op, T) {
  return `${header(T)}
struct P { n: u32, aOff: u32, bOff: u32, oOff: u32, rowThreads: u32, d1: u32, d2: u32, d3: u32, sa: vec4u, sb: vec4u }
@group(0) @binding(0) var<storage, read> a: array<${T}>;
@group(0) @binding(1) var<storage, read> b: array<${T}>;
@group(0) @binding(2) var<storage, read_write> out: array<${T}>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(${ELEMENTWISE_WG})
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.y * p.rowThreads + g.x;
  if (i >= p.n) { return; }
  let r2 = i / p.d3;
  let r1 = r2 / p.d2;
  let at = vec4u(r1 / p.d1, r1 % p.d1, r2 % p.d2, i % p.d3);
  out[p.oOff + i] = a[p.aOff + dot(at, p.sa)] ${op} b[p.bOff + dot(at, p.sb)];
}
`;
}

/**
 * out[M,N] = a[M,K] x b[K,N]. A workgroup of 8x8 threads computes a 32x32
 * output tile, each thread a 4x4 block held in four vec4 accumulators (no
 * dynamically indexed arrays, which some compilers keep in memory). The
 * 32-wide K slices of a and b are staged in workgroup memory as vec4s, zero
 * padded at the edges; accumulation is f32 for f16 inputs too.
 */
export function matmulWGSL(T) {
  return `${header(T)}
struct P { M: u32, K: u32, N: u32, aOff: u32, bOff: u32, oOff: u32 }
@group(0) @binding(0) var<storage, read> a: array<${T}>;
@group(0) @binding(1) var<storage, read> b: array<${T}>;
@group(0) @binding(2) var<storage, read_write> out: array<${T}>;
@group(0) @binding(3) var<uniform> p: P;
var<workgroup> At: array<vec4<f32>, 256>; // [k * 8 + g]: a rows 4g..4g+3 at column k
var<workgroup> Bt: array<vec4<f32>, 256>; // [k * 8 + g]: b columns 4g..4g+3 at row k
fn loadA(r: u32, c: u32) -> f32 {
  if (r < p.M && c < p.K) { return f32(a[p.aOff + r * p.K + c]); }
  return 0.0;
}
fn loadB(r: u32, c: u32) -> f32 {
  if (r < p.K && c < p.N) { return f32(b[p.bOff + r * p.N + c]); }
  return 0.0;
}
@compute @workgroup_size(8, 8)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wid.y * 32u;
  let col0 = wid.x * 32u;
  let li = lid.y * 8u + lid.x;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  for (var k0 = 0u; k0 < p.K; k0 += 32u) {
    for (var e = li; e < 256u; e += 64u) {
      // Neighbouring threads read neighbouring elements of a row of a and of b.
      let ak = e % 32u;
      let ar = row0 + (e / 32u) * 4u;
      At[ak * 8u + e / 32u] = vec4(loadA(ar, k0 + ak), loadA(ar + 1u, k0 + ak), loadA(ar + 2u, k0 + ak), loadA(ar + 3u, k0 + ak));
      let bk = e / 8u;
      let bc = col0 + (e % 8u) * 4u;
      Bt[e] = vec4(loadB(k0 + bk, bc), loadB(k0 + bk, bc + 1u), loadB(k0 + bk, bc + 2u), loadB(k0 + bk, bc + 3u));
    }
    workgroupBarrier();
    for (var k = 0u; k < 32u; k++) {
      let av = At[k * 8u + lid.y];
      let bv = Bt[k * 8u + lid.x];
      acc0 += av.x * bv;
      acc1 += av.y * bv;
      acc2 += av.z * bv;
      acc3 += av.w * bv;
    }
    workgroupBarrier();
  }
  let r = row0 + lid.y * 4u;
  store(r, col0 + lid.x * 4u, acc0);
  store(r + 1u, col0 + lid.x * 4u, acc1);
  store(r + 2u, col0 + lid.x * 4u, acc2);
  store(r + 3u, col0 + lid.x * 4u, acc3);
}
fn store(r: u32, c: u32, v: vec4<f32>) {
  if (r >= p.M) { return; }
  for (var j = 0u; j < 4u; j++) {
    if (c + j < p.N) { out[p.oOff + r * p.N + c + j] = ${T}(v[j]); }
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
