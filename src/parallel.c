/*
 * TVMBackendParallelLaunch / TVMBackendParallelBarrier (webffi/parallel.h):
 * one pool of threads for TVM's CPU code and users' kernels.
 *
 * Threaded builds (native, and wasm with -pthread) keep `threads - 1`
 * workers waiting on a condition variable; a launch publishes a job under
 * the pool's lock, runs task 0 on the caller and waits for the others.
 * Builds without threads, and launches that cannot use the pool (from
 * inside a task, or while another launch holds it), run the lambda once on
 * the calling thread with num_task 1, as TVM's own serial runtime does.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <webffi/parallel.h>

#include "error.h"
#include "platform.h"
#include "unwind.h"

#if !defined(__wasm__) || defined(__EMSCRIPTEN_PTHREADS__)
#define WF_PAR_THREADS 1
#include <pthread.h>
#include <sched.h>
#endif

/* Set on a thread while it runs a task: a nested launch runs serially. */
static WF_THREAD_LOCAL int wf_par_in_task;

static int wf_par_serial(FTVMParallelLambda flambda, void* cdata) {
  TVMParallelGroupEnv env = {NULL, 1};
  int outer = wf_par_in_task;
  wf_par_in_task = 1;
  int rc = flambda(0, &env, cdata);
  wf_par_in_task = outer;
  return rc == 0 ? 0 : -1;
}

#ifndef WF_PAR_THREADS

int32_t WebFFIParallelThreads(void) { return 1; }

int WebFFIParallelStart(int32_t threads) {
  (void)threads;
  return wf_err_raise("RuntimeError",
                      "WebFFIParallelStart: this core has no threads (load({ threads }) picks the threaded core)");
}

void WebFFIParallelStop(void) {}

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  (void)num_task;
  if (flambda == NULL) return wf_err_raise("ValueError", "TVMBackendParallelLaunch: NULL lambda");
  return wf_par_serial(flambda, cdata);
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id;
  (void)penv;
  return 0;
}

#else

#define WF_PAR_MAX_THREADS 256
/* Worker stacks: the core's recursive operations on values nested to its
 * limit (nesting.h) need more than the platform's small default. */
#define WF_PAR_STACK_BYTES ((size_t)4 << 20)

/* The barrier of one launch (its penv->sync_handle). */
typedef struct {
  int count;      /* tasks arrived in this round */
  int generation; /* rounds completed */
} wf_par_barrier;

typedef struct {
  FTVMParallelLambda flambda;
  void* cdata;
  TVMParallelGroupEnv env;
  wf_par_barrier barrier;
  int pending;          /* worker tasks not yet returned */
  int32_t peer_depth;   /* the caller's: a peer's launch is held to the peer budget on every thread */
  int failed_task;      /* lowest failed task id, INT_MAX: none */
  TVMFFIObjectHandle error; /* that task's error (owned), or NULL */
} wf_par_job;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t work;   /* a new job, or stop */
  pthread_cond_t done;   /* a job's last worker task returned */
  pthread_t workers[WF_PAR_MAX_THREADS];
  int32_t threads;       /* the caller's included; 1 until started */
  int32_t started;       /* workers created */
  uint32_t generation;   /* jobs published */
  int stopping;
  int busy;              /* a launch holds the pool */
  int broken;            /* a task trapped: everything runs serially */
  wf_par_job* job;
} wf_par = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
            {0}, 1, 0, 0, 0, 0, 0, NULL};

/* Table slots from here on hold functions of modules loaded at run time
 * that workers cannot instantiate (a compiled module whose bytes the host
 * does not have): their launches run serially (set by the host; natively
 * every function can run anywhere). */
static uintptr_t wf_par_code_limit = UINTPTR_MAX;

TVM_FFI_DLL void WebFFIParallelSetCodeLimit(uint32_t slots) { wf_par_code_limit = slots; }

/*
 * Modules loaded at run time (js/dylink.js) on every thread: the host
 * publishes a block in the heap describing every loaded module, and a
 * worker whose generation is behind instantiates what it lacks (and drops
 * what was unloaded) before its next task, through the host. Blocks the
 * host replaces, and memory of modules it unloaded, are freed only while
 * no launch runs: workers read blocks and run module code inside one.
 */
