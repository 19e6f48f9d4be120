/* TVMBackendParallelLaunch / TVMBackendParallelBarrier (webffi/parallel.h):
 * serial before the pool starts, on every thread after, errors carried back
 * to the caller, barriers that hold, and launches nested in a task. */
#include <stdint.h>
#include <webffi/parallel.h>

#include "harness.h"

#define N 100000

typedef struct {
  const float* in;
  float* out;
  int64_t n;
  int tasks_seen[64];
  int num_task;
} scale_job;

static int scale(int task, TVMParallelGroupEnv* penv, void* cdata) {
  scale_job* j = cdata;
  j->num_task = penv->num_task;
  __atomic_fetch_add(&j->tasks_seen[task], 1, __ATOMIC_RELAXED);
  int64_t chunk = (j->n + penv->num_task - 1) / penv->num_task;
  for (int64_t i = task * chunk; i < j->n && i < (task + 1) * chunk; ++i) j->out[i] = 2 * j->in[i] + 1;
  return 0;
}

static void run_scale(int num_task, int expect_tasks) {
  static float in[N], out[N];
  for (int i = 0; i < N; ++i) {
    in[i] = (float)i;
    out[i] = 0;
  }
  scale_job j = {in, out, N, {0}, 0};
  CHECK_EQ_INT(TVMBackendParallelLaunch(scale, &j, num_task), 0);
  CHECK_EQ_INT(j.num_task, expect_tasks);
  for (int t = 0; t < expect_tasks; ++t) CHECK_EQ_INT(j.tasks_seen[t], 1);
  for (int i = 0; i < N; ++i) CHECK(out[i] == 2 * (float)i + 1);
}

static int fails_on(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv;
  int bad = *(int*)cdata;
  if (task >= bad) {
    char message[32];
    snprintf(message, sizeof message, "task %d failed", task);
    TVMFFIErrorSetRaisedFromCStr("ValueError", message);
    return -1;
  }
  return 0;
}

typedef struct {
  int phase[8];
  int out_of_order;
} barrier_job;

static int with_barriers(int task, TVMParallelGroupEnv* penv, void* cdata) {
  barrier_job* j = cdata;
  for (int round = 1; round <= 50; ++round) {
    __atomic_store_n(&j->phase[task], round, __ATOMIC_RELEASE);
    if (TVMBackendParallelBarrier(task, penv) != 0) return -1;
    /* after the barrier every task has reached this round */
    for (int t = 0; t < penv->num_task; ++t) {
      if (__atomic_load_n(&j->phase[t], __ATOMIC_ACQUIRE) < round) __atomic_store_n(&j->out_of_order, 1, __ATOMIC_RELAXED);
    }
    if (TVMBackendParallelBarrier(task, penv) != 0) return -1;
  }
  return 0;
}

static int nested(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv;
  int* inner_tasks = cdata;
  scale_job j = {NULL, NULL, 0, {0}, 0};
  if (TVMBackendParallelLaunch(scale, &j, 0) != 0) return -1;
  __atomic_fetch_add(&inner_tasks[task], j.num_task, __ATOMIC_RELAXED);
  return 0;
}

void parallel_serial_before_the_pool_starts(void) {
  CHECK_EQ_INT(WebFFIParallelThreads(), 1);
  run_scale(0, 1);
  run_scale(8, 1);
  int bad = 0;
  CHECK_EQ_INT(TVMBackendParallelLaunch(fails_on, &bad, 4), -1);
  CHECK_RAISED("ValueError", "task 0 failed");
  CHECK_EQ_INT(TVMBackendParallelLaunch(NULL, NULL, 4), -1);
  CHECK_RAISED("ValueError", "TVMBackendParallelLaunch: NULL lambda");
  TVMParallelGroupEnv env = {NULL, 1};
  CHECK_EQ_INT(TVMBackendParallelBarrier(0, &env), 0);
}

void parallel_pool_runs_every_task_once(void) {
  CHECK_EQ_INT(WebFFIParallelStart(4), 0);
  CHECK_EQ_INT(WebFFIParallelThreads(), 4);
  CHECK_EQ_INT(WebFFIParallelStart(2), -1);
  CHECK_RAISED("RuntimeError", "WebFFIParallelStart: the pool is already started");
  for (int round = 0; round < 200; ++round) {
    run_scale(0, 4);
    run_scale(3, 3);
    run_scale(1, 1);
    run_scale(100, 4);
  }
  WebFFIParallelStop();
  CHECK_EQ_INT(WebFFIParallelThreads(), 1);
  run_scale(0, 1);
  CHECK_EQ_INT(WebFFIParallelStart(0), -1);
  CHECK_RAISED("ValueError", "WebFFIParallelStart: threads must be in [1, 256], got 0");
}

void parallel_errors_reach_the_caller(void) {
  CHECK_EQ_INT(WebFFIParallelStart(4), 0);
  for (int round = 0; round < 100; ++round) {
    int bad = 2; /* tasks 2 and 3 fail: the lowest task's error is raised */
    CHECK_EQ_INT(TVMBackendParallelLaunch(fails_on, &bad, 0), -1);
    CHECK_RAISED("ValueError", "task 2 failed");
    bad = 0;
    CHECK_EQ_INT(TVMBackendParallelLaunch(fails_on, &bad, 0), -1);
    CHECK_RAISED("ValueError", "task 0 failed");
    bad = 4;
    CHECK_EQ_INT(TVMBackendParallelLaunch(fails_on, &bad, 0), 0);
  }
  WebFFIParallelStop();
}

void parallel_barriers_and_nested_launches(void) {
  CHECK_EQ_INT(WebFFIParallelStart(4), 0);
  for (int round = 0; round < 20; ++round) {
    barrier_job j = {{0}, 0};
    CHECK_EQ_INT(TVMBackendParallelLaunch(with_barriers, &j, 0), 0);
    CHECK_EQ_INT(j.out_of_order, 0);
  }
  /* a launch inside a task runs serially on that task's thread */
  int inner[4] = {0};
  CHECK_EQ_INT(TVMBackendParallelLaunch(nested, inner, 0), 0);
  for (int t = 0; t < 4; ++t) CHECK_EQ_INT(inner[t], 1);
  WebFFIParallelStop();
}
