/* Text forms of values for ffi.ReprPrint. */
#include "repr.h"

#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "device.h"
#include "dtype.h"
#include "enum.h"
#include "error.h"
#include "float_format.h"
#include "function.h"
#include "global_registry.h"
#include "map.h"
#include "memo.h"
#include "nesting.h"
#include "reflection.h"
#include "sentinels.h"
#include "seq.h"
#include "shape.h"
#include "str.h"
#include "type_registry.h"
#include "unwind.h"

/* A string as upstream's EscapedStringPy writes it, a Python literal:
 * \n \t \r \\ \", other control bytes and DEL as \xNN, an ANSI colour
 * sequence (ESC [ digits m|K) kept as \x1b[..m, a UTF-8 sequence as
 * \uXXXX or \UXXXXXXXX, and a byte that starts none as \xNN. */
void wf_repr_quoted(const char* s, size_t n, wf_buf* out) {
  const unsigned char* u = (const unsigned char*)s;
  wf_buf_append(out, "\"", 1);
  size_t run = 0; /* bytes copied as they are, in one append */
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    wf_buf_append(out, s + run, i - run);
    if (c == 0x1b && i + 1 < n && u[i + 1] == '[') {
      size_t j = i + 2;
      while (j < n && ((u[j] >= '0' && u[j] <= '9') || u[j] == ';')) ++j;
      if (j < n && (u[j] == 'm' || u[j] == 'K')) {
        wf_buf_puts(out, "\\x1b");
        wf_buf_append(out, s + i + 1, j - i);
        run = i = j + 1;
        continue;
      }
    }
    size_t len = 1; /* bytes this step consumes */
    switch (c) {
      case '"': wf_buf_puts(out, "\\\""); break;
      case '\\': wf_buf_puts(out, "\\\\"); break;
      case '\n': wf_buf_puts(out, "\\n"); break;
      case '\r': wf_buf_puts(out, "\\r"); break;
      case '\t': wf_buf_puts(out, "\\t"); break;
      default: {
        /* the sequence's length, when its continuation bytes are all there */
        size_t want = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
        if (want > 1 && i + want - 1 < n) {
          uint32_t cp = c & (0x7f >> want);
          size_t k = 1;
          for (; k < want && (u[i + k] & 0xc0) == 0x80; ++k) cp = (cp << 6) | (u[i + k] & 0x3f);
          if (k == want) {
            wf_buf_printf(out, want == 4 ? "\\U%08x" : "\\u%04x", (unsigned)cp);
            len = want;
            break;
          }
        }
        wf_buf_printf(out, "\\x%02x", (unsigned)c);
      }
    }
    run = i += len;
  }
  wf_buf_append(out, s + run, n - run);
  wf_buf_append(out, "\"", 1);
}

/* Bytes as upstream writes them: b"..." with printable ASCII as it is and
 * every other byte (quote and backslash too) as \xNN. */
static void wf_repr_bytes(const char* s, size_t n, wf_buf* out) {
  wf_buf_puts(out, "b\"");
  size_t run = 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 32 && c < 127 && c != '"' && c != '\\') continue;
    wf_buf_append(out, s + run, i - run);
    wf_buf_printf(out, "\\x%02x", (unsigned)c);
    run = i + 1;
  }
  wf_buf_append(out, s + run, n - run);
  wf_buf_puts(out, "\"");
}

/* Printing never fails: a part that cannot be shown prints a placeholder
 * and its error is dropped. */
static void wf_repr_drop_error(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) TVMFFIObjectDecRef(err);
}

/* The objects being printed, outermost first, to cut cycles (one met
 * again inside itself prints `...`, as upstream); and those printed
 * already (value: where their text starts, aux: its length), so an object
 * reached again through another path is not walked again: its text is
 * repeated, as upstream does, while the output stays under
 * WF_REPR_REPEAT_BUDGET (texts up to WF_REPR_REPEAT_MAX bytes always),
 * and becomes `<shared TYPE>` beyond. Output and time stay linear in the
 * number of distinct objects, however many paths a DAG has. */
