/* Reads the JSON graph as hostile input. Nodes may come in any order (a
 * reference may point forwards), and only the nodes the root reaches are
 * read, as upstream reads them lazily. Reading needs no recursion: a node's
 * references are read first from an explicit stack, and a reference back
 * to a node whose references are still being read is a cycle. Nesting is
 * bounded so that freeing or printing the result stays within the stack,
 * and only types that can be created are ever made. */
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "base64.h"
#include "enum.h"
#include "error.h"
#include "function.h"
#include "json_graph.h"
#include "map.h"
#include "nesting.h"
#include "reflection.h"
#include "seq.h"
#include "shape.h"
#include "str.h"
#include "type_registry.h"

/* The value for key in a Map, or NULL. */
static const TVMFFIAny* wf_graph_get(TVMFFIObject* map, const char* key) {
  TVMFFIAny k;
  wf_any_set_none(&k);
  k.type_index = kTVMFFIRawStr;
  k.v_c_str = key;
  wf_map_entry* e = wf_map_find(map, &k);
  return e != NULL ? &e->value : NULL;
}

#define WF_GRAPH_INVALID "Invalid JSON Object Graph: "

enum { WF_NODE_UNREAD = 0, WF_NODE_OPEN = 1, WF_NODE_READ = 2 };

typedef struct {
  TVMFFIObject* nodes;  /* the graph's `nodes` Array */
  int64_t n;            /* its length */
  TVMFFIAny* values;    /* decoded nodes (None until read) */
  int32_t* depths;      /* how deep each decoded value nests */
  unsigned char* state; /* WF_NODE_* per node */
  int64_t current;      /* the node being decoded */
  int64_t* stack;       /* nodes waiting to be read, the top last */
  size_t stack_size, stack_capacity;
} wf_graph_reader;

static const TVMFFIByteArray wf_attr_from_json = {"__data_from_json__", 18};

static int wf_graph_bad_data(const wf_graph_reader* r, const char* type_key) {
  return wf_err_raise("ValueError", WF_GRAPH_INVALID "invalid data for `%s` in node %lld",
                      type_key, (long long)r->current);
}

/* A reference to an earlier node; anything else is an invalid index. The
 * nesting it adds is bounded, so freeing or printing the result (which
 * recurse) stays within the stack. */
static const TVMFFIAny* wf_graph_ref(const wf_graph_reader* r, const TVMFFIAny* ref) {
  if (ref->type_index != kTVMFFIInt) {
    wf_graph_bad_data(r, "node index");
    return NULL;
  }
  if (ref->v_int64 < 0 || ref->v_int64 >= r->n || r->state[ref->v_int64] != WF_NODE_READ) {
    wf_err_raise("ValueError", WF_GRAPH_INVALID "invalid node index %lld",
                 (long long)ref->v_int64);
    return NULL;
  }
  int32_t depth = r->depths[ref->v_int64] + 1;
  if (depth > WF_MAX_NESTING) {
    wf_err_raise("ValueError", WF_GRAPH_INVALID "nesting deeper than %d levels in node %lld",
                 WF_MAX_NESTING, (long long)r->current);
    return NULL;
  }
  if (depth > r->depths[r->current]) r->depths[r->current] = depth;
  return &r->values[ref->v_int64];
}

static int wf_graph_is_array(const TVMFFIAny* v) {
  return v != NULL && v->type_index == kTVMFFIArray;
}

/* An inline field value: null, bool, int, float, or a dtype string. */
static int wf_graph_inline_value(const wf_graph_reader* r, const char* key, const TVMFFIAny* v,
                                 TVMFFIAny* out) {
  TVMFFIByteArray s;
  switch (v->type_index) {
    case kTVMFFINone:
    case kTVMFFIBool:
    case kTVMFFIInt:
    case kTVMFFIFloat: *out = *v; return 0;
    default: break;
  }
  if (!wf_any_string_view(v, &s)) return wf_graph_bad_data(r, key);
  wf_any_set_none(out);
  out->type_index = kTVMFFIDataType;
  return TVMFFIDataTypeFromString(&s, &out->v_dtype);
}

