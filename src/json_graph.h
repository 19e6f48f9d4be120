/* The JSON graph form of values (ffi.ToJSONGraph / ffi.FromJSONGraph): a
 * flat list of nodes, children before parents, each distinct value once. */
#ifndef WEBFFI_SRC_JSON_GRAPH_H_
#define WEBFFI_SRC_JSON_GRAPH_H_

#include <tvm/ffi/c_api.h>

#include "buffer.h"

/* Appends `{"root_index":I,"nodes":[...]}` (with "metadata" when metadata is
 * neither NULL nor None). TypeError for types without a creator, ValueError
 * for a List/Dict that contains itself or nesting beyond the limit. */
int wf_json_graph_write(const TVMFFIAny* value, const TVMFFIAny* metadata, wf_buf* out);

/* The value a graph (a parsed Map) describes; ValueError for malformed input. */
int wf_json_graph_read(const TVMFFIAny* graph, TVMFFIAny* out);

/* Shared by writer and reader. */
int wf_json_graph_inline_field(const TVMFFIFieldInfo* field);
int wf_json_graph_no_creator(const char* type_key, const char* what);

int wf_json_graph_register(void);

#endif /* WEBFFI_SRC_JSON_GRAPH_H_ */
