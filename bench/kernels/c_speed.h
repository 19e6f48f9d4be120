/*
 * The kernels of bench/c_speed.mjs: plain C11 that knows nothing of webffi,
 * compiled natively (gcc, c_speed_native.c) and to wasm (webffi build,
 * c_speed_module.c) from this one source. Each kernel covers a range of
 * tasks [begin, end) (rows of the matmul, blocks of the sum), so a
 * parallel-for splits the work by task (c_speed_task_range) and the result
 * does not depend on how many threads ran it.
 */
#ifndef WEBFFI_BENCH_C_SPEED_H_
#define WEBFFI_BENCH_C_SPEED_H_

#include <stdint.h>

/* Floats per task of the sum: 64 Ki floats (256 KiB), 256 tasks over 16 Mi floats. */
#define C_SPEED_SUM_BLOCK 65536

/* x[i] for i in [0, n): values in [-1, 1) from a hash of (seed, i), the same bits everywhere. */
void c_speed_fill(float* x, int64_t n, uint32_t seed);

/* The sum of x[0, n) in double, in index order: a checksum equal wherever x is. */
double c_speed_checksum(const float* x, int64_t n);

/* Rows [begin, end) of c = a b, for n x n row-major float32 matrices. */
void c_speed_matmul_rows(const float* a, const float* b, float* c, int n, int begin, int end);

/*
 * The sums of blocks [begin, end) of x[0, n) (C_SPEED_SUM_BLOCK floats each,
 * the last one shorter) into block_sums[begin, end): 16 running sums per
 * block, each over every 16th float, so a compiler vectorises it without
 * reordering float additions (scalar and SIMD give the same bits).
 */
void c_speed_sum_blocks(const float* x, int64_t n, float* block_sums, int64_t begin, int64_t end);

/* The sum of the block sums, in order (the memory-bound kernel's result). */
double c_speed_sum_combine(const float* block_sums, int64_t num_blocks);

/* Task `task` of `num_tasks` over `count` items: [*begin, *end), contiguous, in order. */
static inline void c_speed_task_range(int64_t count, int task, int num_tasks, int64_t* begin,
                                      int64_t* end) {
  *begin = count * task / num_tasks;
  *end = count * (task + 1) / num_tasks;
}

#endif /* WEBFFI_BENCH_C_SPEED_H_ */
