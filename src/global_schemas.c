/* The type schemas of the runtime's own globals (those its JS host
 * registers too: the module loader's), as
 * ffi.GetGlobalFuncMetadata gives them: upstream tvm-ffi records one for
 * every global it registers (`{"type_schema":"..."}`, the schema itself a
 * JSON text), and tools read them (typed bindings, `webffi types`). Kept
 * compact here, `RET(ARG,...)` with `NAME<ARG,...>` for a type's
 * arguments ("" for a function taking any arguments), and written out as
 * upstream writes them when asked; the globals upstream also has carry its
 * schemas (checked against upstream's by tests/c/upstream_values_check.c). */
#include "global_schemas.h"

#include <string.h>

#include "buffer.h"
#include "error.h"
#include "str.h"

/* Sorted by name (strcmp), for bsearch-style lookup. */
static const struct {
  const char* name;
  const char* schema;
} wf_global_schemas[] = {
    {"ffi.Array", ""},
    {"ffi.ArrayContains", "bool(ffi.Array,Any)"},
    {"ffi.ArrayGetItem", "Any(ffi.Array,int)"},
    {"ffi.ArraySize", "int(ffi.Array)"},
    {"ffi.Bytes", "ffi.Bytes(ffi.Bytes)"},
    {"ffi.ContainerFindFirstNonCPUDevice", "Device(Any)"},
    {"ffi.DeepCopy", "Any(Any)"},
    {"ffi.Dict", ""},
    {"ffi.DictClear", "None(ffi.Dict<Any,Any>)"},
    {"ffi.DictCount", "int(ffi.Dict,Any)"},
    {"ffi.DictErase", "None(ffi.Dict<Any,Any>,Any)"},
    {"ffi.DictForwardIterFunctor", "ffi.Function(ffi.Dict)"},
    {"ffi.DictGetItem", "Any(ffi.Dict,Any)"},
    {"ffi.DictGetItemOrMissing", "Any(ffi.Dict,Any)"},
    {"ffi.DictSetItem", "None(ffi.Dict<Any,Any>,Any,Any)"},
    {"ffi.DictSize", "int(ffi.Dict)"},
    {"ffi.FromJSONGraph", "Any(Any)"},
    {"ffi.FromJSONGraphString", "Any(ffi.String)"},
    {"ffi.FunctionFromExternC", "ffi.Function(void*,void*,void*)"},
    {"ffi.FunctionListGlobalNamesFunctor", "ffi.Function()"},
    {"ffi.FunctionRemoveGlobal", "bool(ffi.String)"},
    {"ffi.GetFirstStructuralMismatch", "Optional<Tuple<ffi.reflection.AccessPath,ffi.reflection.AccessPath>>(Any,Any,bool,bool)"},
    {"ffi.GetGlobalFuncMetadata", "ffi.String(ffi.String)"},
    {"ffi.GetInvalidObject", "ffi.Object()"},
    {"ffi.GetKwargsObject", "ffi.Object()"},
    {"ffi.GetRegisteredTypeKeys", "ffi.Array<ffi.String>()"},
    {"ffi.List", ""},
    {"ffi.ListAppend", "None(ffi.List<Any>,Any)"},
    {"ffi.ListClear", "None(ffi.List<Any>)"},
    {"ffi.ListContains", "bool(ffi.List,Any)"},
    {"ffi.ListErase", "None(ffi.List<Any>,int)"},
    {"ffi.ListEraseRange", "None(ffi.List<Any>,int,int)"},
    {"ffi.ListGetItem", "Any(ffi.List,int)"},
    {"ffi.ListInsert", "None(ffi.List<Any>,int,Any)"},
    {"ffi.ListPop", "Any(ffi.List<Any>,int)"},
    {"ffi.ListReplaceSlice", "None(ffi.List<Any>,int,int,ffi.List<Any>)"},
    {"ffi.ListReverse", "None(ffi.List<Any>)"},
    {"ffi.ListSetItem", "None(ffi.List<Any>,int,Any)"},
    {"ffi.ListSize", "int(ffi.List)"},
    {"ffi.MakeFieldGetter", "int(int)"},
    {"ffi.MakeFieldSetter", "ffi.Function(int,int,int)"},
    {"ffi.MakeObjectFromPackedArgs", ""},
    {"ffi.Map", ""},
    {"ffi.MapCount", "int(ffi.Map,Any)"},
    {"ffi.MapForwardIterFunctor", "ffi.Function(ffi.Map)"},
    {"ffi.MapGetItem", "Any(ffi.Map,Any)"},
    {"ffi.MapGetItemOrMissing", "Any(ffi.Map,Any)"},
    {"ffi.MapSize", "int(ffi.Map)"},
    {"ffi.Module.load_from_bytes.wasm", "ffi.Module(ffi.Bytes)"},
    {"ffi.Module.load_from_file.so", "ffi.Module(ffi.String,ffi.String)"},
    {"ffi.Module.load_from_file.wasm", "ffi.Module(ffi.String,ffi.String)"},
    {"ffi.ModuleClearImports", "None(ffi.Module)"},
    {"ffi.ModuleGetFunction", "Optional<ffi.Function>(ffi.Module,ffi.String,bool)"},
    {"ffi.ModuleGetFunctionDoc", "Optional<ffi.String>(ffi.Module,ffi.String,bool)"},
    {"ffi.ModuleGetFunctionMetadata", "Optional<ffi.String>(ffi.Module,ffi.String,bool)"},
    {"ffi.ModuleGetKind", "ffi.String(ffi.Module)"},
    {"ffi.ModuleGetPropertyMask", "int(ffi.Module)"},
    {"ffi.ModuleGetWriteFormats", "ffi.Array<ffi.String>(ffi.Module)"},
    {"ffi.ModuleGlobalsAdd", "None(ffi.Module)"},
    {"ffi.ModuleGlobalsRemove", "None(ffi.Module)"},
    {"ffi.ModuleImplementsFunction", "bool(ffi.Module,ffi.String,bool)"},
    {"ffi.ModuleImportModule", "None(ffi.Module,ffi.Module)"},
    {"ffi.ModuleInspectSource", "ffi.String(ffi.Module,ffi.String)"},
    {"ffi.ModuleLoadFromFile", "ffi.Module(ffi.String)"},
    {"ffi.ModuleWriteToFile", "None(ffi.Module,ffi.String,ffi.String)"},
    {"ffi.RecursiveEq", "bool(Any,Any)"},
    {"ffi.RecursiveGe", "bool(Any,Any)"},
    {"ffi.RecursiveGt", "bool(Any,Any)"},
    {"ffi.RecursiveHash", "int(Any)"},
    {"ffi.RecursiveLe", "bool(Any,Any)"},
    {"ffi.RecursiveLt", "bool(Any,Any)"},
    {"ffi.ReprPrint", "ffi.String(Any)"},
    {"ffi.Shape", ""},
    {"ffi.String", "ffi.String(ffi.String)"},
    {"ffi.StructuralEqual", "bool(Any,Any,bool,bool)"},
    {"ffi.StructuralHash", "int(Any,bool,bool)"},
    {"ffi.StructuralKey", "ffi.StructuralKey(Any)"},
    {"ffi.StructuralKeyEqual", "bool(Any,Any)"},
    {"ffi.StructuralVisitorDefRegionKind", "int(ffi.StructuralVisitor)"},
    {"ffi.StructuralVisitorVisit", "Optional<ffi.VisitInterrupt>(ffi.StructuralVisitor,Any)"},
    {"ffi.StructuralVisitorWithDefRegionKind", "Any(ffi.StructuralVisitor,int,ffi.Function)"},
    {"ffi.StructuralWalk", "Optional<ffi.VisitInterrupt>(Any,ffi.Array<Tuple<int,ffi.Function>>,ffi.Array<Tuple<int,ffi.Function>>,int)"},
    {"ffi.SystemLib", ""},
    {"ffi.ToJSONGraph", "Any(Any,Any)"},
    {"ffi.ToJSONGraphString", "ffi.String(Any,Any)"},
    {"ffi.VisitErrorContext.FindAccessPaths", "ffi.Array<ffi.reflection.AccessPath>(ffi.Object,ffi.VisitErrorContext,bool)"},
    {"ffi.VisitInterrupt", "ffi.VisitInterrupt(Any)"},
    {"ffi._RegisterFFIInit", "None(int)"},
    {"ffi.json.Parse", "Any(ffi.String)"},
    {"ffi.json.Stringify", "ffi.String(Any,Optional<int>)"},
    {"webffi.ModuleFindLoaded", "Optional<ffi.Module>(ffi.String)"},
    {"webffi.ModuleGetName", "Optional<ffi.String>(ffi.Module)"},
    {"webffi.ModuleUnload", "bool(ffi.String)"},
    {"webffi.SetDeviceAPI", ""},
    {"webffi.rpc.EndpointCreate", ""},
};
#define WF_GLOBAL_SCHEMA_COUNT (sizeof(wf_global_schemas) / sizeof(wf_global_schemas[0]))

