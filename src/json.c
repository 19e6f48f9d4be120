/* A strict JSON reader and writer over TVMFFIAny values. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "float_format.h"
#include "global_registry.h"
#include "map.h"
#include "memo.h"
#include "nesting.h"
#include "seq.h"
#include "str.h"
#include "type_registry.h"

typedef struct {
  const char* begin;
  const char* p;
  const char* end;
  wf_buf scratch; /* decoded string text */
} wf_json_reader;

/*
 * Syntax errors read as upstream's (which follow Python's json module):
 * "<what>: line L column C (char N)", a ValueError, where N counts bytes
 * from the start and L, C are 1-based. Newlines can only occur in
 * whitespace (a raw one inside a string is an error where it stands), so
 * counting those before `at` gives upstream's line.
 */
static int wf_json_fail_at(const wf_json_reader* r, const char* at, const char* what) {
  long long line = 1;
  const char* line_begin = r->begin;
  for (const char* q = r->begin; q < at; ++q) {
    if (*q == '\n') {
      ++line;
      line_begin = q + 1;
    }
  }
  return wf_err_raise("ValueError", "%s: line %lld column %lld (char %lld)", what, line,
                      (long long)(at - line_begin) + 1, (long long)(at - r->begin));
}

static int wf_json_fail(const wf_json_reader* r, const char* what) {
  return wf_json_fail_at(r, r->p, what);
}

#define WF_JSON_EXPECTING_VALUE "Expecting value"

static void wf_json_skip_space(wf_json_reader* r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
    ++r->p;
  }
}

static int wf_json_literal(wf_json_reader* r, const char* word) {
  size_t n = strlen(word);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) return 0;
  r->p += n;
  return 1;
}

/* Length of a valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0. */
static size_t wf_json_utf8_len(const unsigned char* p, const unsigned char* end) {
  unsigned c = p[0];
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if ((size_t)(end - p) < n) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  }
  return n;
}

static void wf_json_put_utf8(wf_buf* b, unsigned cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    u[0] = (char)(0xF0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  wf_buf_append(b, u, n);
}

static int wf_json_hex4(wf_json_reader* r, unsigned* out) {
  if (r->end - r->p < 4) return 0;
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = r->p[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
    else return 0;
    v = v * 16 + d;
  }
  r->p += 4;
  *out = v;
  return 1;
}

/* A \u escape, r->p at the `u`: appends the code point (a surrogate pair
 * read as one). Errors stand at the `u`, or for the second half of a pair
 * at its hex digits, as upstream reports them. */
static int wf_json_unicode_escape(wf_json_reader* r) {
  const char* at = r->p++;
  unsigned cp, lo;
  if (!wf_json_hex4(r, &cp)) return wf_json_fail_at(r, at, "Invalid \\uXXXX escape");
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return wf_json_fail_at(r, at, "Invalid surrogate pair of \\uXXXX escapes");
  }
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (!wf_json_literal(r, "\\u")) {
      return wf_json_fail_at(r, at, "Invalid surrogate pair of \\uXXXX escapes");
    }
    at = r->p;
    if (!wf_json_hex4(r, &lo)) return wf_json_fail_at(r, at, "Invalid \\uXXXX escape");
    if (lo < 0xDC00 || lo > 0xDFFF) {
      return wf_json_fail_at(r, at, "Invalid surrogate pair of \\uXXXX escapes");
    }
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  wf_json_put_utf8(&r->scratch, cp);
  return 0;
}

/* Reads a string (r->p at the opening quote) into r->scratch. */
static int wf_json_string_text(wf_json_reader* r) {
  const char* quote = r->p++;
  wf_buf_reset(&r->scratch);
  for (;;) {
    const char* run = r->p;
    while (r->p < r->end && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20 &&
           (unsigned char)*r->p < 0x80) {
      ++r->p;
    }
    wf_buf_append(&r->scratch, run, (size_t)(r->p - run));
    if (r->p >= r->end) return wf_json_fail_at(r, quote, "Unterminated string starting at");
    unsigned char c = (unsigned char)*r->p;
    if (c == '"') {
      ++r->p;
      if (r->scratch.failed) return wf_err_raise_oom(r->scratch.size);
      return 0;
    }
    if (c < 0x20) return wf_json_fail(r, "Invalid control character at");
    if (c >= 0x80) {
      /* upstream passes any bytes through; Strings here are valid UTF-8 */
      size_t n = wf_json_utf8_len((const unsigned char*)r->p, (const unsigned char*)r->end);
      if (n == 0) return wf_json_fail(r, "Invalid UTF-8 at");
      wf_buf_append(&r->scratch, r->p, n);
      r->p += n;
      continue;
    }
    /* an escape: errors stand at the character after the backslash */
    ++r->p;
    static const char escapes[] = "\"\\/bfnrt", decoded[] = "\"\\/\b\f\n\r\t";
    const char* simple = r->p < r->end && *r->p != '\0' ? strchr(escapes, *r->p) : NULL;
    if (simple != NULL) {
      wf_buf_append(&r->scratch, &decoded[simple - escapes], 1);
      ++r->p;
    } else if (r->p < r->end && *r->p == 'u') {
      if (wf_json_unicode_escape(r) != 0) return -1;
    } else {
      return wf_json_fail(r, "Invalid \\escape");
    }
  }
}