#define WF_REPR_REPEAT_MAX 64
#define WF_REPR_REPEAT_BUDGET ((size_t)1 << 20)

typedef struct {
  TVMFFIObject* open[WF_MAX_NESTING];
  int depth;
  wf_buf* out;
  wf_memo shown;
} wf_repr_ctx;

static void wf_repr_value(wf_repr_ctx* c, const TVMFFIAny* v);

/* An Array as a tuple (a lone element gets its comma: `(42,)`), a List as
 * a list. */
static void wf_repr_seq(wf_repr_ctx* c, TVMFFIObject* seq, int tuple) {
  wf_buf_puts(c->out, tuple ? "(" : "[");
  /* (the size read each time: a type's repr hook may change a List) */
  for (int64_t i = 0; i < wf_seq_size(seq); ++i) {
    if (i) wf_buf_puts(c->out, ", ");
    wf_repr_value(c, &wf_seq_data(seq)[i]);
  }
  wf_buf_puts(c->out, !tuple ? "]" : wf_seq_size(seq) == 1 ? ",)" : ")");
}

static void wf_repr_map(wf_repr_ctx* c, TVMFFIObject* map) {
  int first = 1;
  wf_buf_puts(c->out, "{");
  int64_t pos = 0;
  for (wf_map_entry* e; (e = wf_map_next(map, &pos)) != NULL; first = 0) {
    if (!first) wf_buf_puts(c->out, ", ");
    wf_repr_value(c, &e->key);
    wf_buf_puts(c->out, ": ");
    wf_repr_value(c, &e->value);
  }
  wf_buf_puts(c->out, "}");
}

typedef struct {
  wf_repr_ctx* c;
  TVMFFIObject* obj;
  int count;
} wf_repr_fields_ctx;

/* Whether a field shown before `field` has its name: a derived type that
 * declares a field of its parent's name again shows it once, as upstream. */
typedef struct {
  const TVMFFIFieldInfo* field;
  int shown;
} wf_repr_name_ctx;

static int wf_repr_name_seen(const TVMFFIFieldInfo* other, void* ctx) {
  wf_repr_name_ctx* n = (wf_repr_name_ctx*)ctx;
  if (other == n->field) return 1; /* reached it: stop */
  if (!(other->flags & kTVMFFIFieldFlagBitMaskReprOff) &&
      other->name.size == n->field->name.size &&
      memcmp(other->name.data, n->field->name.data, other->name.size) == 0) {
    n->shown = 1;
    return 1;
  }
  return 0;
}

static int wf_repr_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_repr_fields_ctx* f = (wf_repr_fields_ctx*)ctx;
  if (field->flags & kTVMFFIFieldFlagBitMaskReprOff) return 0;
  wf_repr_name_ctx seen = {field, 0};
  wf_reflect_visit_fields(f->obj->type_index, wf_repr_name_seen, &seen);
  if (seen.shown) return 0;
  TVMFFIAny v;
  wf_any_set_none(&v);
  wf_buf_puts(f->c->out, f->count++ ? ", " : "(");
  wf_buf_printf(f->c->out, "%s=", field->name.data);
  if (wf_reflect_get(f->obj, field, &v) != 0) {
    wf_repr_drop_error();
    wf_buf_puts(f->c->out, "<error>");
    return 0;
  }
  wf_repr_value(f->c, &v);
  wf_any_release(&v);
  return 0;
}

