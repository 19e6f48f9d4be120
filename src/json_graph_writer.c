/* Writes the JSON graph as text in one pass. Post-order means a node is
 * complete once its children are, so each node's text is appended as soon
 * as it is finished; the root is always the last node. */
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "base64.h"
#include "device.h"
#include "dtype.h"
#include "enum.h"
#include "error.h"
#include "float_format.h"
#include "function.h"
#include "json.h"
#include "json_graph.h"
#include "map.h"
#include "nesting.h"
#include "reflection.h"
#include "repr.h"
#include "seq.h"
#include "shape.h"
#include "str.h"
#include "type_registry.h"

typedef struct {
  wf_buf* nodes;       /* the nodes' text, comma-separated */
  int64_t count;       /* nodes written */
  TVMFFIObject* index; /* value -> node index; -1 while its children are written */
  int64_t* pending;    /* child indices of the nodes being written, a stack */
  size_t pending_size, pending_capacity;
} wf_graph_writer;

static int wf_graph_write(wf_graph_writer* w, const TVMFFIAny* v, int depth, int64_t* out);

static const TVMFFIByteArray wf_attr_to_json = {"__data_to_json__", 16};

static int wf_graph_push(wf_graph_writer* w, int64_t index) {
  if (w->pending_size == w->pending_capacity) {
    size_t cap = w->pending_capacity ? w->pending_capacity * 2 : 64;
    int64_t* grown = (int64_t*)realloc(w->pending, cap * sizeof(int64_t));
    if (grown == NULL) return wf_err_raise_oom(cap * sizeof(int64_t));
    w->pending = grown;
    w->pending_capacity = cap;
  }
  w->pending[w->pending_size++] = index;
  return 0;
}

static int wf_graph_write_child(wf_graph_writer* w, const TVMFFIAny* child, int depth) {
  int64_t i = -1;
  return wf_graph_write(w, child, depth + 1, &i) != 0 ? -1 : wf_graph_push(w, i);
}

/* Node indices pending[from..] as a JSON list. */
static void wf_graph_index_list(wf_graph_writer* w, size_t from) {
  wf_buf_append(w->nodes, "[", 1);
  for (size_t i = from; i < w->pending_size; ++i) {
    if (i > from) wf_buf_append(w->nodes, ",", 1);
    wf_buf_int(w->nodes, w->pending[i]);
  }
  wf_buf_append(w->nodes, "]", 1);
}

static int wf_graph_is_pod(const TVMFFIAny* v) {
  switch (v->type_index) {
    case kTVMFFINone:
    case kTVMFFIInt:
    case kTVMFFIBool:
    case kTVMFFIFloat:
    case kTVMFFIDataType:
      return 1;
    default:
      return 0;
  }
}

/* Writes POD values as JSON literals: null, true, 3, 2.5, "float32". */
static int wf_graph_literal(wf_buf* out, const TVMFFIAny* v) {
  switch (v->type_index) {
    case kTVMFFINone: wf_buf_puts(out, "null"); return 0;
    case kTVMFFIBool: wf_buf_puts(out, v->v_int64 ? "true" : "false"); return 0;
    case kTVMFFIInt: wf_buf_int(out, v->v_int64); return 0;
    case kTVMFFIFloat: wf_float_format_json(v->v_float64, out); return 0;
    default: /* DataType: its text needs no escaping */
      wf_buf_append(out, "\"", 1);
      if (wf_dtype_format(v->v_dtype, out) != 0) return -1;
      wf_buf_append(out, "\"", 1);
      return 0;
  }
}

/* Reflected objects go in two passes over the fields: first the children
 * (pushed in field order), then the text, which inlines POD fields and
 * takes the children's indices in the same order. */
typedef struct {
  wf_graph_writer* w;
  TVMFFIObject* obj;
  int depth;
  size_t next; /* pass 2: the next pending index to use */
  int writing; /* 0: pass 1, 1: pass 2 */
} wf_graph_fields_ctx;