static int wf_json_is_digit(const char* p, const char* end) {
  return p < end && *p >= '0' && *p <= '9';
}

/* The end of a number as RFC 8259 spells it (-?int frac? exp?) starting
 * at p, or NULL; *is_float is set when it has a fraction or an exponent. */
static const char* wf_json_number_end(const char* p, const char* end, int* is_float) {
  *is_float = 0;
  if (p < end && *p == '-') ++p;
  if (p < end && *p == '0') {
    ++p;
  } else if (wf_json_is_digit(p, end)) {
    while (wf_json_is_digit(p, end)) ++p;
  } else {
    return NULL;
  }
  if (p < end && *p == '.') {
    *is_float = 1;
    if (!wf_json_is_digit(++p, end)) return NULL;
    while (wf_json_is_digit(p, end)) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    *is_float = 1;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (!wf_json_is_digit(p, end)) return NULL;
    while (wf_json_is_digit(p, end)) ++p;
  }
  return p;
}

/* Whether c can be part of a number as upstream's reader gathers one. */
static int wf_json_is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

/*
 * A number, Infinity, -Infinity or NaN at r->p. As upstream, the number is
 * the whole run of characters a number can contain ([0-9+-.eE]), so
 * "1.2.3", "1e" or "-" fail as one "Expecting value" at their start
 * rather than as a value followed by extra data; unlike upstream, the run
 * must be a number as RFC 8259 spells it ("01", "+1", ".5" and "1." fail).
 * The strict number never ends inside the run unless the run is not one.
 */
static int wf_json_number(wf_json_reader* r, TVMFFIAny* out) {
  const char* start = r->p;
  const char* q = start;
  if (q < r->end && *q == '-') ++q;
  if (q < r->end && (*q == 'I' || *q == 'N')) {
    r->p = q;
    if (*q == 'I' && wf_json_literal(r, "Infinity")) {
      wf_any_set_float(out, *start == '-' ? -INFINITY : INFINITY);
      return 0;
    }
    if (q == start && wf_json_literal(r, "NaN")) {
      wf_any_set_float(out, NAN);
      return 0;
    }
    return wf_json_fail_at(r, start, WF_JSON_EXPECTING_VALUE);
  }
  int is_float;
  const char* stop = wf_json_number_end(start, r->end, &is_float);
  if (stop == NULL || (stop < r->end && wf_json_is_number_char(*stop))) {
    return wf_json_fail_at(r, start, WF_JSON_EXPECTING_VALUE);
  }
  r->p = stop;
  /* strtod/strtoll need a NUL-terminated copy: the input may not have one.
   * It goes to the heap scratch buffer: parsing recurses, and wasm stacks
   * are small. */
  wf_buf_reset(&r->scratch);
  wf_buf_append(&r->scratch, start, (size_t)(r->p - start));
  if (r->scratch.failed) return wf_err_raise_oom((size_t)(r->p - start));
  const char* text = r->scratch.data;
  if (!is_float) {
    char* stop_int;
    errno = 0;
    long long v = strtoll(text, &stop_int, 10);
    if (errno == 0) {
      wf_any_set_int(out, v);
      return 0;
    }
    /* beyond int64: read as a float, as JSON numbers are */
  }
  wf_any_set_float(out, strtod(text, NULL));
  return 0;
}

static int wf_json_value(wf_json_reader* r, int depth, TVMFFIAny* out);