static void* wf_par_loads;          /* the published block (the host's format), or NULL */
static uint32_t wf_par_loads_generation;
static void* wf_par_retired;        /* freed when the running launch ends: a list through their first word */
static WF_THREAD_LOCAL uint32_t wf_par_loads_seen;

#if defined(__wasm__)
__attribute__((import_module("webffi"), import_name("replay_loads"))) int32_t wf_host_replay_loads(void* block);
#else
static int32_t wf_host_replay_loads(void* block) {
  (void)block;
  return 0;
}
#endif

/* Frees p now, or when the running launch ends. Called with the lock held. */
static void wf_par_retire_locked(void* p) {
  if (p == NULL) return;
  if (!wf_par.busy) {
    free(p);
    return;
  }
  *(void**)p = wf_par_retired;
  wf_par_retired = p;
}

TVM_FFI_DLL void WebFFIParallelRetire(void* p) {
  pthread_mutex_lock(&wf_par.lock);
  wf_par_retire_locked(p);
  pthread_mutex_unlock(&wf_par.lock);
}

TVM_FFI_DLL void WebFFIParallelPublishLoads(void* block) {
  pthread_mutex_lock(&wf_par.lock);
  void* old = wf_par_loads;
  __atomic_store_n(&wf_par_loads, block, __ATOMIC_RELEASE);
  __atomic_add_fetch(&wf_par_loads_generation, 1, __ATOMIC_RELEASE);
  wf_par_retire_locked(old);
  pthread_mutex_unlock(&wf_par.lock);
}

/* This thread's copies of the loaded modules, brought up to date: 0, or -1 with an error raised. */
static int wf_par_replay(int task) {
  uint32_t generation = __atomic_load_n(&wf_par_loads_generation, __ATOMIC_ACQUIRE);
  if (generation == wf_par_loads_seen) return 0;
  if (wf_host_replay_loads(__atomic_load_n(&wf_par_loads, __ATOMIC_ACQUIRE)) != 0) {
    return wf_err_raise("RuntimeError",
                        "task %d: the modules loaded at run time could not be instantiated on its worker thread",
                        task);
  }
  wf_par_loads_seen = generation;
  return 0;
}

/* Why the last task that trapped did (set by the host before it reports). */
static char wf_par_trap_text[256];

int32_t WebFFIParallelThreads(void) { return __atomic_load_n(&wf_par.threads, __ATOMIC_ACQUIRE); }

/* Runs one task, keeping the lowest failed task's error. Called without the lock. */
static void wf_par_run_task(wf_par_job* job, int task) {
  /* (a worker first brings its copies of run-time-loaded modules up to date) */
  int rc = task > 0 ? wf_par_replay(task) : 0;
  if (rc == 0) {
    wf_par_in_task = 1;
    int32_t peer_depth = wf_counters.peer_depth;
    wf_counters.peer_depth = job->peer_depth;
    rc = job->flambda(task, &job->env, job->cdata);
    wf_counters.peer_depth = peer_depth;
    wf_par_in_task = 0;
  }
  if (rc == 0) return;
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  pthread_mutex_lock(&wf_par.lock);
  if (task < job->failed_task) {
    TVMFFIObjectHandle replaced = job->error;
    job->failed_task = task;
    job->error = error;
    error = replaced;
  }
  pthread_mutex_unlock(&wf_par.lock);
  if (error != NULL) TVMFFIObjectDecRef(error);
}

/* Spins this many checks before sleeping on a condition variable: a wake
 * through the futex costs tens of microseconds, kernels launched back to
 * back find their workers still spinning. */
#define WF_PAR_SPINS 4096

static void wf_par_task_returned(wf_par_job* job) {
  pthread_mutex_lock(&wf_par.lock);
  if (__atomic_sub_fetch(&job->pending, 1, __ATOMIC_ACQ_REL) == 0) pthread_cond_signal(&wf_par.done);
  pthread_mutex_unlock(&wf_par.lock);
}

