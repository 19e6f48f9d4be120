/* The JSON graph: any value as a flat list of nodes, children before
 * parents, each distinct value once (ffi.ToJSONGraph / ffi.FromJSONGraph).
 * The reader treats its input as hostile: every reference must point at an
 * earlier node, so it needs no recursion and cannot loop, and it only
 * creates types that have a creator. */
#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "base64.h"
#include "dtype.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "json.h"
#include "json_graph.h"
#include "map.h"
#include "nesting.h"
#include "reflection.h"
#include "seq.h"
#include "shape.h"
#include "str.h"
#include "type_registry.h"

/* Fields of these static types are written inline, the rest as node indices. */
static int wf_graph_inline_field(const TVMFFIFieldInfo* f) {
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

static int wf_graph_set_str(TVMFFIObject* map, const char* key, const char* value, size_t n) {
  TVMFFIAny k, v;
  if (wf_str_make(0, value, n, &v) != 0) return -1;
  wf_any_set_none(&k);
  k.type_index = kTVMFFIRawStr;
  k.v_c_str = key;
  int rc = wf_map_set(map, &k, &v);
  wf_any_release(&v);
  return rc;
}

/* map[key] = value, where value is owned and handed over. */
static int wf_graph_set_owned(TVMFFIObject* map, const char* key, TVMFFIAny* value) {
  TVMFFIAny k;
  wf_any_set_none(&k);
  k.type_index = kTVMFFIRawStr;
  k.v_c_str = key;
  int rc = wf_map_set(map, &k, value);
  wf_any_release(value);
  return rc;
}

/* The value for key in a Map, or NULL. */
static const TVMFFIAny* wf_graph_get(TVMFFIObject* map, const char* key) {
  TVMFFIAny k;
  wf_any_set_none(&k);
  k.type_index = kTVMFFIRawStr;
  k.v_c_str = key;
  wf_map_entry* e = wf_map_find(map, &k);
  return e != NULL ? &e->value : NULL;
}

/* ---------------------------------------------------------------- writer */
typedef struct {
  TVMFFIObject* nodes; /* Array of node Maps */
  TVMFFIObject* index; /* value -> node index; -1 while its children are written */
  wf_buf text;         /* scratch for dtype and base64 text */
} wf_graph_writer;

static int wf_graph_write(wf_graph_writer* w, const TVMFFIAny* v, int depth, int64_t* out);

static int wf_graph_no_creator(const char* key, const char* what) {
  return wf_err_raise("TypeError",
                      "Type `%s` does not support %s (no native creator or __ffi_new__ type attr)",
                      key, what);
}

/* Appends indices of children to a data Array. */
static int wf_graph_push_index(wf_graph_writer* w, TVMFFIObject* data, const TVMFFIAny* child,
                               int depth) {
  int64_t i;
  if (wf_graph_write(w, child, depth + 1, &i) != 0) return -1;
  TVMFFIAny iv;
  wf_any_set_int(&iv, i);
  return wf_seq_push_owned(data, &iv);
}

typedef struct {
  wf_graph_writer* w;
  TVMFFIObject* obj;
  TVMFFIObject* data;
  int depth;
} wf_graph_fields_ctx;

static int wf_graph_write_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_graph_fields_ctx* c = (wf_graph_fields_ctx*)ctx;
  TVMFFIAny value;
  wf_any_set_none(&value);
  if (wf_reflect_get(c->obj, field, &value) != 0) return -1;
  int inline_pod = wf_graph_inline_field(field) &&
                   (value.type_index == kTVMFFINone || value.type_index == kTVMFFIInt ||
                    value.type_index == kTVMFFIBool || value.type_index == kTVMFFIFloat ||
                    value.type_index == kTVMFFIDataType);
  int rc = 0;
  if (inline_pod && value.type_index == kTVMFFIDataType) {
    wf_buf_reset(&c->w->text);
    rc = wf_dtype_format(value.v_dtype, &c->w->text);
    if (rc == 0) rc = wf_str_make(0, c->w->text.data, c->w->text.size, &value);
  } else if (!inline_pod) {
    int64_t i;
    rc = wf_graph_write(c->w, &value, c->depth + 1, &i);
    wf_any_release(&value);
    wf_any_set_int(&value, i);
  }
  if (rc != 0) {
    wf_any_release(&value);
    return -1;
  }
  return wf_graph_set_owned(c->data, field->name.data, &value);
}