static int wf_json_array(wf_json_reader* r, int depth, TVMFFIAny* out) {
  TVMFFIObject* arr = wf_seq_new(kTVMFFIArray, 0);
  if (arr == NULL) return -1;
  ++r->p; /* [ */
  wf_json_skip_space(r);
  if (r->p < r->end && *r->p == ']') {
    ++r->p;
    wf_any_set_object(out, arr);
    return 0;
  }
  for (;;) {
    TVMFFIAny item;
    if (wf_json_value(r, depth + 1, &item) != 0 || wf_seq_push_owned(arr, &item) != 0) break;
    wf_json_skip_space(r);
    if (r->p < r->end && *r->p == ',') {
      ++r->p;
      continue;
    }
    if (r->p < r->end && *r->p == ']') {
      ++r->p;
      wf_any_set_object(out, arr);
      return 0;
    }
    wf_json_fail(r, "Expecting ',' delimiter");
    break;
  }
  wf_obj_decref(arr);
  return -1;
}

static int wf_json_object(wf_json_reader* r, int depth, TVMFFIAny* out) {
  TVMFFIObject* map = wf_map_new(kTVMFFIMap, 0);
  if (map == NULL) return -1;
  ++r->p; /* { */
  wf_json_skip_space(r);
  if (r->p < r->end && *r->p == '}') {
    ++r->p;
    wf_any_set_object(out, map);
    return 0;
  }
  for (;;) {
    TVMFFIAny key, value;
    wf_json_skip_space(r);
    if (r->p >= r->end || *r->p != '"') {
      wf_json_fail(r, "Expecting property name enclosed in double quotes");
      break;
    }
    if (wf_json_string_text(r) != 0 ||
        wf_str_make(0, r->scratch.data != NULL ? r->scratch.data : "", r->scratch.size, &key)) {
      break;
    }
    wf_json_skip_space(r);
    if (r->p >= r->end || *r->p != ':') {
      wf_any_release(&key);
      wf_json_fail(r, "Expecting ':' delimiter");
      break;
    }
    ++r->p;
    if (wf_json_value(r, depth + 1, &value) != 0) {
      wf_any_release(&key);
      break;
    }
    /* A repeated key keeps its first position and takes the last value. */
    int rc = wf_map_set(map, &key, &value);
    wf_any_release(&key);
    wf_any_release(&value);
    if (rc != 0) break;
    wf_json_skip_space(r);
    if (r->p < r->end && *r->p == ',') {
      ++r->p;
      continue;
    }
    if (r->p < r->end && *r->p == '}') {
      ++r->p;
      wf_any_set_object(out, map);
      return 0;
    }
    wf_json_fail(r, "Expecting ',' delimiter");
    break;
  }
  wf_obj_decref(map);
  return -1;
}

static int wf_json_value(wf_json_reader* r, int depth, TVMFFIAny* out) {
  wf_any_set_none(out);
  wf_json_skip_space(r);
  if (r->p >= r->end) return wf_json_fail(r, WF_JSON_EXPECTING_VALUE);
  /* containers are the levels (the outermost at depth 0), as everywhere */
  if ((*r->p == '[' || *r->p == '{') && depth >= WF_MAX_NESTING) {
    char what[64];
    snprintf(what, sizeof what, "Nesting deeper than %d levels at", WF_MAX_NESTING);
    return wf_json_fail(r, what);
  }
  const char* start = r->p;
  switch (*r->p) {
    case '{': return wf_json_object(r, depth, out);
    case '[': return wf_json_array(r, depth, out);
    case '"':
      if (wf_json_string_text(r) != 0) return -1;
      return wf_str_make(0, r->scratch.data != NULL ? r->scratch.data : "", r->scratch.size, out);
    case 't':
      if (!wf_json_literal(r, "true")) break;
      wf_any_set_bool(out, 1);
      return 0;
    case 'f':
      if (!wf_json_literal(r, "false")) break;
      wf_any_set_bool(out, 0);
      return 0;
    case 'n':
      if (!wf_json_literal(r, "null")) break;
      return 0;
    default:
      return wf_json_number(r, out);
  }
  return wf_json_fail_at(r, start, WF_JSON_EXPECTING_VALUE);
}

int wf_json_parse(const char* data, size_t n, TVMFFIAny* out) {
  if (n > WF_JSON_MAX_INPUT) {
    return wf_err_raise("ValueError", "JSON input of %zu bytes is larger than the %u byte limit",
                        n, WF_JSON_MAX_INPUT);
  }
  wf_json_reader r = {data, data, data + n, {0}};
  int rc = wf_json_value(&r, 0, out);
  if (rc == 0) {
    wf_json_skip_space(&r);
    if (r.p != r.end) {
      wf_any_release(out);
      rc = wf_json_fail(&r, "Extra data");
    }
  }
  wf_buf_free(&r.scratch);
  return rc;
}