typedef struct {
  const wf_graph_reader* r;
  TVMFFIObject* obj;
  TVMFFIObject* data;
  const char* type_key;
  int64_t matched;
} wf_graph_read_fields_ctx;

static int wf_graph_read_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_graph_read_fields_ctx* c = (wf_graph_read_fields_ctx*)ctx;
  const TVMFFIAny* given = wf_graph_get(c->data, field->name.data);
  TVMFFIAny value;
  wf_any_set_none(&value);
  if (given == NULL) {
    if (!(field->flags & kTVMFFIFieldFlagBitMaskHasDefault)) {
      return wf_err_raise("TypeError", "Required field `%s` not set in type `%s`",
                          field->name.data, c->type_key);
    }
    return wf_reflect_set_default(c->obj, field);
  }
  ++c->matched;
  if (wf_json_graph_inline_field(field)) {
    if (wf_graph_inline_value(c->r, c->type_key, given, &value) != 0) return -1;
    return wf_reflect_set(c->obj, field, &value);
  }
  const TVMFFIAny* ref = wf_graph_ref(c->r, given);
  return ref != NULL ? wf_reflect_set(c->obj, field, ref) : -1;
}

static int wf_graph_read_object(const wf_graph_reader* r, const char* key, size_t key_len,
                                const TVMFFIAny* data, TVMFFIAny* out) {
  TVMFFIByteArray k = {key, key_len};
  int32_t type_index = TVMFFITypeGetOrAllocIndex(&k, -1, 0, 0, 0, -2); /* query only */
  if (type_index < 0) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "unknown type `%.*s` in node %lld",
                        (int)key_len, key, (long long)r->current);
  }
  wf_enum_kind enum_kind = wf_enum_kind_of(type_index);
  if (enum_kind != WF_ENUM_NONE) {
    TVMFFIByteArray text;
    if (data == NULL || (enum_kind == WF_ENUM_INT ? data->type_index != kTVMFFIInt
                                                  : !wf_any_string_view(data, &text))) {
      return wf_graph_bad_data(r, wf_type_key(type_index));
    }
    return wf_enum_lookup(type_index, data, out);
  }
  const TVMFFIAny* hook = wf_reflect_attr_func(type_index, &wf_attr_from_json);
  if (hook != NULL) {
    TVMFFIAny none;
    wf_any_set_none(&none);
    return wf_func_call(hook->v_obj, data != NULL ? data : &none, 1, out);
  }
  if (!wf_reflect_can_create(type_index)) {
    return wf_json_graph_no_creator(wf_type_key(type_index), "FromJSONGraph");
  }
  if (data == NULL || (data->type_index != kTVMFFIMap && data->type_index != kTVMFFIDict)) {
    return wf_graph_bad_data(r, wf_type_key(type_index));
  }
  TVMFFIObject* made = NULL;
  if (wf_reflect_create(type_index, &made) != 0) return -1;
  wf_any_set_object(out, made);
  wf_graph_read_fields_ctx ctx = {r, made, data->v_obj, wf_type_key(type_index), 0};
  if (wf_reflect_visit_fields(type_index, wf_graph_read_field, &ctx) != 0) return -1;
  if (ctx.matched != wf_map_size(data->v_obj)) {
    int64_t pos = 0;
    for (wf_map_entry* e; (e = wf_map_next(data->v_obj, &pos)) != NULL;) {
      TVMFFIByteArray name = {"", 0};
      wf_any_string_view(&e->key, &name);
      if (wf_reflect_find_field(type_index, name.data, name.size) == NULL) {
        return wf_err_raise("ValueError", WF_GRAPH_INVALID "type `%s` has no field `%.*s`",
                            ctx.type_key, (int)name.size, name.data);
      }
    }
  }
  return 0;
}