static int wf_graph_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_graph_fields_ctx* c = (wf_graph_fields_ctx*)ctx;
  wf_buf* out = c->w->nodes;
  TVMFFIAny value;
  wf_any_set_none(&value);
  if (wf_reflect_get(c->obj, field, &value) != 0) return -1;
  /* The reader decides by the field's declared type alone, so must we. */
  int inline_pod = wf_json_graph_inline_field(field);
  if (inline_pod && !wf_graph_is_pod(&value)) {
    const char* got = wf_type_key(value.type_index);
    wf_any_release(&value);
    return wf_err_raise("TypeError", "Field `%s` of type `%s` is declared `%s` but holds `%s`",
                        field->name.data, wf_type_key(c->obj->type_index),
                        wf_type_key(field->field_static_type_index), got);
  }
  int rc = 0;
  if (!c->writing) {
    if (!inline_pod) rc = wf_graph_write_child(c->w, &value, c->depth);
  } else {
    if (out->size > 0 && out->data[out->size - 1] != '{') wf_buf_append(out, ",", 1);
    wf_json_quoted(field->name.data, field->name.size, out);
    wf_buf_append(out, ":", 1);
    if (inline_pod) {
      rc = wf_graph_literal(out, &value);
    } else {
      wf_buf_int(out, c->w->pending[c->next++]);
    }
  }
  wf_any_release(&value);
  return rc;
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

/* Writes the children of v (pushing their indices), then v's node. */
static int wf_graph_node(wf_graph_writer* w, const TVMFFIAny* v, int depth) {
  wf_buf* out = w->nodes;
  size_t base = w->pending_size;
  TVMFFIByteArray s;
  int is_string = wf_any_string_view(v, &s);
  int is_bytes = !is_string && wf_any_bytes_view(v, &s);
  const char* key = is_string ? "ffi.String" : is_bytes ? "ffi.Bytes" : wf_type_key(v->type_index);
  int32_t t = v->type_index;
  wf_graph_fields_ctx fields = {w, NULL, depth, base, 0};
  const TVMFFIAny* enum_index = NULL;
  const TVMFFIAny* hook = NULL;
  TVMFFIAny enum_int, custom;
  wf_any_set_none(&custom);

  /* children first */
  if (!is_string && !is_bytes && wf_any_is_object(v)) {
    TVMFFIObject* obj = v->v_obj;
    if (t == kTVMFFIArray || t == kTVMFFIList) {
      for (int64_t i = 0; i < wf_seq_size(obj); ++i) {
        if (wf_graph_write_child(w, &wf_seq_data(obj)[i], depth) != 0) return -1;
      }
    } else if (t == kTVMFFIMap || t == kTVMFFIDict) {
      int64_t pos = 0;
      for (wf_map_entry* e; (e = wf_map_next(obj, &pos)) != NULL;) {
        if (wf_graph_write_child(w, &e->key, depth) != 0 ||
            wf_graph_write_child(w, &e->value, depth) != 0) {
          return -1;
        }
      }
    } else if (t != kTVMFFIShape) {
      /* An enum is its canonical index; a type with `__data_to_json__` is
       * what its hook returns (plain JSON, no nodes); others their fields. */
      if (wf_enum_kind_of(t) != WF_ENUM_NONE) {
        enum_index = wf_enum_canonical_index(obj, &enum_int);
      } else if ((hook = wf_reflect_attr_func(t, &wf_attr_to_json)) != NULL) {
        if (wf_func_call(hook->v_obj, v, 1, &custom) != 0) return -1;
      } else {
        if (!wf_reflect_can_create(t)) return wf_json_graph_no_creator(key, "ToJSONGraph");
        fields.obj = obj;
        if (wf_reflect_visit_fields(t, wf_graph_field, &fields) != 0) return -1;
      }
    }
  } else if (!is_string && !is_bytes && !wf_graph_is_pod(v) && t != kTVMFFIDevice) {
    return wf_json_graph_no_creator(key, "ToJSONGraph"); /* void*, DLTensor*, ... */
  }

  /* then the node itself */
  if (w->count > 0) wf_buf_append(out, ",", 1);
  wf_buf_puts(out, "{\"type\":");
  wf_json_quoted(key, strlen(key), out);
  int rc = 0;
  if (t != kTVMFFINone) {
    wf_buf_puts(out, ",\"data\":");
    if (is_string) {
      wf_json_quoted(s.data, s.size, out);
    } else if (is_bytes) {
      wf_buf_append(out, "\"", 1);
      wf_base64_encode((const unsigned char*)s.data, s.size, out);
      wf_buf_append(out, "\"", 1);
    } else if (wf_graph_is_pod(v)) {
      rc = wf_graph_literal(out, v);
    } else if (t == kTVMFFIDevice) {
      wf_buf_append(out, "[", 1);
      wf_buf_int(out, v->v_device.device_type);
      wf_buf_append(out, ",", 1);
      wf_buf_int(out, v->v_device.device_id);
      wf_buf_append(out, "]", 1);
    } else if (t == kTVMFFIShape) {
      TVMFFIShapeCell* shape = wf_shape_cell(v->v_obj);
      wf_buf_append(out, "[", 1);
      for (size_t i = 0; i < shape->size; ++i) {
        if (i) wf_buf_append(out, ",", 1);
        wf_buf_int(out, shape->data[i]);
      }
      wf_buf_append(out, "]", 1);
    } else if (enum_index != NULL) {
      TVMFFIByteArray text;
      if (wf_any_string_view(enum_index, &text)) {
        wf_json_quoted(text.data, text.size, out);
      } else {
        rc = wf_graph_literal(out, enum_index);
      }
    } else if (hook != NULL) {
      rc = wf_json_write(&custom, -1, out);
    } else if (fields.obj != NULL) {
      wf_buf_append(out, "{", 1);
      fields.writing = 1;
      rc = wf_reflect_visit_fields(t, wf_graph_field, &fields);
      wf_buf_append(out, "}", 1);
    } else {
      wf_graph_index_list(w, base);
    }
  }
  wf_buf_append(out, "}", 1);
  wf_any_release(&custom);
  w->pending_size = base;
  if (rc != 0) return -1;
  return out->failed ? wf_err_raise_oom(out->capacity * 2) : 0;
}

