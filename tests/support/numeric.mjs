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