/* Decodes one node from its type key and data into *out. */
static int wf_graph_read_node(wf_graph_reader* r, const TVMFFIByteArray* type,
                              const TVMFFIAny* data, TVMFFIAny* out) {
  wf_any_set_none(out);
  char key[128];
  if (type->size >= sizeof(key) || memchr(type->data, '\0', type->size) != NULL) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "unknown type in node %lld",
                        (long long)r->current);
  }
  memcpy(key, type->data, type->size);
  key[type->size] = '\0';
  TVMFFIByteArray s;
  if (strcmp(key, "None") == 0) return 0;
  if (strcmp(key, "int") == 0 || strcmp(key, "bool") == 0 || strcmp(key, "float") == 0) {
    int32_t want = key[0] == 'i' ? kTVMFFIInt : key[0] == 'b' ? kTVMFFIBool : kTVMFFIFloat;
    if (data == NULL) return wf_graph_bad_data(r, key);
    if (want == kTVMFFIFloat && data->type_index == kTVMFFIInt) {
      wf_any_set_float(out, (double)data->v_int64);
      return 0;
    }
    if (data->type_index != want) return wf_graph_bad_data(r, key);
    *out = *data;
    return 0;
  }
  if (strcmp(key, "DataType") == 0) {
    if (data == NULL || !wf_any_string_view(data, &s)) return wf_graph_bad_data(r, key);
    out->type_index = kTVMFFIDataType;
    return TVMFFIDataTypeFromString(&s, &out->v_dtype);
  }
  if (strcmp(key, "Device") == 0) {
    if (!wf_graph_is_array(data) || wf_seq_size(data->v_obj) != 2 ||
        wf_seq_data(data->v_obj)[0].type_index != kTVMFFIInt ||
        wf_seq_data(data->v_obj)[1].type_index != kTVMFFIInt) {
      return wf_err_raise("ValueError",
                          WF_GRAPH_INVALID "Device data must be [device_type, device_id] in node %lld",
                          (long long)r->current);
    }
    int64_t t = wf_seq_data(data->v_obj)[0].v_int64, id = wf_seq_data(data->v_obj)[1].v_int64;
    if (t < 0 || t > INT32_MAX || id < INT32_MIN || id > INT32_MAX) {
      return wf_graph_bad_data(r, key);
    }
    out->type_index = kTVMFFIDevice;
    out->v_device.device_type = (DLDeviceType)t;
    out->v_device.device_id = (int32_t)id;
    return 0;
  }
  if (strcmp(key, "ffi.String") == 0) {
    if (data == NULL || !wf_any_string_view(data, &s)) return wf_graph_bad_data(r, key);
    return wf_str_make(0, s.data, s.size, out);
  }
  if (strcmp(key, "ffi.Bytes") == 0) {
    if (data == NULL || !wf_any_string_view(data, &s)) return wf_graph_bad_data(r, key);
    wf_buf bytes = {0};
    int ok = wf_base64_decode(s.data, s.size, &bytes);
    int rc = !ok ? wf_err_raise("ValueError", WF_GRAPH_INVALID "invalid base64 in node %lld",
                                (long long)r->current)
             : bytes.failed ? wf_err_raise_oom(bytes.capacity * 2)
                            : wf_str_make(1, bytes.data != NULL ? bytes.data : "", bytes.size, out);
    wf_buf_free(&bytes);
    return rc;
  }
  int32_t seq_type = strcmp(key, "ffi.Array") == 0 ? kTVMFFIArray
                     : strcmp(key, "ffi.List") == 0 ? kTVMFFIList
                                                    : -1;
  int32_t map_type = strcmp(key, "ffi.Map") == 0 ? kTVMFFIMap
                     : strcmp(key, "ffi.Dict") == 0 ? kTVMFFIDict
                                                    : -1;
  int is_shape = strcmp(key, "ffi.Shape") == 0;
  if (seq_type < 0 && map_type < 0 && !is_shape) {
    return wf_graph_read_object(r, key, type->size, data, out);
  }
  if (!wf_graph_is_array(data)) return wf_graph_bad_data(r, key);
  TVMFFIAny* items = wf_seq_data(data->v_obj);
  int64_t n = wf_seq_size(data->v_obj);
  if (is_shape) {
    int64_t* dims = (int64_t*)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (dims == NULL) return wf_err_raise_oom((size_t)n * sizeof(int64_t));
    int64_t i = 0;
    for (; i < n && items[i].type_index == kTVMFFIInt; ++i) dims[i] = items[i].v_int64;
    TVMFFIObject* shape = i == n ? wf_shape_new(dims, (size_t)n) : NULL;
    free(dims);
    if (i != n) return wf_graph_bad_data(r, key);
    if (shape == NULL) return -1;
    wf_any_set_object(out, shape);
    return 0;
  }
  if (map_type >= 0 && n % 2 != 0) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "odd-length data for `%s` in node %lld",
                        key, (long long)r->current);
  }
  TVMFFIObject* container = seq_type >= 0 ? wf_seq_new(seq_type, n) : wf_map_new(map_type, n / 2);
  if (container == NULL) return -1;
  wf_any_set_object(out, container);
  for (int64_t i = 0; i < n; i += seq_type >= 0 ? 1 : 2) {
    const TVMFFIAny* a = wf_graph_ref(r, &items[i]);
    if (a == NULL) return -1;
    if (seq_type >= 0) {
      if (wf_seq_push(container, a) != 0) return -1;
      continue;
    }
    const TVMFFIAny* b = wf_graph_ref(r, &items[i + 1]);
    if (b == NULL || wf_map_set(container, a, b) != 0) return -1;
  }
  return 0;
}