/* Fills `data` (the node's payload) for v; children are written first. */
static int wf_graph_data(wf_graph_writer* w, const TVMFFIAny* v, int depth, TVMFFIAny* data,
                         const char** type_key) {
  TVMFFIByteArray s;
  wf_any_set_none(data);
  if (wf_any_string_view(v, &s)) {
    *type_key = "ffi.String";
    return wf_str_make(0, s.data, s.size, data);
  }
  if (wf_any_bytes_view(v, &s)) {
    *type_key = "ffi.Bytes";
    wf_buf_reset(&w->text);
    wf_base64_encode((const unsigned char*)s.data, s.size, &w->text);
    if (w->text.failed) return wf_err_raise_oom(w->text.capacity * 2);
    return wf_str_make(0, w->text.data != NULL ? w->text.data : "", w->text.size, data);
  }
  *type_key = wf_type_key(v->type_index);
  switch (v->type_index) {
    case kTVMFFINone: return 0;
    case kTVMFFIInt:
    case kTVMFFIBool:
    case kTVMFFIFloat: *data = *v; return 0;
    case kTVMFFIDataType:
      wf_buf_reset(&w->text);
      if (wf_dtype_format(v->v_dtype, &w->text) != 0) return -1;
      return wf_str_make(0, w->text.data, w->text.size, data);
    case kTVMFFIDevice: {
      TVMFFIObject* pair = wf_seq_new(kTVMFFIArray, 2);
      if (pair == NULL) return -1;
      TVMFFIAny t, id;
      wf_any_set_int(&t, v->v_device.device_type);
      wf_any_set_int(&id, v->v_device.device_id);
      wf_seq_push_owned(pair, &t);
      wf_seq_push_owned(pair, &id);
      wf_any_set_object(data, pair);
      return 0;
    }
    default: break;
  }
  if (!wf_any_is_object(v)) return wf_graph_no_creator(*type_key, "ToJSONGraph");
  TVMFFIObject* obj = v->v_obj;
  switch (v->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList:
    case kTVMFFIMap:
    case kTVMFFIDict:
    case kTVMFFIShape: {
      int is_seq = v->type_index == kTVMFFIArray || v->type_index == kTVMFFIList;
      int is_map = v->type_index == kTVMFFIMap || v->type_index == kTVMFFIDict;
      int64_t n = is_seq ? wf_seq_size(obj) : is_map ? 2 * wf_map_size(obj)
                                                     : (int64_t)wf_shape_cell(obj)->size;
      TVMFFIObject* list = wf_seq_new(kTVMFFIArray, n);
      if (list == NULL) return -1;
      wf_any_set_object(data, list);
      if (is_seq) {
        for (int64_t i = 0; i < n; ++i) {
          if (wf_graph_push_index(w, list, &wf_seq_data(obj)[i], depth) != 0) return -1;
        }
      } else if (is_map) {
        int64_t pos = 0;
        for (wf_map_entry* e; (e = wf_map_next(obj, &pos)) != NULL;) {
          if (wf_graph_push_index(w, list, &e->key, depth) != 0 ||
              wf_graph_push_index(w, list, &e->value, depth) != 0) {
            return -1;
          }
        }
      } else {
        for (int64_t i = 0; i < n; ++i) {
          TVMFFIAny dim;
          wf_any_set_int(&dim, wf_shape_cell(obj)->data[i]);
          wf_seq_push_owned(list, &dim);
        }
      }
      return 0;
    }
    default: {
      if (wf_reflect_creator(v->type_index) == NULL) {
        return wf_graph_no_creator(*type_key, "ToJSONGraph");
      }
      TVMFFIObject* fields = wf_map_new(kTVMFFIMap, 0);
      if (fields == NULL) return -1;
      wf_any_set_object(data, fields);
      wf_graph_fields_ctx ctx = {w, obj, fields, depth};
      return wf_reflect_visit_fields(v->type_index, wf_graph_write_field, &ctx);
    }
  }
}

