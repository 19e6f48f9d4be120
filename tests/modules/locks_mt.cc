// A C++ module for the threaded runtime (webffi build --module --threads)
// whose tasks share state under C++'s locks (tests/node/threads_modules.test.mjs):
//   locked_count(rounds) -> int   every task adds 1 to a plain counter
//                                 `rounds` times under one std::mutex; the
//                                 count is rounds x tasks when the lock holds
//   once_count() -> int           every task reaches std::call_once and a
//                                 function-local static: how many
//                                 initialisations ran (2 when each ran once)
#include <tvm/ffi/c_api.h>
#include <webffi/parallel.h>
#include <webffi/typed_call.h>

#include <atomic>
#include <mutex>

namespace {

struct CountJob {
  std::mutex lock;
  volatile int64_t count = 0;  // (volatile: each update a load and a store, never folded)
  int64_t rounds = 0;
};

int CountTask(int, TVMParallelGroupEnv*, void* cdata) {
  auto* job = static_cast<CountJob*>(cdata);
  for (int64_t i = 0; i < job->rounds; ++i) {
    std::lock_guard<std::mutex> hold(job->lock);
    int64_t seen = job->count;
    job->count = seen + 1;
  }
  return 0;
}

std::atomic<int> initialisations{0};
std::once_flag once;

int Slow() {
  initialisations.fetch_add(1);
  volatile int spin = 0;
  for (int i = 0; i < 1000000; ++i) spin = spin + 1;  // the others arrive meanwhile
  return 7;
}

int OnceTask(int, TVMParallelGroupEnv*, void*) {
  std::call_once(once, [] { initialisations.fetch_add(1); });
  static int value = Slow();
  return value == 7 ? 0 : -1;
}

const char* const kOneInt[] = {"int"};
const WebFFISignature kLockedCount = {"locked_count", 1, kOneInt, "int"};

}  // namespace

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_locked_count(void*, const TVMFFIAny* args, int32_t num_args,
                                                         TVMFFIAny* result) {
  CountJob job;
  if (WebFFICheckNumArgs(&kLockedCount, num_args) || WebFFIArgToInt(&kLockedCount, args, 0, &job.rounds)) {
    return -1;
  }
  if (TVMBackendParallelLaunch(CountTask, &job, 0) != 0) return -1;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = job.count;
  return 0;
}

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_once_count(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  if (TVMBackendParallelLaunch(OnceTask, nullptr, 0) != 0) return -1;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = initialisations.load();
  return 0;
}