/* A node's type text and data; ValueError when it is not a node. */
static int wf_graph_node_parts(const wf_graph_reader* r, int64_t i, TVMFFIByteArray* type,
                               const TVMFFIAny** data) {
  const TVMFFIAny* node = &wf_seq_data(r->nodes)[i];
  if (node->type_index != kTVMFFIMap && node->type_index != kTVMFFIDict) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "node %lld is not an object", (long long)i);
  }
  const TVMFFIAny* t = wf_graph_get(node->v_obj, "type");
  if (t == NULL || !wf_any_string_view(t, type)) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "missing `type` in node %lld", (long long)i);
  }
  *data = wf_graph_get(node->v_obj, "data");
  return 0;
}

static int wf_graph_push_node(wf_graph_reader* r, int64_t i) {
  if (r->stack_size == r->stack_capacity) {
    size_t cap = r->stack_capacity ? r->stack_capacity * 2 : 64;
    int64_t* grown = (int64_t*)realloc(r->stack, cap * sizeof(int64_t));
    if (grown == NULL) return wf_err_raise_oom(cap * sizeof(int64_t));
    r->stack = grown;
    r->stack_capacity = cap;
  }
  r->stack[r->stack_size++] = i;
  return 0;
}

/* Queues a reference of the node being opened; anything that is not a
 * valid index is left for decoding to report. */
static int wf_graph_push_ref(wf_graph_reader* r, const TVMFFIAny* ref) {
  if (ref->type_index != kTVMFFIInt || ref->v_int64 < 0 || ref->v_int64 >= r->n) return 0;
  switch (r->state[ref->v_int64]) {
    case WF_NODE_UNREAD: return wf_graph_push_node(r, ref->v_int64);
    case WF_NODE_OPEN:
      return wf_err_raise("ValueError", WF_GRAPH_INVALID "cycle through node %lld",
                          (long long)ref->v_int64);
    default: return 0;
  }
}

static int wf_graph_key_is(const TVMFFIByteArray* type, const char* key) {
  return type->size == strlen(key) && memcmp(type->data, key, type->size) == 0;
}

/* Queues the nodes node i refers to: a container's items, a reflected
 * object's fields stored as node indices. */
static int wf_graph_push_refs(wf_graph_reader* r, int64_t i) {
  TVMFFIByteArray type;
  const TVMFFIAny* data;
  if (wf_graph_node_parts(r, i, &type, &data) != 0) return -1;
  if (data == NULL || !wf_any_is_object(data)) return 0;
  if (wf_graph_key_is(&type, "ffi.Array") || wf_graph_key_is(&type, "ffi.List") ||
      wf_graph_key_is(&type, "ffi.Map") || wf_graph_key_is(&type, "ffi.Dict")) {
    if (!wf_graph_is_array(data)) return 0;
    for (int64_t k = 0; k < wf_seq_size(data->v_obj); ++k) {
      if (wf_graph_push_ref(r, &wf_seq_data(data->v_obj)[k]) != 0) return -1;
    }
    return 0;
  }
  if (data->type_index != kTVMFFIMap && data->type_index != kTVMFFIDict) return 0;
  int32_t type_index = TVMFFITypeGetOrAllocIndex(&type, -1, 0, 0, 0, -2); /* query only */
  if (type_index < kTVMFFIStaticObjectBegin || wf_enum_kind_of(type_index) != WF_ENUM_NONE ||
      wf_reflect_attr_func(type_index, &wf_attr_from_json) != NULL) {
    return 0;
  }
  int64_t pos = 0;
  for (wf_map_entry* e; (e = wf_map_next(data->v_obj, &pos)) != NULL;) {
    TVMFFIByteArray name;
    if (!wf_any_string_view(&e->key, &name)) continue;
    const TVMFFIFieldInfo* f = wf_reflect_find_field(type_index, name.data, name.size);
    if (f != NULL && !wf_json_graph_inline_field(f) && wf_graph_push_ref(r, &e->value) != 0) {
      return -1;
    }
  }
  return 0;
}