static const char* wf_graph_short_name(int32_t type_index) {
  switch (type_index) {
    case kTVMFFIList: return "List";
    case kTVMFFIDict: return "Dict";
    case kTVMFFIArray: return "Array";
    case kTVMFFIMap: return "Map";
    default: return wf_type_key(type_index);
  }
}

static int wf_graph_write(wf_graph_writer* w, const TVMFFIAny* v, int depth, int64_t* out) {
  if (depth > WF_MAX_NESTING) {
    return wf_err_raise("ValueError", "ToJSONGraph: nesting deeper than %d levels",
                        WF_MAX_NESTING);
  }
  wf_map_entry* seen = wf_map_find(w->index, v);
  if (seen != NULL) {
    if (seen->value.v_int64 < 0) {
      return wf_err_raise("ValueError", "Cycle detected during serialization: a %s contains itself",
                          wf_graph_short_name(v->type_index));
    }
    *out = seen->value.v_int64;
    return 0;
  }
  TVMFFIAny mark;
  wf_any_set_int(&mark, -1);
  if (wf_any_is_object(v) && wf_map_set(w->index, v, &mark) != 0) return -1;
  const char* type_key = NULL;
  TVMFFIAny data;
  TVMFFIObject* node = NULL;
  if (wf_graph_data(w, v, depth, &data, &type_key) != 0 ||
      (node = wf_map_new(kTVMFFIMap, 2)) == NULL ||
      wf_graph_set_str(node, "type", type_key, strlen(type_key)) != 0 ||
      (v->type_index != kTVMFFINone && wf_graph_set_owned(node, "data", &data) != 0)) {
    wf_any_release(&data);
    if (node != NULL) wf_obj_decref(node);
    return -1;
  }
  TVMFFIAny node_any, index;
  wf_any_set_object(&node_any, node);
  *out = wf_seq_size(w->nodes);
  wf_any_set_int(&index, *out);
  if (wf_seq_push_owned(w->nodes, &node_any) != 0) return -1;
  return wf_map_set(w->index, v, &index);
}

int wf_json_graph_write(const TVMFFIAny* value, const TVMFFIAny* metadata, TVMFFIAny* out) {
  wf_graph_writer w = {wf_seq_new(kTVMFFIArray, 0), wf_map_new(kTVMFFIDict, 0), {0}};
  TVMFFIObject* graph = wf_map_new(kTVMFFIMap, 3);
  int64_t root = -1;
  int rc = w.nodes == NULL || w.index == NULL || graph == NULL ? -1 : 0;
  if (rc == 0) rc = wf_graph_write(&w, value, 0, &root);
  if (rc == 0) {
    TVMFFIAny r, nodes;
    wf_any_set_int(&r, root);
    wf_any_set_object(&nodes, w.nodes);
    wf_obj_incref(w.nodes);
    rc = wf_graph_set_owned(graph, "root_index", &r);
    if (rc == 0) rc = wf_graph_set_owned(graph, "nodes", &nodes);
    if (rc == 0 && metadata != NULL && metadata->type_index != kTVMFFINone) {
      TVMFFIAny k;
      wf_any_set_none(&k);
      k.type_index = kTVMFFIRawStr;
      k.v_c_str = "metadata";
      rc = wf_map_set(graph, &k, metadata);
    }
  }
  if (w.nodes != NULL) wf_obj_decref(w.nodes);
  if (w.index != NULL) wf_obj_decref(w.index);
  wf_buf_free(&w.text);
  if (rc != 0) {
    if (graph != NULL) wf_obj_decref(graph);
    return -1;
  }
  wf_any_set_object(out, graph);
  return 0;
}

/* ---------------------------------------------------------------- reader */
#define WF_GRAPH_INVALID "Invalid JSON Object Graph: "

