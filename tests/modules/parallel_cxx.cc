// C++ exceptions thrown and caught on every thread of the threaded runtime
// (tests/node/threads.test.mjs), linked in with `webffi build --threads`.
//
//   throws(rounds) -> int    every task throws and catches `rounds` times
//                            (ints and std::runtime_error in turn); returns
//                            how many catches saw another exception than
//                            the one thrown (0: none misrouted)
//   at(index) -> None        task 1 indexes a std::vector with .at(); a
//                            std::out_of_range becomes an IndexError
#include <tvm/ffi/c_api.h>
#include <webffi/parallel.h>
#include <webffi/typed_call.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct ThrowJob {
  int64_t rounds;
  std::atomic<int64_t> wrong{0};
};

int ThrowTask(int task, TVMParallelGroupEnv*, void* cdata) {
  auto* job = static_cast<ThrowJob*>(cdata);
  for (int64_t i = 0; i < job->rounds; ++i) {
    const int64_t want = task * 1000003 + i;
    try {
      if (i % 2) throw want;
      throw std::runtime_error(std::to_string(want));
    } catch (int64_t got) {
      if (got != want) ++job->wrong;
    } catch (const std::runtime_error& e) {
      if (std::stoll(e.what()) != want) ++job->wrong;
    } catch (...) {
      ++job->wrong;
    }
  }
  return 0;
}

int AtTask(int task, TVMParallelGroupEnv*, void* cdata) {
  if (task != 1) return 0;
  static const std::vector<int> values = {1, 2, 3};
  try {
    return values.at(static_cast<size_t>(*static_cast<int64_t*>(cdata))) > 0 ? 0 : -1;
  } catch (const std::out_of_range& e) {
    TVMFFIErrorSetRaisedFromCStr("IndexError", "task 1: index out of range");
    return -1;
  }
}

const char* const kOneInt[] = {"int"};
const WebFFISignature kThrows = {"throws", 1, kOneInt, "int"};
const WebFFISignature kAt = {"at", 1, kOneInt, "None"};

}  // namespace

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_throws(void*, const TVMFFIAny* args, int32_t num_args,
                                                   TVMFFIAny* result) {
  ThrowJob job;
  if (WebFFICheckNumArgs(&kThrows, num_args) || WebFFIArgToInt(&kThrows, args, 0, &job.rounds)) return -1;
  if (TVMBackendParallelLaunch(ThrowTask, &job, 0) != 0) return -1;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = job.wrong.load();
  return 0;
}

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_at(void*, const TVMFFIAny* args, int32_t num_args,
                                               TVMFFIAny* result) {
  int64_t index;
  if (WebFFICheckNumArgs(&kAt, num_args) || WebFFIArgToInt(&kAt, args, 0, &index)) return -1;
  if (TVMBackendParallelLaunch(AtTask, &index, 2) != 0) return -1;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