/* Spins until *word differs from value, or gives up; with the lock not held. */
static void wf_par_spin_while(const void* word, uint32_t value) {
  for (int i = 0; i < WF_PAR_SPINS && __atomic_load_n((const uint32_t*)word, __ATOMIC_ACQUIRE) == value; ++i) {
  }
}

static void* wf_par_worker(void* arg) {
  int index = (int)(intptr_t)arg;
  uint32_t seen = 0;
  pthread_mutex_lock(&wf_par.lock);
  for (;;) {
    if (wf_par.generation == seen && !wf_par.stopping) {
      pthread_mutex_unlock(&wf_par.lock);
      wf_par_spin_while(&wf_par.generation, seen);
      pthread_mutex_lock(&wf_par.lock);
    }
    while (wf_par.generation == seen && !wf_par.stopping) pthread_cond_wait(&wf_par.work, &wf_par.lock);
    if (wf_par.stopping) break;
    seen = wf_par.generation;
    wf_par_job* job = wf_par.job;
    if (job == NULL || index >= job->env.num_task) continue;
    pthread_mutex_unlock(&wf_par.lock);
    wf_par_run_task(job, index);
    wf_par_task_returned(job);
    pthread_mutex_lock(&wf_par.lock);
  }
  pthread_mutex_unlock(&wf_par.lock);
  return NULL;
}

int WebFFIParallelStart(int32_t threads) {
  if (threads < 1 || threads > WF_PAR_MAX_THREADS) {
    return wf_err_raise("ValueError", "WebFFIParallelStart: threads must be in [1, %d], got %d",
                        WF_PAR_MAX_THREADS, (int)threads);
  }
  pthread_mutex_lock(&wf_par.lock);
  int already = wf_par.started > 0 || wf_par.threads > 1;
  pthread_mutex_unlock(&wf_par.lock);
  if (already) return wf_err_raise("RuntimeError", "WebFFIParallelStart: the pool is already started");
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return wf_err_raise("RuntimeError", "pthread_attr_init failed");
  pthread_attr_setstacksize(&attr, WF_PAR_STACK_BYTES);
  int rc = 0;
  for (int32_t i = 1; i < threads; ++i) {
    int err = pthread_create(&wf_par.workers[i], &attr, wf_par_worker, (void*)(intptr_t)i);
    if (err != 0) {
      rc = wf_err_raise("RuntimeError", "WebFFIParallelStart: cannot start thread %d of %d (%s)", (int)i,
                        (int)threads, strerror(err));
      break;
    }
    wf_par.started = i;
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    WebFFIParallelStop();
    return rc;
  }
  __atomic_store_n(&wf_par.threads, threads, __ATOMIC_RELEASE);
  return 0;
}

void WebFFIParallelStop(void) {
  pthread_mutex_lock(&wf_par.lock);
  wf_par.stopping = 1;
  int started = wf_par.started;
  /* a worker whose task trapped is gone without returning: not joinable */
  int joinable = !wf_par.broken;
  pthread_cond_broadcast(&wf_par.work);
  pthread_mutex_unlock(&wf_par.lock);
  for (int i = 1; joinable && i <= started; ++i) pthread_join(wf_par.workers[i], NULL);
  pthread_mutex_lock(&wf_par.lock);
  wf_par.started = 0;
  wf_par.stopping = 0;
  __atomic_store_n(&wf_par.threads, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&wf_par.lock);
}