const char* wf_global_schema_of(const char* name, size_t len) {
  size_t lo = 0, hi = WF_GLOBAL_SCHEMA_COUNT;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const char* key = wf_global_schemas[mid].name;
    int c = strncmp(key, name, len);
    if (c == 0 && key[len] != '\0') c = 1; /* key is longer */
    if (c == 0) return wf_global_schemas[mid].schema;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* One type, `NAME` or `NAME<T,...>`, from *p as {\"type\":\"NAME\",...} (the
 * quotes escaped: it is written inside a JSON string). */
static void wf_schema_type(const char** p, wf_buf* out) {
  const char* start = *p;
  while (**p != '\0' && strchr("<>(),", **p) == NULL) ++*p;
  wf_buf_puts(out, "{\\\"type\\\":\\\"");
  wf_buf_append(out, start, (size_t)(*p - start));
  wf_buf_puts(out, "\\\"");
  if (**p == '<') {
    wf_buf_puts(out, ",\\\"args\\\":[");
    do {
      ++*p; /* '<' or ',' */
      wf_schema_type(p, out);
      if (**p == ',') wf_buf_puts(out, ",");
    } while (**p == ',');
    if (**p == '>') ++*p; /* (a text cut short ends here too) */
    wf_buf_puts(out, "]");
  }
  wf_buf_puts(out, "}");
}

int wf_global_schema_render(const char* schema, TVMFFIAny* result) {
  wf_buf out = {0};
  wf_buf_puts(&out, "{\"type_schema\":\"{\\\"type\\\":\\\"ffi.Function\\\"");
  if (*schema != '\0') {
    /* the return type first, then the arguments */
    wf_buf_puts(&out, ",\\\"args\\\":[");
    const char* p = schema;
    wf_schema_type(&p, &out);
    if (*p == '(') ++p;
    /* each step consumes its type and a comma, or the walk ends */
    while (*p != ')' && *p != '\0') {
      wf_buf_puts(&out, ",");
      wf_schema_type(&p, &out);
      if (*p != ',') break;
      ++p;
    }
    wf_buf_puts(&out, "]");
  }
  wf_buf_puts(&out, "}\"}");
  int rc = out.failed ? wf_err_raise_oom(out.capacity * 2) : wf_str_make(0, out.data, out.size, result);
  wf_buf_free(&out);
  return rc;
}