/* ---------------------------------------------------------------- writer */
/* A JSON string literal as upstream's Stringify writes one: `"`, `\`, `/`
 * and \b \f \n \r \t escaped by name, the other control characters and
 * DEL as \u00xx, everything else (UTF-8 included) as it is. */
void wf_json_quoted(const char* s, size_t n, wf_buf* out) {
  static const char hex[] = "0123456789abcdef";
  wf_buf_append(out, "\"", 1);
  size_t run = 0; /* bytes copied as they are, in one append */
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\' && c != '/' && c != 0x7f) continue;
    wf_buf_append(out, s + run, i - run);
    run = i + 1;
    const char* named = NULL;
    switch (c) {
      case '"': named = "\\\""; break;
      case '\\': named = "\\\\"; break;
      case '/': named = "\\/"; break;
      case '\b': named = "\\b"; break;
      case '\f': named = "\\f"; break;
      case '\n': named = "\\n"; break;
      case '\r': named = "\\r"; break;
      case '\t': named = "\\t"; break;
      default: break;
    }
    if (named != NULL) {
      wf_buf_append(out, named, 2);
    } else {
      char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      wf_buf_append(out, esc, 6);
    }
  }
  wf_buf_append(out, s + run, n - run);
  wf_buf_append(out, "\"", 1);
}

static void wf_json_newline(wf_buf* out, int indent, int depth) {
  if (indent < 0) return;
  wf_buf_append(out, "\n", 1);
  for (int i = 0; i < indent * depth; ++i) wf_buf_append(out, " ", 1);
}

/*
 * Plain JSON spells a shared value out at every path that reaches it, so a
 * small graph can stand for a huge text. Each container's text is written
 * once per indentation depth and copied for every later path (memo value:
 * where it starts, aux: its length), and the text is bounded like input is,
 * so the work is linear in the distinct containers plus the bounded output.
 */
typedef struct {
  wf_memo written;
  int indent;
  wf_buf* out;
} wf_json_writer;

static int wf_json_too_long(void) {
  return wf_err_raise("ValueError", "JSON: output larger than the %u byte limit",
                      WF_JSON_MAX_INPUT);
}

static int wf_json_emit_value(wf_json_writer* w, const TVMFFIAny* v, int depth);

static int wf_json_emit(wf_json_writer* w, const TVMFFIAny* v, int depth) {
  if (depth > WF_MAX_NESTING) {
    return wf_err_raise("ValueError", "JSON: nesting deeper than %d levels (or a cycle)",
                        WF_MAX_NESTING);
  }
  wf_buf* out = w->out;
  if (out->size > WF_JSON_MAX_INPUT) return wf_json_too_long();
  int32_t t = v->type_index;
  if (t != kTVMFFIArray && t != kTVMFFIList && t != kTVMFFIMap && t != kTVMFFIDict) {
    return wf_json_emit_value(w, v, depth);
  }
  /* indentation makes the text depend on the depth, so it is part of the key */
  const void* at = (const void*)(uintptr_t)(w->indent < 0 ? 1 : depth + 1);
  wf_memo_entry* seen = wf_memo_find(&w->written, v->v_obj, at);
  if (seen != NULL) {
    if ((size_t)seen->aux > WF_JSON_MAX_INPUT - out->size) return wf_json_too_long();
    wf_buf_append_own(out, (size_t)seen->value, (size_t)seen->aux);
    return 0;
  }
  size_t start = out->size;
  if (wf_json_emit_value(w, v, depth) != 0) return -1;
  if (out->failed) return 0; /* reported by wf_json_write */
  seen = wf_memo_put(&w->written, v->v_obj, at);
  if (seen == NULL) return -1;
  seen->value = start;
  seen->aux = (int64_t)(out->size - start);
  return 0;
}

