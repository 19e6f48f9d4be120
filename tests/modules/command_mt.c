/* A threaded command program (webffi build --threads): main starts
 * pthreads, which run on workers beside the parallel pool's, and a
 * parallel launch, and prints what each saw.
 *
 *   webffi run command_mt.wasm THREADS [EXIT_CODE]
 *
 * prints `pthreads: THREADS, sum SUM` and `launch: TASKS tasks`; with
 * EXIT_CODE it ends through exit() instead of returning 0. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <webffi/parallel.h>

static atomic_int started;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int ready;

/* Waits until every thread has started, then returns its index squared. */
static void* square(void* arg) {
  intptr_t i = (intptr_t)arg;
  atomic_fetch_add(&started, 1);
  pthread_mutex_lock(&lock);
  while (!ready) pthread_cond_wait(&go, &lock);
  pthread_mutex_unlock(&lock);
  return (void*)(i * i);
}

static int count_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)task;
  (void)penv;
  atomic_fetch_add((atomic_int*)cdata, 1);
  return 0;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  if (n < 1 || n > 64) return 2;
  pthread_t threads[64];
  for (int i = 0; i < n; ++i) {
    if (pthread_create(&threads[i], NULL, square, (void*)(intptr_t)i) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  /* every thread runs at once: the last to start releases them all */
  while (atomic_load(&started) < n) sched_yield();
  pthread_mutex_lock(&lock);
  ready = 1;
  pthread_cond_broadcast(&go);
  pthread_mutex_unlock(&lock);
  intptr_t sum = 0;
  for (int i = 0; i < n; ++i) {
    void* r;
    pthread_join(threads[i], &r);
    sum += (intptr_t)r;
  }
  printf("pthreads: %d, sum %d\n", n, (int)sum);
  atomic_int tasks = 0;
  if (TVMBackendParallelLaunch(count_task, &tasks, 0) != 0) return 1;
  printf("launch: %d tasks\n", atomic_load(&tasks));
  if (argc > 2) exit(atoi(argv[2]));
  return 0;
}