/* A container is indexed by its address (an opaque pointer: containers
 * compare by identity anyway), so the index's own nesting stays 1. */
static const TVMFFIAny* wf_graph_key(const TVMFFIAny* v, TVMFFIAny* scratch) {
  int32_t t = v->type_index;
  if (t != kTVMFFIArray && t != kTVMFFIList && t != kTVMFFIMap && t != kTVMFFIDict) return v;
  wf_any_set_none(scratch);
  scratch->type_index = kTVMFFIOpaquePtr;
  scratch->v_ptr = v->v_obj;
  return scratch;
}

static int wf_graph_write(wf_graph_writer* w, const TVMFFIAny* value, int depth, int64_t* out) {
  if (depth > WF_MAX_NESTING) {
    return wf_err_raise("ValueError", "ToJSONGraph: nesting deeper than %d levels",
                        WF_MAX_NESTING);
  }
  TVMFFIAny scratch;
  const TVMFFIAny* v = wf_graph_key(value, &scratch);
  wf_map_entry* seen = wf_map_find(w->index, v);
  if (seen != NULL) {
    if (seen->value.v_int64 < 0) {
      return wf_err_raise("ValueError", "Cycle detected during serialization: a %s contains itself",
                          wf_graph_short_name(value->type_index));
    }
    *out = seen->value.v_int64;
    return 0;
  }
  TVMFFIAny index;
  wf_any_set_int(&index, -1);
  if ((wf_any_is_object(v) || v != value) && wf_map_set(w->index, v, &index) != 0) return -1;
  if (wf_graph_node(w, value, depth) != 0) return -1;
  *out = w->count++;
  wf_any_set_int(&index, *out);
  return wf_map_set(w->index, v, &index);
}

int wf_json_graph_write(const TVMFFIAny* value, const TVMFFIAny* metadata, wf_buf* out) {
  wf_buf nodes = {0};
  wf_graph_writer w = {&nodes, 0, wf_map_new(kTVMFFIDict, 0), NULL, 0, 0};
  int64_t root = -1;
  int rc = w.index == NULL ? -1 : wf_graph_write(&w, value, 0, &root);
  if (rc == 0) {
    wf_buf_puts(out, "{\"root_index\":");
    wf_buf_int(out, root);
    wf_buf_puts(out, ",\"nodes\":[");
    wf_buf_append(out, nodes.data, nodes.size);
    wf_buf_puts(out, "]");
    if (metadata != NULL && metadata->type_index != kTVMFFINone) {
      wf_buf_puts(out, ",\"metadata\":");
      rc = wf_json_write(metadata, -1, out);
    }
    wf_buf_puts(out, "}");
    if (rc == 0 && out->failed) rc = wf_err_raise_oom(out->capacity * 2);
  }
  if (w.index != NULL) wf_obj_decref(w.index);
  free(w.pending);
  wf_buf_free(&nodes);
  return rc;
}
