// The C++ functions upstream tvm-ffi's headers declare and its library
// defines (tvm/ffi/extra/*.h), defined here over webffi's C globals, so C++
// built against upstream's headers links against webffi's core. Compiled
// by `webffi build` (and the native test builds) only when upstream's
// headers are given: it needs them, and webffi's own headers do not declare
// these functions. Each forwards to the global of upstream's name; errors
// come back as the tvm::ffi::Error the global raised. Module::LoadFromFile
// is left out on purpose: webffi's modules are C objects, not ModuleObj
// instances, so its virtual methods must not be reached through them (a
// link error is better than a crash); call ffi.ModuleLoadFromFile instead.
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/extra/visit_error_context.h>
#include <tvm/ffi/function.h>

namespace tvm {
namespace ffi {
namespace {

// Looked up once per function: globals are never replaced under a running
// program's feet (upstream caches them the same way).
#define WEBFFI_GLOBAL(name)                                                 \
  ([]() -> const Function& {                                                \
    static const Function f = Function::GetGlobalRequired(name);            \
    return f;                                                               \
  }())

}  // namespace

namespace json {

Value Parse(const String& json_str, String* error_msg) {
  const Function& parse = WEBFFI_GLOBAL("ffi.json.Parse");
  if (error_msg == nullptr) return parse(json_str);
  // Upstream reports a syntax error through error_msg and returns None.
  try {
    return parse(json_str);
  } catch (const Error& err) {
    *error_msg = err.message();
    return Any(nullptr);
  }
}

String Stringify(const Value& value, const Optional<int>& indent) {
  const Function& stringify = WEBFFI_GLOBAL("ffi.json.Stringify");
  if (indent.has_value()) return stringify(value, *indent).cast<String>();
  return stringify(value).cast<String>();
}

}  // namespace json

json::Value ToJSONGraph(const Any& value, const Any& metadata) {
  const Function& to_graph = WEBFFI_GLOBAL("ffi.ToJSONGraph");
  if (metadata == nullptr) return to_graph(value);
  return to_graph(value, metadata);
}

Any FromJSONGraph(const json::Value& value) { return WEBFFI_GLOBAL("ffi.FromJSONGraph")(value); }

String ReprPrint(const Any& value) { return WEBFFI_GLOBAL("ffi.ReprPrint")(value).cast<String>(); }

Any DeepCopy(const Any& value) { return WEBFFI_GLOBAL("ffi.DeepCopy")(value); }

int64_t RecursiveHash(const Any& value) {
  return WEBFFI_GLOBAL("ffi.RecursiveHash")(value).cast<int64_t>();
}

bool RecursiveEq(const Any& lhs, const Any& rhs) {
  return WEBFFI_GLOBAL("ffi.RecursiveEq")(lhs, rhs).cast<bool>();
}
bool RecursiveLt(const Any& lhs, const Any& rhs) {
  return WEBFFI_GLOBAL("ffi.RecursiveLt")(lhs, rhs).cast<bool>();
}
bool RecursiveLe(const Any& lhs, const Any& rhs) {
  return WEBFFI_GLOBAL("ffi.RecursiveLe")(lhs, rhs).cast<bool>();
}
bool RecursiveGt(const Any& lhs, const Any& rhs) {
  return WEBFFI_GLOBAL("ffi.RecursiveGt")(lhs, rhs).cast<bool>();
}
bool RecursiveGe(const Any& lhs, const Any& rhs) {
  return WEBFFI_GLOBAL("ffi.RecursiveGe")(lhs, rhs).cast<bool>();
}

bool StructuralEqual::Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                            bool skip_tensor_content) {
  return WEBFFI_GLOBAL("ffi.StructuralEqual")(lhs, rhs, map_free_vars, skip_tensor_content)
      .cast<bool>();
}

Optional<reflection::AccessPathPair> StructuralEqual::GetFirstMismatch(const Any& lhs,
                                                                       const Any& rhs,
                                                                       bool map_free_vars,
                                                                       bool skip_tensor_content) {
  return WEBFFI_GLOBAL("ffi.GetFirstStructuralMismatch")(lhs, rhs, map_free_vars,
                                                         skip_tensor_content)
      .cast<Optional<reflection::AccessPathPair>>();
}

uint64_t StructuralHash::Hash(const Any& value, bool map_free_vars, bool skip_tensor_content) {
  // The global returns the hash bit-cast to int64, as upstream's does.
  return static_cast<uint64_t>(
      WEBFFI_GLOBAL("ffi.StructuralHash")(value, map_free_vars, skip_tensor_content)
          .cast<int64_t>());
}

Array<reflection::AccessPath> VisitErrorContext::FindAccessPaths(
    const ObjectRef& root, const VisitErrorContext& visit_context, bool allow_prefix_match) {
  return WEBFFI_GLOBAL("ffi.VisitErrorContext.FindAccessPaths")(root, visit_context,
                                                               allow_prefix_match)
      .cast<Array<reflection::AccessPath>>();
}

#undef WEBFFI_GLOBAL

}  // namespace ffi
}  // namespace tvm
