/*
 * Parallel kernels for tests/node/threads.test.mjs, linked into the
 * threaded runtime (webffi build --threads) and into the single-threaded
 * one from the same source: TVMBackendParallelLaunch runs them on the pool
 * in the first and serially (num_task 1) in the second.
 *
 *   sum(x: Tensor float32, num_task) -> float   blocks summed per task, combined in order
 *   tasks(num_task) -> int                      how many tasks ran (each counts itself)
 *   fail(num_task, bad) -> None                 tasks >= bad raise ValueError "task K failed"
 *   trap(num_task, bad) -> None                 task `bad` traps
 *   call(f: Function, num_task) -> None         every task calls f()
 *   barriers(num_task, rounds) -> int           1 when every barrier held
 *   alloc(num_task, bytes) -> None              tasks but task 0 allocate and free `bytes`
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tvm/ffi/c_api.h>
#include <webffi/parallel.h>
#include <webffi/typed_call.h>

#define BLOCK 4096
#define MAX_TASKS 64

static int set_int(TVMFFIAny* result, int64_t v) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = v;
  return 0;
}

static int set_none(TVMFFIAny* result) {
  set_int(result, 0);
  result->type_index = kTVMFFINone;
  return 0;
}

typedef struct {
  const float* x;
  int64_t n, blocks;
  float* sums;
} sum_job;

static int sum_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  sum_job* j = cdata;
  int64_t begin = j->blocks * task / penv->num_task, end = j->blocks * (task + 1) / penv->num_task;
  for (int64_t b = begin; b < end; ++b) {
    float s = 0;
    for (int64_t i = b * BLOCK; i < j->n && i < (b + 1) * BLOCK; ++i) s += j->x[i] * j->x[i];
    j->sums[b] = s;
  }
  return 0;
}

static const char* const kSumTypes[] = {"Tensor", "int"};
static const WebFFISignature kSum = {"sum", 2, kSumTypes, "float"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_sum(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  DLTensor* t;
  int64_t num_task;
  (void)self;
  if (WebFFICheckNumArgs(&kSum, num_args) || WebFFIArgToDLTensor(&kSum, args, 0, &t) ||
      WebFFIArgToInt(&kSum, args, 1, &num_task)) {
    return -1;
  }
  if (t->ndim != 1 || t->dtype.code != kDLFloat || t->dtype.bits != 32) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "sum: a 1-d float32 tensor");
    return -1;
  }
  sum_job j = {(const float*)((char*)t->data + t->byte_offset), t->shape[0], 0, NULL};
  j.blocks = (j.n + BLOCK - 1) / BLOCK;
  static float sums[1 << 16];
  if (j.blocks > (int64_t)(sizeof sums / sizeof sums[0])) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "sum: at most 2^28 floats");
    return -1;
  }
  j.sums = sums;
  if (TVMBackendParallelLaunch(sum_task, &j, (int)num_task) != 0) return -1;
  double total = 0;
  for (int64_t b = 0; b < j.blocks; ++b) total += sums[b];
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = total;
  return 0;
}

static int count_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)task;
  (void)penv;
  __atomic_fetch_add((int*)cdata, 1, __ATOMIC_RELAXED);
  return 0;
}

static const char* const kOneInt[] = {"int"};
static const WebFFISignature kTasks = {"tasks", 1, kOneInt, "int"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_tasks(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  int64_t num_task;
  int ran = 0;
  (void)self;
  if (WebFFICheckNumArgs(&kTasks, num_args) || WebFFIArgToInt(&kTasks, args, 0, &num_task)) return -1;
  if (TVMBackendParallelLaunch(count_task, &ran, (int)num_task) != 0) return -1;
  return set_int(result, ran);
}

static int fail_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv;
  if (task < *(int64_t*)cdata) return 0;
  char message[32];
  snprintf(message, sizeof message, "task %d failed", task);
  TVMFFIErrorSetRaisedFromCStr("ValueError", message);
  return -1;
}

static int trap_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv;
  if (task == *(int64_t*)cdata) __builtin_trap();
  return 0;
}

static const char* const kTwoInts[] = {"int", "int"};
static const WebFFISignature kFail = {"fail", 2, kTwoInts, "None"};
static const WebFFISignature kTrap = {"trap", 2, kTwoInts, "None"};

static int launch_with_bad(const WebFFISignature* sig, FTVMParallelLambda fn, const TVMFFIAny* args,
                           int32_t num_args, TVMFFIAny* result) {
  int64_t num_task, bad;
  if (WebFFICheckNumArgs(sig, num_args) || WebFFIArgToInt(sig, args, 0, &num_task) ||
      WebFFIArgToInt(sig, args, 1, &bad)) {
    return -1;
  }
  if (TVMBackendParallelLaunch(fn, &bad, (int)num_task) != 0) return -1;
  return set_none(result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_fail(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  (void)self;
  return launch_with_bad(&kFail, fail_task, args, num_args, result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_trap(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  (void)self;
  return launch_with_bad(&kTrap, trap_task, args, num_args, result);
}

static int call_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)task;
  (void)penv;
  TVMFFIAny out;
  if (TVMFFIFunctionCall(cdata, NULL, 0, &out) != 0) return -1;
  if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
  return 0;
}

static const char* const kCallTypes[] = {"Function", "int"};
static const WebFFISignature kCall = {"call", 2, kCallTypes, "None"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  int64_t num_task;
  (void)self;
  if (WebFFICheckNumArgs(&kCall, num_args) || WebFFIArgToInt(&kCall, args, 1, &num_task)) return -1;
  if (args[0].type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "call: a Function");
    return -1;
  }
  if (TVMBackendParallelLaunch(call_task, args[0].v_obj, (int)num_task) != 0) return -1;
  return set_none(result);
}

typedef struct {
  int64_t rounds;
  int phase[MAX_TASKS];
  int held;
} barrier_job;

static int barrier_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  barrier_job* j = cdata;
  for (int round = 1; round <= j->rounds; ++round) {
    __atomic_store_n(&j->phase[task], round, __ATOMIC_RELEASE);
    if (TVMBackendParallelBarrier(task, penv) != 0) return -1;
    for (int t = 0; t < penv->num_task; ++t) {
      if (__atomic_load_n(&j->phase[t], __ATOMIC_ACQUIRE) < round) __atomic_store_n(&j->held, 0, __ATOMIC_RELAXED);
    }
    if (TVMBackendParallelBarrier(task, penv) != 0) return -1;
  }
  return 0;
}

static const WebFFISignature kBarriers = {"barriers", 2, kTwoInts, "int"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_barriers(void* self, const TVMFFIAny* args, int32_t num_args,
                                          TVMFFIAny* result) {
  int64_t num_task;
  barrier_job j = {0, {0}, 1};
  (void)self;
  if (WebFFICheckNumArgs(&kBarriers, num_args) || WebFFIArgToInt(&kBarriers, args, 0, &num_task) ||
      WebFFIArgToInt(&kBarriers, args, 1, &j.rounds)) {
    return -1;
  }
  if (num_task > MAX_TASKS) num_task = MAX_TASKS;
  if (TVMBackendParallelLaunch(barrier_task, &j, (int)num_task) != 0) return -1;
  return set_int(result, j.held);
}

/* alloc(num_task, bytes): every task but task 0 allocates `bytes` and frees
 * them; a refused allocation raises MemoryError naming its task. */
static int alloc_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv;
  if (task == 0) return 0;
  void* p = malloc((size_t)*(int64_t*)cdata);
  if (p == NULL) {
    char message[48];
    snprintf(message, sizeof message, "task %d: cannot allocate", task);
    TVMFFIErrorSetRaisedFromCStr("MemoryError", message);
    return -1;
  }
  ((volatile char*)p)[0] = 1; /* used, so the compiler keeps the allocation */
  free(p);
  return 0;
}

static const WebFFISignature kAlloc = {"alloc", 2, kTwoInts, "None"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_alloc(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)self;
  return launch_with_bad(&kAlloc, alloc_task, args, num_args, result);
}