static void wf_repr_tensor(wf_repr_ctx* c, TVMFFIObject* obj) {
  const DLTensor* t = WF_OBJ_CELL(obj, DLTensor);
  if (wf_dtype_format(t->dtype, c->out) != 0) {
    wf_repr_drop_error();
    wf_buf_puts(c->out, "<unknown dtype>");
  }
  wf_buf_puts(c->out, "[");
  for (int32_t i = 0; i < t->ndim; ++i) {
    wf_buf_printf(c->out, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  }
  wf_buf_puts(c->out, "]@");
  wf_device_format(t->device, c->out);
}

/* Types may print themselves: the `__ffi_repr__` attribute, a function
 * (self, fn_repr) -> str, where fn_repr(value) prints a part. Parts print
 * in their own context; hooks nest at most WF_MAX_NESTING deep. */
#define wf_repr_hook_depth (wf_counters.repr_depth) /* unwind.h */

static int wf_repr_part(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  static const char* const types[] = {"Any"};
  static const WebFFISignature sig = {"fn_repr", 1, types, "str"};
  if (WebFFICheckNumArgs(&sig, n) != 0) return -1;
  wf_buf text = {0};
  if (wf_repr_hook_depth >= WF_MAX_NESTING) {
    wf_buf_puts(&text, "...");
  } else {
    wf_repr(&args[0], &text);
  }
  int rc = text.failed ? wf_err_raise_oom(text.capacity * 2)
                       : wf_str_make(0, text.data != NULL ? text.data : "", text.size, result);
  wf_buf_free(&text);
  return rc;
}

/* 1 when the type's hook printed obj. */
static int wf_repr_hook(wf_repr_ctx* c, TVMFFIObject* obj) {
  static const TVMFFIByteArray name = {"__ffi_repr__", 12};
  const TVMFFIAny* hook = wf_reflect_attr_func(obj->type_index, &name);
  if (hook == NULL) return 0;
  TVMFFIObject* part = wf_func_new(wf_repr_part, NULL, NULL);
  if (part == NULL) {
    wf_repr_drop_error();
    return 0;
  }
  TVMFFIAny args[2], r;
  wf_any_set_object(&args[0], obj);
  wf_any_set_object(&args[1], part);
  wf_any_set_none(&r);
  ++wf_repr_hook_depth;
  int rc = wf_func_call(hook->v_obj, args, 2, &r);
  --wf_repr_hook_depth;
  wf_obj_decref(part);
  TVMFFIByteArray text;
  int printed = rc == 0 && wf_any_string_view(&r, &text);
  if (printed) wf_buf_append(c->out, text.data, text.size);
  if (rc != 0) wf_repr_drop_error();
  wf_any_release(&r);
  return printed;
}

static void wf_repr_object(wf_repr_ctx* c, TVMFFIObject* obj) {
  switch (obj->type_index) {
    case kTVMFFIArray: wf_repr_seq(c, obj, 1); return;
    case kTVMFFIList: wf_repr_seq(c, obj, 0); return;
    case kTVMFFIMap:
    case kTVMFFIDict: wf_repr_map(c, obj); return;
    case kTVMFFITensor: wf_repr_tensor(c, obj); return;
    case kTVMFFIShape: {
      TVMFFIShapeCell* s = wf_shape_cell(obj);
      wf_buf_puts(c->out, "Shape(");
      for (size_t i = 0; i < s->size; ++i) {
        wf_buf_printf(c->out, "%s%lld", i ? ", " : "", (long long)s->data[i]);
      }
      wf_buf_puts(c->out, ")");
      return;
    }
    default: {
      if (obj == wf_kwargs_object() || obj == wf_missing_object()) {
        wf_buf_puts(c->out, obj == wf_kwargs_object() ? "<KWARGS>" : "<MISSING>");
        return;
      }
      if (wf_repr_hook(c, obj)) return;
      /* As upstream: an enum is `Class.name`; an object prints its fields
       * in parentheses, or only its type key when it shows none. */
      wf_buf_puts(c->out, wf_type_key(obj->type_index));
      TVMFFIByteArray name;
      if (wf_enum_kind_of(obj->type_index) != WF_ENUM_NONE) {
        if (wf_any_string_view(wf_enum_name(obj), &name)) {
          wf_buf_append(c->out, ".", 1);
          wf_buf_append(c->out, name.data, name.size);
        }
        return;
      }
      wf_repr_fields_ctx f = {c, obj, 0};
      wf_reflect_visit_fields(obj->type_index, wf_repr_field, &f);
      if (f.count > 0) wf_buf_puts(c->out, ")");
    }
  }
}

static void wf_repr_value(wf_repr_ctx* c, const TVMFFIAny* v) {
  TVMFFIByteArray s;
  if (wf_any_string_view(v, &s)) {
    wf_repr_quoted(s.data, s.size, c->out);
    return;
  }
  if (wf_any_bytes_view(v, &s)) {
    wf_repr_bytes(s.data, s.size, c->out);
    return;
  }
  switch (v->type_index) {
    case kTVMFFINone: wf_buf_puts(c->out, "None"); return;
    case kTVMFFIBool: wf_buf_puts(c->out, v->v_int64 ? "True" : "False"); return;
    case kTVMFFIInt: wf_buf_int(c->out, (long long)v->v_int64); return;
    case kTVMFFIFloat: wf_float_format_repr(v->v_float64, c->out); return;
    case kTVMFFIDevice: wf_device_format(v->v_device, c->out); return;
    case kTVMFFIDataType:
      if (wf_dtype_format(v->v_dtype, c->out) == 0) return;
      wf_repr_drop_error();
      wf_buf_puts(c->out, "<unknown dtype>");
      return;
    default: break;
  }
  if (!wf_any_is_object(v)) {
    /* other plain values (void*, DLTensor*, ...) print their type key */
    wf_buf_puts(c->out, wf_type_key(v->type_index));
    return;
  }
  for (int i = 0; i < c->depth; ++i) {
    if (c->open[i] == v->v_obj) {
      wf_buf_puts(c->out, "...");
      return;
    }
  }
  if (c->depth == WF_MAX_NESTING) {
    wf_buf_puts(c->out, "...");
    return;
  }
  wf_memo_entry* seen = wf_memo_find(&c->shown, v->v_obj, NULL);
  if (seen != NULL) {
    size_t n = (size_t)seen->aux;
    if (!c->out->failed && (n <= WF_REPR_REPEAT_MAX || c->out->size + n <= WF_REPR_REPEAT_BUDGET)) {
      wf_buf_append_own(c->out, (size_t)seen->value, n);
    } else {
      wf_buf_printf(c->out, "<shared %s>", wf_type_key(v->type_index));
    }
    return;
  }
  size_t start = c->out->size;
  c->open[c->depth++] = v->v_obj;
  wf_repr_object(c, v->v_obj);
  --c->depth;
  if (c->out->failed) return;
  seen = wf_memo_put(&c->shown, v->v_obj, NULL);
  if (seen == NULL) {
    wf_repr_drop_error(); /* printing goes on, only without the memo */
    return;
  }
  seen->value = start;
  seen->aux = (int64_t)(c->out->size - start);
}

void wf_repr(const TVMFFIAny* v, wf_buf* out) {
  wf_repr_ctx c = {{0}, 0, out, {0}};
  wf_repr_value(&c, v);
  wf_memo_free(&c.shown);
}

static const char* const wf_repr_any1[] = {"Any"};
static const WebFFISignature wf_repr_sig = {"ffi.ReprPrint", 1, wf_repr_any1, "str"};

static int wf_repr_print(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (WebFFICheckNumArgs(&wf_repr_sig, n) != 0) return -1;
  wf_buf text = {0};
  wf_repr(&args[0], &text);
  int rc = text.failed ? wf_err_raise_oom(text.capacity * 2)
                       : wf_str_make(0, text.data != NULL ? text.data : "", text.size, result);
  wf_buf_free(&text);
  return rc;
}

int wf_repr_register(void) { return wf_global_register("ffi.ReprPrint", wf_repr_print, NULL); }
