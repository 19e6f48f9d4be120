/*
 * The native rows of bench/c_speed.mjs: the kernels of c_speed.c on 1 and 2
 * threads (pthreads, one task per thread), each timed as the fastest of
 * REPS samples of BATCH runs (as bench/c_speed_bench.mjs times the wasm).
 * Prints one JSON object per row.
 * Usage: c_speed_native MATMUL_REPS SUM_REPS SUM_BATCH [THREADS...]
 */
#define _ISOC11_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "c_speed.h"

enum { N = 1024 };
#define SUM_N (16 * 1024 * 1024)

typedef struct {
  int kernel; /* 0: matmul, 1: sum */
  int task, num_tasks;
  const float *a, *b;
  float* c;
} Task;

static void* run_task(void* arg) {
  const Task* t = arg;
  int64_t begin, end;
  if (t->kernel == 0) {
    c_speed_task_range(N, t->task, t->num_tasks, &begin, &end);
    c_speed_matmul_rows(t->a, t->b, t->c, N, (int)begin, (int)end);
  } else {
    const int64_t blocks = (SUM_N + C_SPEED_SUM_BLOCK - 1) / C_SPEED_SUM_BLOCK;
    c_speed_task_range(blocks, t->task, t->num_tasks, &begin, &end);
    c_speed_sum_blocks(t->a, SUM_N, t->c, begin, end);
  }
  return NULL;
}

/* One run of a kernel on `threads` threads (the caller's is the first); ns. */
static double run(int kernel, int threads, const float* a, const float* b, float* c) {
  pthread_t ids[64];
  Task tasks[64];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int t = 0; t < threads; ++t) tasks[t] = (Task){kernel, t, threads, a, b, c};
  for (int t = 1; t < threads; ++t) pthread_create(&ids[t], NULL, run_task, &tasks[t]);
  run_task(&tasks[0]);
  for (int t = 1; t < threads; ++t) pthread_join(ids[t], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MATMUL_REPS SUM_REPS SUM_BATCH [THREADS...]\n", argv[0]);
    return 2;
  }
  const int reps[2] = {atoi(argv[1]), atoi(argv[2])};
  const int batch[2] = {1, atoi(argv[3]) > 0 ? atoi(argv[3]) : 1};
  /* aligned to a cache line, as tensors are in wasm: an unaligned 64-byte
     load (AVX-512) spans two lines, which made the sum 1.7x slower */
  float* a = aligned_alloc(64, sizeof(float) * N * N);
  float* b = aligned_alloc(64, sizeof(float) * N * N);
  float* c = aligned_alloc(64, sizeof(float) * N * N);
  float* x = aligned_alloc(64, sizeof(float) * SUM_N);
  float* sums = aligned_alloc(64, sizeof(float) * (SUM_N / C_SPEED_SUM_BLOCK + 64));
  if (!a || !b || !c || !x || !sums) return 1;
  c_speed_fill(a, (int64_t)N * N, 1);
  c_speed_fill(b, (int64_t)N * N, 2);
  c_speed_fill(x, SUM_N, 3);
  const int64_t blocks = (SUM_N + C_SPEED_SUM_BLOCK - 1) / C_SPEED_SUM_BLOCK;
  for (int arg = 4; arg < argc || arg == 4; ++arg) {
    const int threads = arg < argc ? atoi(argv[arg]) : 1;
    if (threads < 1 || threads > 64) return 2;
    for (int kernel = 0; kernel < 2; ++kernel) {
      double best = 1e300;
      for (int r = 0; r < reps[kernel] + 1; ++r) { /* the first sample warms up */
        double ns = 0;
        for (int i = 0; i < (r == 0 ? 1 : batch[kernel]); ++i) {
          ns += kernel == 0 ? run(0, threads, a, b, c) : run(1, threads, x, NULL, sums);
        }
        if (r > 0 && ns / batch[kernel] < best) best = ns / batch[kernel];
      }
      const double checksum = kernel == 0 ? c_speed_checksum(c, (int64_t)N * N)
                                          : c_speed_sum_combine(sums, blocks);
      printf("{\"kernel\":\"%s\",\"threads\":%d,\"ns\":%.0f,\"checksum\":%.17g}\n",
             kernel == 0 ? "matmul" : "sum", threads, best, checksum);
      fflush(stdout);
    }
  }
  return 0;
}
