/*
 * A parallel-for with TVM's names: TVMBackendParallelLaunch and
 * TVMBackendParallelBarrier, with the signatures of TVM's
 * tvm/runtime/c_backend_api.h, so code TVM compiles for the CPU and users'
 * kernels share one pool of threads.
 *
 * In webffi's threaded core (load({ threads })) the pool has one thread per
 * requested thread, the caller's included; everywhere else (the
 * single-threaded core, a launch from inside a task, a launch while another
 * is running) the lambda runs once on the calling thread with num_task 1, so
 * one source builds for both. A lambda splits its work by penv->num_task:
 *
 *   static int scale(int task, TVMParallelGroupEnv* penv, void* cdata) {
 *     struct job* j = cdata;
 *     int64_t chunk = (j->n + penv->num_task - 1) / penv->num_task;
 *     for (int64_t i = task * chunk; i < j->n && i < (task + 1) * chunk; ++i)
 *       j->out[i] = 2 * j->in[i];
 *     return 0;
 *   }
 *   ...
 *   if (TVMBackendParallelLaunch(scale, &job, 0) != 0) return -1;
 */
#ifndef WEBFFI_PARALLEL_H_
#define WEBFFI_PARALLEL_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TVM_RUNTIME_C_BACKEND_API_H_
/* The environment of one launch: num_task is how many tasks run. */
typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;

/* One task of a launch: returns 0, or -1 with an error raised (the caller
 * of TVMBackendParallelLaunch gets the first task's error as its own). */
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

/*
 * Runs flambda(task_id, penv, cdata) for task_id in [0, penv->num_task) on
 * the pool and returns when all have returned. num_task 0 (or more than the
 * pool has) means one task per thread. Returns 0, or -1 with the first
 * failed task's error raised; a task that traps is reported the same way,
 * and the pool then runs everything serially.
 */
TVM_FFI_DLL int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task);

/* Waits until every task of the launch has reached the barrier. */
TVM_FFI_DLL int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv);
#endif

/* The threads a launch can use, the caller's included (1: serial). */
TVM_FFI_DLL int32_t WebFFIParallelThreads(void);

/*
 * Starts the pool with `threads` threads in all (the caller plus
 * threads - 1 workers); called once by the threaded core's loader. Returns
 * 0, or -1 with an error raised (not a threaded build, already started, or
 * a thread that could not be created).
 */
TVM_FFI_DLL int WebFFIParallelStart(int32_t threads);

/* Stops the pool's workers and waits for them (tests; process exit). */
TVM_FFI_DLL void WebFFIParallelStop(void);

#ifdef __cplusplus
}
#endif
#endif /* WEBFFI_PARALLEL_H_ */
