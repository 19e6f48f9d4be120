// A C++ module whose error is raised two helpers deep, in a namespace, a
// class and a template, for the backtrace tests (tests/support/debug_suite.mjs):
// frames read as the names are written (shapes::Checker::check_rank<3>),
// never mangled. The suite finds its lines by their `line:` comments.
#include <tvm/ffi/c_api.h>

#include <string>

namespace shapes {

template <int kRank>
struct Checker {
  __attribute__((noinline)) static int check_rank(int64_t rank) {
    if (rank != kRank) {
      std::string message = "expected rank " + std::to_string(kRank) + ", got " + std::to_string(rank);
      TVMFFIErrorSetRaisedFromCStr("ValueError", message.c_str());  // line: raise
      return -1;
    }
    return 0;
  }
};

namespace {
__attribute__((noinline)) int validate(int64_t rank) {
  return Checker<3>::check_rank(rank);  // line: validate
}
}  // namespace

}  // namespace shapes

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_check_rank(void*, const TVMFFIAny* args, int32_t num_args,
                                                       TVMFFIAny* result) {
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "check_rank(rank) takes one int");
    return -1;
  }
  if (shapes::validate(args[0].v_int64) != 0) return -1;  // line: entry
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