typedef struct {
  TVMFFIAny* values; /* decoded nodes so far */
  int32_t* depths;   /* how deep each decoded value nests */
  int64_t count;
  int64_t current; /* the node being decoded */
} wf_graph_reader;

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
  if (ref->v_int64 < 0 || ref->v_int64 >= r->current) {
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
    if (field->flags & kTVMFFIFieldFlagBitMaskDefaultFromFactory) {
      const TVMFFIAny* factory = &field->default_value_or_factory;
      if (factory->type_index != kTVMFFIFunction ||
          wf_func_call(factory->v_obj, NULL, 0, &value) != 0) {
        return factory->type_index != kTVMFFIFunction
                   ? wf_err_raise("TypeError", "Default factory of field `%s` is not a function",
                                  field->name.data)
                   : -1;
      }
      int rc = wf_reflect_set(c->obj, field, &value);
      wf_any_release(&value);
      return rc;
    }
    return wf_reflect_set(c->obj, field, &field->default_value_or_factory);
  }
  ++c->matched;
  if (wf_graph_inline_field(field)) {
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
  int (*creator)(TVMFFIObjectHandle*) = wf_reflect_creator(type_index);
  if (creator == NULL) return wf_graph_no_creator(wf_type_key(type_index), "FromJSONGraph");
  if (data == NULL || (data->type_index != kTVMFFIMap && data->type_index != kTVMFFIDict)) {
    return wf_graph_bad_data(r, wf_type_key(type_index));
  }
  TVMFFIObjectHandle made = NULL;
  if (creator(&made) != 0) return -1;
  wf_any_set_object(out, (TVMFFIObject*)made);
  wf_graph_read_fields_ctx ctx = {r, (TVMFFIObject*)made, data->v_obj, wf_type_key(type_index), 0};
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
  size_t slots = (size_t)(n > 0 ? n : 1);
  wf_graph_reader r = {(TVMFFIAny*)calloc(slots, sizeof(TVMFFIAny)),
                       (int32_t*)calloc(slots, sizeof(int32_t)), 0, 0};
  if (r.values == NULL || r.depths == NULL) {
    free(r.values);
    free(r.depths);
    return wf_err_raise_oom(slots * (sizeof(TVMFFIAny) + sizeof(int32_t)));
  }
  int rc = 0;
  for (; r.current < n && rc == 0; ++r.current) {
    const TVMFFIAny* node = &wf_seq_data(nodes->v_obj)[r.current];
    const TVMFFIAny* type = NULL;
    TVMFFIByteArray type_text;
    if (node->type_index != kTVMFFIMap && node->type_index != kTVMFFIDict) {
      rc = wf_err_raise("ValueError", WF_GRAPH_INVALID "node %lld is not an object",
                        (long long)r.current);
    } else if ((type = wf_graph_get(node->v_obj, "type")) == NULL ||
               !wf_any_string_view(type, &type_text)) {
      rc = wf_err_raise("ValueError", WF_GRAPH_INVALID "missing `type` in node %lld",
                        (long long)r.current);
    } else {
      rc = wf_graph_read_node(&r, &type_text, wf_graph_get(node->v_obj, "data"),
                              &r.values[r.current]);
    }
    r.count = r.current + 1;
  }
  if (rc == 0 && (root->v_int64 < 0 || root->v_int64 >= n)) {
    rc = wf_err_raise("ValueError", WF_GRAPH_INVALID "invalid node index %lld",
                      (long long)root->v_int64);
  }
  if (rc == 0) {
    *out = r.values[root->v_int64];
    wf_any_set_none(&r.values[root->v_int64]);
  }
  for (int64_t i = 0; i < r.count; ++i) wf_any_release(&r.values[i]);
  free(r.values);
  free(r.depths);
  return rc;
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

static int wf_to_json_graph(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  const TVMFFIAny* metadata;
  if (wf_to_json_graph_args("ffi.ToJSONGraph", args, n, &metadata) != 0) return -1;
  return wf_json_graph_write(&args[0], metadata, result);
}

static int wf_to_json_graph_string(void* self, const TVMFFIAny* args, int32_t n,
                                   TVMFFIAny* result) {
  (void)self;
  const TVMFFIAny* metadata;
  TVMFFIAny graph;
  if (wf_to_json_graph_args("ffi.ToJSONGraphString", args, n, &metadata) != 0 ||
      wf_json_graph_write(&args[0], metadata, &graph) != 0) {
    return -1;
  }
  wf_buf text = {0};
  int rc = wf_json_write(&graph, -1, &text);
  if (rc == 0) rc = wf_str_make(0, text.data, text.size, result);
  wf_buf_free(&text);
  wf_any_release(&graph);
  return rc;
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