/* The pool for one launch, or 0 when it must run serially. */
static int wf_par_acquire(void) {
  if (wf_par_in_task || WebFFIParallelThreads() <= 1) return 0;
  pthread_mutex_lock(&wf_par.lock);
  int ok = !wf_par.busy && !wf_par.broken && wf_par.started > 0;
  if (ok) wf_par.busy = 1;
  pthread_mutex_unlock(&wf_par.lock);
  return ok;
}

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  if (flambda == NULL) return wf_err_raise("ValueError", "TVMBackendParallelLaunch: NULL lambda");
  if ((uintptr_t)flambda >= wf_par_code_limit || !wf_par_acquire()) return wf_par_serial(flambda, cdata);
  int32_t threads = WebFFIParallelThreads();
  wf_par_job job;
  memset(&job, 0, sizeof job);
  job.flambda = flambda;
  job.cdata = cdata;
  job.env.num_task = num_task <= 0 || num_task > threads ? threads : num_task;
  job.env.sync_handle = &job.barrier;
  job.failed_task = INT_MAX;
  job.pending = job.env.num_task - 1;
  job.peer_depth = wf_counters.peer_depth;

  pthread_mutex_lock(&wf_par.lock);
  wf_par.job = &job;
  __atomic_add_fetch(&wf_par.generation, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&wf_par.work);
  pthread_mutex_unlock(&wf_par.lock);

  wf_par_run_task(&job, 0);

  for (int i = 0; i < WF_PAR_SPINS && __atomic_load_n(&job.pending, __ATOMIC_ACQUIRE) > 0; ++i) {
  }
  pthread_mutex_lock(&wf_par.lock);
  while (job.pending > 0) pthread_cond_wait(&wf_par.done, &wf_par.lock);
  wf_par.job = NULL;
  wf_par.busy = 0;
  void* retired = wf_par_retired;
  wf_par_retired = NULL;
  pthread_mutex_unlock(&wf_par.lock);
  while (retired != NULL) {
    void* next = *(void**)retired;
    free(retired);
    retired = next;
  }

  if (job.failed_task == INT_MAX) return 0;
  if (job.error != NULL) {
    TVMFFIErrorSetRaised(job.error);
    TVMFFIObjectDecRef(job.error);
    return -1;
  }
  return wf_err_raise("RuntimeError",
                      "TVMBackendParallelLaunch: task %d trapped on a worker thread (%s); the pool runs "
                      "serially from now on",
                      job.failed_task, wf_par_trap_text[0] ? wf_par_trap_text : "no message");
}

/* Spins, then yields, until *addr differs from value or the pool breaks. */
static int wf_par_wait_change(const int* addr, int value) {
  for (unsigned spins = 0; __atomic_load_n(addr, __ATOMIC_ACQUIRE) == value; ++spins) {
    if (__atomic_load_n(&wf_par.broken, __ATOMIC_ACQUIRE)) return -1;
    if (spins > 1024) sched_yield();
  }
  return 0;
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id;
  if (penv == NULL || penv->num_task <= 1 || penv->sync_handle == NULL) return 0;
  wf_par_barrier* b = (wf_par_barrier*)penv->sync_handle;
  int generation = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == penv->num_task) {
    __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&b->generation, 1, __ATOMIC_RELEASE);
    return 0;
  }
  if (wf_par_wait_change(&b->generation, generation) != 0) {
    return wf_err_raise("RuntimeError",
                        "TVMBackendParallelBarrier: another task of this launch trapped");
  }
  return 0;
}

/*
 * The host's report that the task running on worker `index` trapped (the
 * worker's thread is gone): its launch returns with an error instead of
 * waiting for ever, and the pool runs serially from then on. The host has
 * written why into WebFFIParallelTrapText() first.
 */
TVM_FFI_DLL char* WebFFIParallelTrapText(void) { return wf_par_trap_text; }

TVM_FFI_DLL void WebFFIParallelWorkerTrapped(int32_t index) {
  wf_par_trap_text[sizeof wf_par_trap_text - 1] = '\0';
  pthread_mutex_lock(&wf_par.lock);
  __atomic_store_n(&wf_par.broken, 1, __ATOMIC_RELEASE);
  wf_par_job* job = wf_par.job;
  if (job != NULL && index > 0 && index < job->env.num_task) {
    if (index < job->failed_task) {
      if (job->error != NULL) TVMFFIObjectDecRef(job->error);
      job->error = NULL;
      job->failed_task = index;
    }
    if (__atomic_sub_fetch(&job->pending, 1, __ATOMIC_ACQ_REL) == 0) pthread_cond_signal(&wf_par.done);
  }
  pthread_mutex_unlock(&wf_par.lock);
}

#if defined(__wasm__)
/*
 * The threaded core's pthread locks, exported under their own names for
 * C++ modules built with `webffi build --module --threads`: their C
 * library leaves these out (its single-threaded build would make them
 * no-ops), so std::mutex, std::call_once, function-local statics and the
 * C++ runtime's own locks in a module are the core's, on every thread
 * (pthread_self the core's link exports itself).
 */
