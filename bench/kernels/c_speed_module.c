/*
 * The wasm rows of bench/c_speed.mjs: the kernels of c_speed.c as tvm-ffi
 * functions, built as a module (webffi build --module, with and without
 * SIMD) and linked into the threaded runtime (webffi build --threads,
 * served by ffi.SystemLib()).
 *
 *   fill(x: Tensor, seed: int), checksum(x: Tensor) -> float
 *   matmul(a: Tensor, b: Tensor, c: Tensor, num_tasks: int)   c = a b, n x n
 *   sum(x: Tensor, block_sums: Tensor, num_tasks: int) -> float
 *
 * Each kernel is a TVM parallel lambda launched as num_tasks tasks with
 * TVMBackendParallelLaunch (webffi/parallel.h): on the threads of the pool
 * when linked into the threaded runtime, as one task on the caller's thread
 * everywhere else (a module's code runs serially). The kernels' results do
 * not depend on the split.
 */
#include <tvm/ffi/c_api.h>
#include <webffi/parallel.h>
#include <webffi/typed_call.h>

#include "c_speed.h"

/* A float32 tensor's data and element count; raises and returns NULL otherwise. */
static float* floats(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i, int64_t* n) {
  DLTensor* t;
  if (WebFFIArgToDLTensor(sig, args, i, &t) != 0) return NULL;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "c_speed: float32 tensors only");
    return NULL;
  }
  *n = 1;
  for (int d = 0; d < t->ndim; ++d) *n *= t->shape[d];
  return (float*)((char*)t->data + t->byte_offset);
}

static int set_none(TVMFFIAny* result) {
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

static int set_float(TVMFFIAny* result, double v) {
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = v;
  return 0;
}

static int tasks_arg(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i, int* num_tasks) {
  int64_t v;
  if (WebFFIArgToInt(sig, args, i, &v) != 0) return -1;
  if (v < 1 || v > 4096) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "c_speed: num_tasks must be in [1, 4096]");
    return -1;
  }
  *num_tasks = (int)v;
  return 0;
}

static const char* const kFillTypes[] = {"Tensor", "int"};
static const WebFFISignature kFill = {"fill", 2, kFillTypes, "None"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_fill(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  int64_t n, seed;
  float* x;
  (void)self;
  if (WebFFICheckNumArgs(&kFill, num_args) != 0 || !(x = floats(&kFill, args, 0, &n)) ||
      WebFFIArgToInt(&kFill, args, 1, &seed) != 0) {
    return -1;
  }
  c_speed_fill(x, n, (uint32_t)seed);
  return set_none(result);
}

static const char* const kChecksumTypes[] = {"Tensor"};
static const WebFFISignature kChecksum = {"checksum", 1, kChecksumTypes, "float"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_checksum(void* self, const TVMFFIAny* args, int32_t num_args,
                                          TVMFFIAny* result) {
  int64_t n;
  float* x;
  (void)self;
  if (WebFFICheckNumArgs(&kChecksum, num_args) != 0 || !(x = floats(&kChecksum, args, 0, &n))) return -1;
  return set_float(result, c_speed_checksum(x, n));
}

typedef struct {
  const float *a, *b;
  float* c;
  int n;
} MatmulArgs;

static int matmul_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  const MatmulArgs* m = cdata;
  int64_t begin, end;
  c_speed_task_range(m->n, task_id, penv->num_task, &begin, &end);
  c_speed_matmul_rows(m->a, m->b, m->c, m->n, (int)begin, (int)end);
  return 0;
}

static const char* const kMatmulTypes[] = {"Tensor", "Tensor", "Tensor", "int"};
static const WebFFISignature kMatmul = {"matmul", 4, kMatmulTypes, "None"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_matmul(void* self, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  int64_t na, nb, nc;
  MatmulArgs m;
  int num_tasks;
  (void)self;
  if (WebFFICheckNumArgs(&kMatmul, num_args) != 0 || !(m.a = floats(&kMatmul, args, 0, &na)) ||
      !(m.b = floats(&kMatmul, args, 1, &nb)) || !(m.c = floats(&kMatmul, args, 2, &nc)) ||
      tasks_arg(&kMatmul, args, 3, &num_tasks) != 0) {
    return -1;
  }
  m.n = 0;
  while ((int64_t)(m.n + 1) * (m.n + 1) <= na) ++m.n;
  if ((int64_t)m.n * m.n != na || nb != na || nc != na) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "matmul: a, b and c must be n x n, all three");
    return -1;
  }
  if (TVMBackendParallelLaunch(matmul_task, &m, num_tasks) != 0) return -1;
  return set_none(result);
}

typedef struct {
  const float* x;
  int64_t n;
  float* block_sums;
  int64_t num_blocks;
} SumArgs;

static int sum_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  const SumArgs* s = cdata;
  int64_t begin, end;
  c_speed_task_range(s->num_blocks, task_id, penv->num_task, &begin, &end);
  c_speed_sum_blocks(s->x, s->n, s->block_sums, begin, end);
  return 0;
}

static const char* const kSumTypes[] = {"Tensor", "Tensor", "int"};
static const WebFFISignature kSum = {"sum", 3, kSumTypes, "float"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_sum(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  int64_t num_sums;
  SumArgs s;
  int num_tasks;
  (void)self;
  if (WebFFICheckNumArgs(&kSum, num_args) != 0 || !(s.x = floats(&kSum, args, 0, &s.n)) ||
      !(s.block_sums = floats(&kSum, args, 1, &num_sums)) || tasks_arg(&kSum, args, 2, &num_tasks) != 0) {
    return -1;
  }
  s.num_blocks = (s.n + C_SPEED_SUM_BLOCK - 1) / C_SPEED_SUM_BLOCK;
  if (num_sums < s.num_blocks) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "sum: block_sums needs one float per 64 Ki floats of x");
    return -1;
  }
  if (TVMBackendParallelLaunch(sum_task, &s, num_tasks) != 0) return -1;
  return set_float(result, c_speed_sum_combine(s.block_sums, s.num_blocks));
}