static int wf_json_emit_value(wf_json_writer* w, const TVMFFIAny* v, int depth) {
  wf_buf* out = w->out;
  int indent = w->indent;
  TVMFFIByteArray s;
  if (wf_any_string_view(v, &s)) {
    wf_json_quoted(s.data, s.size, out);
    return 0;
  }
  switch (v->type_index) {
    case kTVMFFINone: wf_buf_puts(out, "null"); return 0;
    case kTVMFFIBool: wf_buf_puts(out, v->v_int64 ? "true" : "false"); return 0;
    case kTVMFFIInt: wf_buf_int(out, (long long)v->v_int64); return 0;
    case kTVMFFIFloat: wf_float_format_json(v->v_float64, out); return 0;
    case kTVMFFIArray:
    case kTVMFFIList: {
      TVMFFIObject* seq = v->v_obj;
      wf_buf_append(out, "[", 1);
      for (int64_t i = 0; i < wf_seq_size(seq); ++i) {
        if (i) wf_buf_append(out, ",", 1);
        wf_json_newline(out, indent, depth + 1);
        if (wf_json_emit(w, &wf_seq_data(seq)[i], depth + 1) != 0) return -1;
      }
      /* as upstream: an empty one too, `[\n]` */
      wf_json_newline(out, indent, depth);
      wf_buf_append(out, "]", 1);
      return 0;
    }
    case kTVMFFIMap:
    case kTVMFFIDict: {
      TVMFFIObject* map = v->v_obj;
      int64_t pos = 0, i = 0;
      wf_buf_append(out, "{", 1);
      for (wf_map_entry* e; (e = wf_map_next(map, &pos)) != NULL; ++i) {
        if (!wf_any_string_view(&e->key, &s)) {
          return wf_err_raise("TypeError", "JSON object keys must be strings, got `%s`",
                              wf_type_key(e->key.type_index));
        }
        if (i) wf_buf_append(out, ",", 1);
        wf_json_newline(out, indent, depth + 1);
        wf_json_quoted(s.data, s.size, out);
        wf_buf_puts(out, indent < 0 ? ":" : ": ");
        if (wf_json_emit(w, &e->value, depth + 1) != 0) return -1;
      }
      wf_json_newline(out, indent, depth);
      wf_buf_append(out, "}", 1);
      return 0;
    }
    default:
      return wf_err_raise("TypeError", "Type `%s` has no JSON form",
                          wf_any_bytes_view(v, &s) ? "ffi.Bytes" : wf_type_key(v->type_index));
  }
}

int wf_json_write(const TVMFFIAny* v, int indent, wf_buf* out) {
  wf_json_writer w = {{0}, indent, out};
  int rc = wf_json_emit(&w, v, 0);
  wf_memo_free(&w.written);
  if (rc != 0) return -1;
  return out->failed ? wf_err_raise_oom(out->capacity * 2) : 0;
}

/* ------------------------------------------------------ global functions */
static const char* const wf_json_parse_types[] = {"str"};
static const WebFFISignature wf_json_parse_sig = {"ffi.json.Parse", 1, wf_json_parse_types,
                                                  "Any"};

static int wf_json_parse_fn(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray text;
  if (WebFFICheckNumArgs(&wf_json_parse_sig, n) != 0 ||
      WebFFIArgToString(&wf_json_parse_sig, args, 0, &text) != 0) {
    return -1;
  }
  return wf_json_parse(text.data, text.size, result);
}

static const char* const wf_json_stringify_types[] = {"Any", "Optional[int]"};

/* Stringify(value) or Stringify(value, indent): indent None or 0 is
 * compact, as upstream's. */
static int wf_json_stringify_fn(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  WebFFISignature sig = {"ffi.json.Stringify", n == 1 ? 1 : 2, wf_json_stringify_types, "str"};
  int64_t indent = -1;
  if (WebFFICheckNumArgs(&sig, n) != 0) return -1;
  if (n == 2 && args[1].type_index != kTVMFFINone) {
    if (WebFFIArgToInt(&sig, args, 1, &indent) != 0) return -1;
    if (indent < 0 || indent > 16) {
      return wf_err_raise("ValueError", "ffi.json.Stringify: indent must be in [0, 16], got %lld",
                          (long long)indent);
    }
  }
  wf_buf text = {0};
  int rc = wf_json_write(&args[0], indent == 0 ? -1 : (int)indent, &text);
  if (rc == 0) rc = wf_str_make(0, text.data, text.size, result);
  wf_buf_free(&text);
  return rc;
}

int wf_json_register(void) {
  if (wf_global_register("ffi.json.Parse", wf_json_parse_fn, NULL) != 0) return -1;
  return wf_global_register("ffi.json.Stringify", wf_json_stringify_fn, NULL);
}
