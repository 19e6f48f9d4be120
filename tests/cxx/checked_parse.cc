// A small C++ library of webffi's own, against its headers only: typed
// functions whose C++ code throws on bad input and catches at the C ABI,
// where the safe-call convention turns the exception into a raised error.
// Built with `webffi build` both ways (tests/node/cxx.test.mjs).
#include <tvm/ffi/c_api.h>

#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The error kind a C++ exception becomes at the boundary.
struct ValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string ArgString(const TVMFFIAny* args, int32_t num_args, int32_t i) {
  if (i >= num_args) throw std::invalid_argument("missing argument #" + std::to_string(i));
  const TVMFFIAny& a = args[i];
  switch (a.type_index) {
    case kTVMFFISmallStr:
      return std::string(a.v_bytes, a.small_str_len);
    case kTVMFFIRawStr:
      return std::string(a.v_c_str);
    case kTVMFFIStr: {
      const TVMFFIByteArray* s = TVMFFIBytesGetByteArrayPtr(a.v_obj);
      return std::string(s->data, s->size);
    }
    default:
      throw std::invalid_argument("argument #" + std::to_string(i) + " must be a str");
  }
}

// Runs body, turning any C++ exception into a raised error: nothing
// crosses the C ABI but a return code.
template <typename F>
int SafeCall(F body) {
  try {
    body();
    return 0;
  } catch (const ValueError& e) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", e.what());
  } catch (const std::invalid_argument& e) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", e.what());
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", e.what());
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "unknown C++ exception");
  }
  return -1;
}

// std::stoll throws std::invalid_argument / std::out_of_range; both are
// caught here and rethrown as the error the caller should see.
long long ParseInt(const std::string& text) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    if (used != text.size()) throw ValueError("trailing characters in `" + text + "`");
    return v;
  } catch (const std::out_of_range&) {
    throw ValueError("`" + text + "` is out of range");
  } catch (const std::invalid_argument&) {
    throw ValueError("`" + text + "` is not a number");
  }
}

}  // namespace

// sum_csv("1,2,3") -> 6; a bad field raises ValueError naming it.
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_sum_csv(void*, const TVMFFIAny* args, int32_t num_args,
                                                  TVMFFIAny* result) {
  return SafeCall([&] {
    if (num_args != 1) throw std::invalid_argument("sum_csv expects 1 argument");
    std::string text = ArgString(args, num_args, 0);
    std::vector<long long> values;
    size_t start = 0;
    for (;;) {
      size_t comma = text.find(',', start);
      values.push_back(ParseInt(text.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    result->type_index = kTVMFFIInt;
    result->zero_padding = 0;
    result->v_int64 = std::accumulate(values.begin(), values.end(), 0LL);
  });
}

// How many C++ exceptions this library has thrown and caught inside itself.
static int g_caught = 0;

// checked_div(a, b): a / b; b == 0 throws std::domain_error internally,
// caught and rethrown as ValueError.
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_checked_div(void*, const TVMFFIAny* args,
                                                      int32_t num_args, TVMFFIAny* result) {
  return SafeCall([&] {
    if (num_args != 2 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
      throw std::invalid_argument("checked_div expects two ints");
    }
    try {
      if (args[1].v_int64 == 0) throw std::domain_error("division by zero");
    } catch (const std::domain_error& e) {
      ++g_caught;
      throw ValueError(std::string("checked_div: ") + e.what());
    }
    result->type_index = kTVMFFIInt;
    result->zero_padding = 0;
    result->v_int64 = args[0].v_int64 / args[1].v_int64;
  });
}

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_caught_count(void*, const TVMFFIAny*, int32_t,
                                                       TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = g_caught;
  return 0;
}

// A handle made once however often it is asked for (TVMFFIHandleInitOnce,
// the C ABI's static initialisation for code without C++ statics):
// init_once_count(k) asks k times and returns how many inits ran.
static void* g_handle = nullptr;
static int g_inits = 0;

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_init_once_count(void*, const TVMFFIAny* args,
                                                          int32_t num_args, TVMFFIAny* result) {
  return SafeCall([&] {
    if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
      throw std::invalid_argument("init_once_count expects one int");
    }
    for (int64_t i = 0; i < args[0].v_int64; ++i) {
      int rc = TVMFFIHandleInitOnce(&g_handle, [](void** out) {
        ++g_inits;
        *out = &g_inits;
        return 0;
      });
      if (rc != 0) throw std::runtime_error("TVMFFIHandleInitOnce failed");
    }
    result->type_index = kTVMFFIInt;
    result->zero_padding = 0;
    result->v_int64 = g_handle == &g_inits ? g_inits : -1;
  });
}
