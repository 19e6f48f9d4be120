// Numeric helpers shared by the GPU test suites (Node and browsers).

/** Deterministic values in [-2, 2) (a small LCG, so every host sees the same data). */
export function randomFloats(n, seed = 1) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 4 - 2;
  }
  return out;
}

/** Elementwise |actual - expected| <= atol + rtol * |expected|, same lengths. */
export function assertClose(actual, expected, what, { rtol = 1e-5, atol = 1e-6 } = {}) {
  if (actual.length !== expected.length) {
    throw new Error(`assertion failed: ${what} length: expected ${expected.length}, got ${actual.length}`);
  }
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    const a = actual[i];
    if (!(Math.abs(a - e) <= atol + rtol * Math.abs(e))) {
      throw new Error(`${what} element ${i}: got ${a}, expected ${e} (rtol ${rtol}, atol ${atol})`);
    }
  }
}

/**
 * out = f(x, y) with NumPy broadcasting of shapes sx and sy (right-aligned,
 * size-1 dimensions repeat): { shape, data } computed index by index.
 */
export function broadcastRef(f, x, sx, y, sy) {
  const rank = Math.max(sx.length, sy.length);
  const pad = (s) => [...new Array(rank - s.length).fill(1), ...s];
  const [px, py] = [pad(sx), pad(sy)];
  const shape = px.map((d, i) => (d === 1 ? py[i] : d));
  const n = shape.reduce((p, q) => p * q, 1);
  const data = new Float64Array(n);
  const at = new Array(rank).fill(0);
  for (let k = 0; k < n; k++) {
    let ix = 0;
    let iy = 0;
    for (let d = 0; d < rank; d++) {
      ix = ix * px[d] + (px[d] === 1 ? 0 : at[d]);
      iy = iy * py[d] + (py[d] === 1 ? 0 : at[d]);
    }
    data[k] = f(x[ix], y[iy]);
    for (let d = rank - 1; d >= 0 && ++at[d] === shape[d]; d--) at[d] = 0;
  }
  return { shape, data };
}