/* Reads node `root` and everything it reaches, references first. */
static int wf_graph_read_from(wf_graph_reader* r, int64_t root) {
  if (wf_graph_push_node(r, root) != 0) return -1;
  while (r->stack_size > 0) {
    int64_t i = r->stack[r->stack_size - 1];
    if (r->state[i] == WF_NODE_READ) { /* queued twice, read once */
      --r->stack_size;
      continue;
    }
    if (r->state[i] == WF_NODE_UNREAD) {
      r->state[i] = WF_NODE_OPEN;
      size_t before = r->stack_size;
      if (wf_graph_push_refs(r, i) != 0) return -1;
      if (r->stack_size != before) continue; /* back here once they are read */
    }
    TVMFFIByteArray type;
    const TVMFFIAny* data;
    r->current = i;
    if (wf_graph_node_parts(r, i, &type, &data) != 0 ||
        wf_graph_read_node(r, &type, data, &r->values[i]) != 0) {
      return -1;
    }
    /* a container is a level, empty or not (nesting.h) */
    if (r->depths[i] < 1 && wf_nesting_of(&r->values[i]) > 0) r->depths[i] = 1;
    r->state[i] = WF_NODE_READ;
    --r->stack_size;
  }
  return 0;
}

int wf_json_graph_read(const TVMFFIAny* graph, TVMFFIAny* out) {
  if (graph->type_index != kTVMFFIMap && graph->type_index != kTVMFFIDict) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "expected a JSON object");
  }
  const TVMFFIAny* root = wf_graph_get(graph->v_obj, "root_index");
  const TVMFFIAny* nodes = wf_graph_get(graph->v_obj, "nodes");
  if (root == NULL) return wf_err_raise("ValueError", WF_GRAPH_INVALID "missing `root_index`");
  if (nodes == NULL) return wf_err_raise("ValueError", WF_GRAPH_INVALID "missing `nodes`");
  if (root->type_index != kTVMFFIInt) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "`root_index` must be an integer");
  }
  if (!wf_graph_is_array(nodes)) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "`nodes` must be an array");
  }
  int64_t n = wf_seq_size(nodes->v_obj);
  if (root->v_int64 < 0 || root->v_int64 >= n) {
    return wf_err_raise("ValueError", WF_GRAPH_INVALID "invalid node index %lld",
                        (long long)root->v_int64);
  }
  size_t slots = (size_t)n;
  wf_graph_reader r = {nodes->v_obj, n, (TVMFFIAny*)calloc(slots, sizeof(TVMFFIAny)),
                       (int32_t*)calloc(slots, sizeof(int32_t)),
                       (unsigned char*)calloc(slots, 1), 0, NULL, 0, 0};
  int rc;
  if (r.values == NULL || r.depths == NULL || r.state == NULL) {
    rc = wf_err_raise_oom(slots * (sizeof(TVMFFIAny) + sizeof(int32_t) + 1));
  } else {
    rc = wf_graph_read_from(&r, root->v_int64);
  }
  if (rc == 0) {
    *out = r.values[root->v_int64];
    wf_any_set_none(&r.values[root->v_int64]);
  }
  if (r.values != NULL) {
    for (int64_t i = 0; i < n; ++i) wf_any_release(&r.values[i]);
  }
  free(r.values);
  free(r.depths);
  free(r.state);
  free(r.stack);
  return rc;
}
