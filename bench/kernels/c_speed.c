/* The kernels of bench/c_speed.mjs (c_speed.h). */
#include "c_speed.h"

#include <string.h>

void c_speed_fill(float* x, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t h = (uint32_t)i * 0x9e3779b1u ^ seed;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    x[i] = (float)(int32_t)(h >> 8) * (1.0f / 8388608.0f) - 1.0f; /* 24 bits: exact in float */
  }
}

double c_speed_checksum(const float* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

/*
 * Over k in tiles of KB, so the KB rows of b a tile reads (256 KiB at
 * n = 1024) stay in cache while the rows of the range pass over them; the
 * inner loop is c[i][j] += a[i][k] * b[k][j] over j, which compilers
 * vectorise as it is. (Tiling j as well was slower here, native and wasm.)
 */
#ifndef KB
#define KB 64
#endif

void c_speed_matmul_rows(const float* a, const float* b, float* c, int n, int begin, int end) {
  for (int i = begin; i < end; ++i) memset(c + (int64_t)i * n, 0, sizeof(float) * (size_t)n);
  for (int k0 = 0; k0 < n; k0 += KB) {
    const int k1 = k0 + KB < n ? k0 + KB : n;
    for (int i = begin; i < end; ++i) {
      float* restrict ci = c + (int64_t)i * n;
      for (int k = k0; k < k1; ++k) {
        const float aik = a[(int64_t)i * n + k];
        const float* restrict bk = b + (int64_t)k * n;
        for (int j = 0; j < n; ++j) ci[j] += aik * bk[j];
      }
    }
  }
}

void c_speed_sum_blocks(const float* x, int64_t n, float* block_sums, int64_t begin, int64_t end) {
  for (int64_t block = begin; block < end; ++block) {
    const int64_t from = block * C_SPEED_SUM_BLOCK;
    const int64_t to = from + C_SPEED_SUM_BLOCK < n ? from + C_SPEED_SUM_BLOCK : n;
    float lanes[16] = {0};
    int64_t i = from;
    for (; i + 16 <= to; i += 16) {
      for (int l = 0; l < 16; ++l) lanes[l] += x[i + l];
    }
    for (int l = 0; i < to; ++i, ++l) lanes[l] += x[i];
    float s = 0;
    for (int l = 0; l < 16; ++l) s += lanes[l];
    block_sums[block] = s;
  }
}

double c_speed_sum_combine(const float* block_sums, int64_t num_blocks) {
  double s = 0;
  for (int64_t i = 0; i < num_blocks; ++i) s += block_sums[i];
  return s;
}