#define WF_PAR_EXPORT(name) __attribute__((used, export_name(#name)))
WF_PAR_EXPORT(pthread_mutex_init) int wf_x_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* a) {
  return pthread_mutex_init(m, a);
}
WF_PAR_EXPORT(pthread_mutex_destroy) int wf_x_mutex_destroy(pthread_mutex_t* m) { return pthread_mutex_destroy(m); }
WF_PAR_EXPORT(pthread_mutex_lock) int wf_x_mutex_lock(pthread_mutex_t* m) { return pthread_mutex_lock(m); }
WF_PAR_EXPORT(pthread_mutex_trylock) int wf_x_mutex_trylock(pthread_mutex_t* m) { return pthread_mutex_trylock(m); }
WF_PAR_EXPORT(pthread_mutex_unlock) int wf_x_mutex_unlock(pthread_mutex_t* m) { return pthread_mutex_unlock(m); }
WF_PAR_EXPORT(pthread_mutexattr_init) int wf_x_mutexattr_init(pthread_mutexattr_t* a) {
  return pthread_mutexattr_init(a);
}
WF_PAR_EXPORT(pthread_mutexattr_settype) int wf_x_mutexattr_settype(pthread_mutexattr_t* a, int type) {
  return pthread_mutexattr_settype(a, type);
}
WF_PAR_EXPORT(pthread_mutexattr_destroy) int wf_x_mutexattr_destroy(pthread_mutexattr_t* a) {
  return pthread_mutexattr_destroy(a);
}
WF_PAR_EXPORT(pthread_cond_init) int wf_x_cond_init(pthread_cond_t* c, const pthread_condattr_t* a) {
  return pthread_cond_init(c, a);
}
WF_PAR_EXPORT(pthread_cond_destroy) int wf_x_cond_destroy(pthread_cond_t* c) { return pthread_cond_destroy(c); }
WF_PAR_EXPORT(pthread_cond_wait) int wf_x_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  return pthread_cond_wait(c, m);
}
WF_PAR_EXPORT(pthread_cond_timedwait)
int wf_x_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
  return pthread_cond_timedwait(c, m, t);
}
WF_PAR_EXPORT(pthread_cond_signal) int wf_x_cond_signal(pthread_cond_t* c) { return pthread_cond_signal(c); }
WF_PAR_EXPORT(pthread_cond_broadcast) int wf_x_cond_broadcast(pthread_cond_t* c) { return pthread_cond_broadcast(c); }
WF_PAR_EXPORT(pthread_once) int wf_x_once(pthread_once_t* o, void (*f)(void)) { return pthread_once(o, f); }
WF_PAR_EXPORT(pthread_key_create) int wf_x_key_create(pthread_key_t* k, void (*d)(void*)) {
  return pthread_key_create(k, d);
}
WF_PAR_EXPORT(pthread_key_delete) int wf_x_key_delete(pthread_key_t k) { return pthread_key_delete(k); }
WF_PAR_EXPORT(pthread_getspecific) void* wf_x_getspecific(pthread_key_t k) { return pthread_getspecific(k); }
WF_PAR_EXPORT(pthread_setspecific) int wf_x_setspecific(pthread_key_t k, const void* v) {
  return pthread_setspecific(k, v);
}
WF_PAR_EXPORT(pthread_equal) int wf_x_equal(pthread_t a, pthread_t b) { return pthread_equal(a, b); }
/* the calling thread's struct pthread (musl's __pthread_self: errno, ...) */
extern uintptr_t __get_tp(void);
WF_PAR_EXPORT(__get_tp) uintptr_t wf_x_get_tp(void) { return __get_tp(); }
/* musl's internal locks (stdio, the environment, ...) */
extern void __lock(volatile int*);
extern void __unlock(volatile int*);
WF_PAR_EXPORT(__lock) void wf_x_lock(volatile int* l) { __lock(l); }
WF_PAR_EXPORT(__unlock) void wf_x_unlock(volatile int* l) { __unlock(l); }
#endif

#endif
