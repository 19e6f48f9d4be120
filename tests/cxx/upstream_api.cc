// Uses the C++ functions upstream tvm-ffi's headers declare and its library
// defines (json, serialization, repr, structural equality and hashing,
// visit error contexts). Built by `webffi build --tvm-ffi-include DIR`
// (tests/node/cxx_forward.test.mjs), it links only because webffi compiles
// its forwarding layer (src/cxx/forward.cc) with it. Each function returns
// what it saw as text, so the test compares one string.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/extra/visit_error_context.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/access_path.h>

#include <sstream>
#include <string>

namespace ffi = tvm::ffi;

namespace {

std::string PathText(const ffi::reflection::AccessPath& path) {
  std::ostringstream os;
  os << "<root>";
  for (const ffi::reflection::AccessStep& step : path->ToSteps()) {
    if (step->kind == ffi::reflection::AccessKind::kArrayItem) {
      os << "[" << step->key.cast<int64_t>() << "]";
    } else if (step->kind == ffi::reflection::AccessKind::kArrayItemMissing) {
      os << "[<missing:" << step->key.cast<int64_t>() << ">]";
    } else {
      os << "[" << step->key.cast<ffi::String>() << "]";
    }
  }
  return os.str();
}

ffi::String StructuralReport() {
  ffi::Array<ffi::Any> a{1, 2, ffi::String("three")};
  ffi::Array<ffi::Any> b{1, 2, ffi::String("three")};
  ffi::Array<ffi::Any> c{1, 5, ffi::String("three")};
  std::ostringstream os;
  os << "equal=" << ffi::StructuralEqual::Equal(a, b)
     << " differ=" << ffi::StructuralEqual::Equal(a, c)
     << " hash=" << (ffi::StructuralHash::Hash(a) == ffi::StructuralHash::Hash(b));
  auto mismatch = ffi::StructuralEqual::GetFirstMismatch(a, c);
  os << " mismatch=" << (mismatch.has_value() ? PathText((*mismatch).get<0>()) : "none");
  os << " none=" << !ffi::StructuralEqual::GetFirstMismatch(a, b).has_value();
  return os.str();
}

ffi::String JsonReport() {
  ffi::json::Value v = ffi::json::Parse("{\"k\": [1, 2.5, null]}");
  std::ostringstream os;
  os << "json=" << ffi::json::Stringify(v);
  ffi::String error;
  ffi::json::Value bad = ffi::json::Parse("[1,", &error);
  os << " bad_is_none=" << (bad == nullptr) << " error_set=" << !error.empty();
  ffi::Array<ffi::Any> value{1, ffi::String("x")};
  ffi::Any back = ffi::FromJSONGraph(ffi::ToJSONGraph(value));
  os << " graph=" << ffi::StructuralEqual::Equal(value, back);
  os << " repr=" << ffi::ReprPrint(value);
  return os.str();
}

ffi::String ThrowReport() {
  // an error raised by the core arrives as tvm::ffi::Error, caught here
  try {
    ffi::json::Parse("[1,");
  } catch (const ffi::Error& err) {
    return std::string("caught ") + err.kind();
  }
  return "not thrown";
}

// Context symbols registered here, as Module::VisitContextSymbols lists
// them (in order, a name registered again listed again), and an exception
// thrown by the callback reaching the caller.
ffi::String ContextReport() {
  static int a, b;
  TVMFFIEnvModRegisterContextSymbol("__upstream_api_ctx_a", &a);
  TVMFFIEnvModRegisterContextSymbol("__upstream_api_ctx_b", &b);
  TVMFFIEnvModRegisterContextSymbol("__upstream_api_ctx_a", &a);
  std::ostringstream os;
  ffi::Module::VisitContextSymbols(ffi::TypedFunction<void(ffi::String, void*)>(
      [&](ffi::String name, void* symbol) {
        if (std::string(name).rfind("__upstream_api_ctx_", 0) != 0) return;
        os << name << "=" << (symbol == &a ? "a" : symbol == &b ? "b" : "?") << " ";
      }));
  try {
    ffi::Module::VisitContextSymbols(ffi::TypedFunction<void(ffi::String, void*)>(
        [](ffi::String, void*) { TVM_FFI_THROW(ValueError) << "stop"; }));
    os << "not thrown";
  } catch (const ffi::Error& err) {
    os << "caught " << err.kind();
  }
  return os.str();
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(context_report, ContextReport);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(structural_report, StructuralReport);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(json_report, JsonReport);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_report, ThrowReport);
