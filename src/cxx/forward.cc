// The C++ functions upstream tvm-ffi's headers declare and its library
// defines (tvm/ffi/extra/*.h), defined here over webffi's C globals, so C++
// built against upstream's headers links against webffi's core. Compiled
// by `webffi build` (and the native test builds) only when upstream's
// headers are given: it needs them, and webffi's own headers do not declare
// these functions. Each forwards to the global of upstream's name; errors
// come back as the tvm::ffi::Error the global raised.
//
// Module::LoadFromFile returns a ModuleObj of this file's (ForwardModuleObj)
// over the module the core loaded: webffi's modules are C objects without
// ModuleObj's virtual methods, so C++ never reaches them directly. The
// core's module functions refuse a C++ ModuleObj (TypeError) rather than
// read it as one of theirs; ForwardModuleObj hands them its inner module.
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/extra/visit_error_context.h>
#include <tvm/ffi/function.h>
#include <webffi/module.h>

#include <exception>

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

namespace {

// A core module seen through upstream's ModuleObj interface.
class ForwardModuleObj : public ModuleObj {
 public:
  explicit ForwardModuleObj(ObjectRef inner)
      : inner_(std::move(inner)), kind_(WEBFFI_GLOBAL("ffi.ModuleGetKind")(inner_).cast<String>()) {}

  const char* kind() const final { return kind_.c_str(); }
  int GetPropertyMask() const final {
    return WEBFFI_GLOBAL("ffi.ModuleGetPropertyMask")(inner_).cast<int>();
  }
  // The core answers for its own imports too (query_imports = true).
  Optional<Function> GetFunction(const String& name) final {
    return WEBFFI_GLOBAL("ffi.ModuleGetFunction")(inner_, name, true).cast<Optional<Function>>();
  }
  Optional<String> GetFunctionDoc(const String& name) final {
    return WEBFFI_GLOBAL("ffi.ModuleGetFunctionDoc")(inner_, name, true).cast<Optional<String>>();
  }
  Optional<String> GetFunctionMetadata(const String& name) final {
    return WEBFFI_GLOBAL("ffi.ModuleGetFunctionMetadata")(inner_, name, true)
        .cast<Optional<String>>();
  }
  Array<String> GetWriteFormats() const final {
    return WEBFFI_GLOBAL("ffi.ModuleGetWriteFormats")(inner_).cast<Array<String>>();
  }
  String InspectSource(const String& format) const final {
    return WEBFFI_GLOBAL("ffi.ModuleInspectSource")(inner_, format).cast<String>();
  }
  void WriteToFile(const String& file_name, const String& format) const final {
    WEBFFI_GLOBAL("ffi.ModuleWriteToFile")(inner_, file_name, format);
  }
  void ImportModule(const Module& other) final;
  void ClearImports() final { WEBFFI_GLOBAL("ffi.ModuleClearImports")(inner_); }

  const ObjectRef& inner() const { return inner_; }
  // The deleter make_object gives this class: how one is told apart from
  // the core's modules (which C++ must not call virtually).
  static bool Is(const Object* obj) {
    return obj != nullptr && Deleter() != nullptr &&
           details::ObjectUnsafe::GetHeader(obj)->deleter == Deleter();
  }
  static decltype(TVMFFIObject::deleter)& Deleter() {
    static decltype(TVMFFIObject::deleter) deleter = nullptr;
    return deleter;
  }

 private:
  ObjectRef inner_;
  String kind_;
};

// What the core's functions take for a module: a ForwardModuleObj's inner
// module; anything else as it is (the core refuses C++ modules it did not make).
Any CoreModule(const Module& mod) {
  if (ForwardModuleObj::Is(mod.get())) return static_cast<const ForwardModuleObj*>(mod.get())->inner();
  return mod;
}

void ForwardModuleObj::ImportModule(const Module& other) {
  WEBFFI_GLOBAL("ffi.ModuleImportModule")(inner_, CoreModule(other));
}

}  // namespace

Module Module::LoadFromFile(const String& file_name) {
  ObjectRef inner = WEBFFI_GLOBAL("ffi.ModuleLoadFromFile")(file_name).cast<ObjectRef>();
  ObjectPtr<ForwardModuleObj> obj = make_object<ForwardModuleObj>(std::move(inner));
  ForwardModuleObj::Deleter() = details::ObjectUnsafe::GetHeader(obj.get())->deleter;
  return details::ObjectUnsafe::ObjectRefFromObjectPtr<Module>(std::move(obj));
}

namespace {

// One context symbol for VisitContextSymbols: the callback's exception is
// kept and the walk stopped, to be thrown again outside the C walk.
struct ContextVisit {
  const TypedFunction<void(String, void*)>* callback;
  std::exception_ptr error;
};

int VisitContextSymbol(const char* name, void* symbol, void* ctx) {
  ContextVisit* visit = static_cast<ContextVisit*>(ctx);
  try {
    (*visit->callback)(String(name), symbol);
    return 0;
  } catch (...) {
    visit->error = std::current_exception();
    return 1;
  }
}

}  // namespace

void Module::VisitContextSymbols(const TypedFunction<void(String, void*)>& callback) {
  ContextVisit visit{&callback, nullptr};
  if (WebFFIEnvVisitContextSymbols(VisitContextSymbol, &visit) != 0 && visit.error) {
    std::rethrow_exception(visit.error);
  }
}

// ModuleObj's own methods (upstream's library defines them), for C++
// modules of the user's: imports are kept in imports_, looked up in order.
void ModuleObj::ImportModule(const Module& other) { imports_.push_back(other); }

void ModuleObj::ClearImports() { imports_.clear(); }

Optional<Function> ModuleObj::GetFunction(const String& name, bool query_imports) {
  if (Optional<Function> f = GetFunction(name)) return f;
  if (!query_imports) return std::nullopt;
  for (const Any& import : imports_) {
    if (Optional<Function> f = import.cast<Module>()->GetFunction(name, true)) return f;
  }
  return std::nullopt;
}

bool ModuleObj::ImplementsFunction(const String& name, bool query_imports) {
  return GetFunction(name, query_imports).has_value();
}

Optional<String> ModuleObj::GetFunctionDoc(const String& name, bool query_imports) {
  if (Optional<String> doc = GetFunctionDoc(name)) return doc;
  if (!query_imports) return std::nullopt;
  for (const Any& import : imports_) {
    if (Optional<String> doc = import.cast<Module>()->GetFunctionDoc(name, true)) return doc;
  }
  return std::nullopt;
}

Optional<String> ModuleObj::GetFunctionMetadata(const String& name, bool query_imports) {
  if (Optional<String> meta = GetFunctionMetadata(name)) return meta;
  if (!query_imports) return std::nullopt;
  for (const Any& import : imports_) {
    if (Optional<String> meta = import.cast<Module>()->GetFunctionMetadata(name, true)) return meta;
  }
  return std::nullopt;
}

#undef WEBFFI_GLOBAL

}  // namespace ffi
}  // namespace tvm
