/* The JSON graph form of values (ffi.ToJSONGraph / ffi.FromJSONGraph). */
#ifndef WEBFFI_SRC_JSON_GRAPH_H_
#define WEBFFI_SRC_JSON_GRAPH_H_

#include <tvm/ffi/c_api.h>

/* {"root_index", "nodes", "metadata" (when not NULL or None)} as a Map. */
int wf_json_graph_write(const TVMFFIAny* value, const TVMFFIAny* metadata, TVMFFIAny* out);
/* The value a graph (a parsed Map) describes; ValueError for malformed input. */
int wf_json_graph_read(const TVMFFIAny* graph, TVMFFIAny* out);

int wf_json_graph_register(void);

#endif /* WEBFFI_SRC_JSON_GRAPH_H_ */
