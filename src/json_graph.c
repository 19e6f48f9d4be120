/* ffi.ToJSONGraph, ffi.FromJSONGraph and their ...String variants. */
#include <webffi/typed_call.h>

#include "any.h"
#include "buffer.h"
#include "error.h"
#include "global_registry.h"
#include "json.h"
#include "json_graph.h"
#include "str.h"

/* Fields of these static types are written inline, the rest as node indices. */
int wf_json_graph_inline_field(const TVMFFIFieldInfo* f) {
  switch (f->field_static_type_index) {
    case kTVMFFIInt:
    case kTVMFFIBool:
    case kTVMFFIFloat:
    case kTVMFFIDataType:
      return 1;
    default:
      return 0;
  }
}

int wf_json_graph_no_creator(const char* type_key, const char* what) {
  return wf_err_raise("TypeError",
                      "Type `%s` does not support %s (no native creator or __ffi_new__ type attr)",
                      type_key, what);
}

/* ------------------------------------------------------ global functions */
static const char* const wf_graph_to_types[] = {"Any", "Any"};
static const char* const wf_graph_from_types[] = {"Any"};
static const char* const wf_graph_from_str_types[] = {"str"};

static int wf_to_json_graph_args(const char* name, const TVMFFIAny* args, int32_t n,
                                 const TVMFFIAny** metadata) {
  /* metadata is optional: ToJSONGraph(value) or ToJSONGraph(value, metadata) */
  WebFFISignature sig = {name, n == 1 ? 1 : 2, wf_graph_to_types, "Any"};
  if (WebFFICheckNumArgs(&sig, n) != 0) return -1;
  *metadata = n == 2 ? &args[1] : NULL;
  return 0;
}

/* The graph as text; as_map parses it into the Map form. */
static int wf_to_json_graph_common(const char* name, int as_map, const TVMFFIAny* args,
                                   int32_t n, TVMFFIAny* result) {
  const TVMFFIAny* metadata;
  if (wf_to_json_graph_args(name, args, n, &metadata) != 0) return -1;
  wf_buf text = {0};
  int rc = wf_json_graph_write(&args[0], metadata, &text);
  if (rc == 0) {
    rc = as_map ? wf_json_parse(text.data, text.size, result)
                : wf_str_make(0, text.data, text.size, result);
  }
  wf_buf_free(&text);
  return rc;
}

static int wf_to_json_graph(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_to_json_graph_common("ffi.ToJSONGraph", 1, args, n, result);
}

static int wf_to_json_graph_string(void* self, const TVMFFIAny* args, int32_t n,
                                   TVMFFIAny* result) {
  (void)self;
  return wf_to_json_graph_common("ffi.ToJSONGraphString", 0, args, n, result);
}

static const WebFFISignature wf_from_sig = {"ffi.FromJSONGraph", 1, wf_graph_from_types, "Any"};
static const WebFFISignature wf_from_str_sig = {"ffi.FromJSONGraphString", 1,
                                                wf_graph_from_str_types, "Any"};

static int wf_from_json_graph(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (WebFFICheckNumArgs(&wf_from_sig, n) != 0) return -1;
  return wf_json_graph_read(&args[0], result);
}

static int wf_from_json_graph_string(void* self, const TVMFFIAny* args, int32_t n,
                                     TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray text;
  TVMFFIAny graph;
  if (WebFFICheckNumArgs(&wf_from_str_sig, n) != 0 ||
      WebFFIArgToString(&wf_from_str_sig, args, 0, &text) != 0 ||
      wf_json_parse(text.data, text.size, &graph) != 0) {
    return -1;
  }
  int rc = wf_json_graph_read(&graph, result);
  wf_any_release(&graph);
  return rc;
}

int wf_json_graph_register(void) {
  if (wf_global_register("ffi.ToJSONGraph", wf_to_json_graph, NULL) != 0 ||
      wf_global_register("ffi.ToJSONGraphString", wf_to_json_graph_string, NULL) != 0 ||
      wf_global_register("ffi.FromJSONGraph", wf_from_json_graph, NULL) != 0 ||
      wf_global_register("ffi.FromJSONGraphString", wf_from_json_graph_string, NULL) != 0) {
    return -1;
  }
  return 0;
}
