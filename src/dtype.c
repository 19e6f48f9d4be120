/* DataType parsing and printing with the upstream spellings: `int32`,
 * `float32x4`, `int32xvscalex4` (scalable: negative lanes), `bool`,
 * `handle`, the float8/6/4 names, the aliases `i32`/`u8`/`f32`/`bf16`/
 * `fp8_e4m3fn`/`f4_e2m1fn`, and "" (or "void") for {kDLOpaqueHandle, 0, 0}.
 * `complex64` is webffi's own addition. */
#include "dtype.h"

#include <string.h>

#include "error.h"
#include "str.h"

typedef struct {
  const char* prefix;
  uint8_t code;
  uint8_t default_bits;
} wf_dtype_family;

/* Tried in order; every prefix is unique at its start. */
static const wf_dtype_family wf_dtype_families[] = {
    {"int", kDLInt, 32},        {"uint", kDLUInt, 32},    {"bool", kDLBool, 8},
    {"float", kDLFloat, 32},    {"handle", kDLOpaqueHandle, 64},
    {"bfloat", kDLBfloat, 16},  {"complex", kDLComplex, 64},
};

/* The small floats: a fixed width, no bits digits. A longer name comes
 * before any name it extends (e4m3fnuz before e4m3fn before e4m3). */
typedef struct {
  const char* name;
  uint8_t code;
  uint8_t bits;
} wf_dtype_small_float;

static const wf_dtype_small_float wf_dtype_small_floats[] = {
    {"float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8},
    {"float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8},
    {"float8_e4m3fn", kDLFloat8_e4m3fn, 8},
    {"float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8},
    {"float8_e8m0fnu", kDLFloat8_e8m0fnu, 8},
    {"float8_e3m4", kDLFloat8_e3m4, 8},
    {"float8_e4m3", kDLFloat8_e4m3, 8},
    {"float8_e5m2", kDLFloat8_e5m2, 8},
    {"float6_e2m3fn", kDLFloat6_e2m3fn, 6},
    {"float6_e3m2fn", kDLFloat6_e3m2fn, 6},
    {"float4_e2m1fn", kDLFloat4_e2m1fn, 4},
};

#define WF_COUNT(a) (sizeof(a) / sizeof((a)[0]))
/* Longer than any valid form ("float8_e4m3b11fnuzx65535" is 24). */
#define WF_DTYPE_MAX_TEXT 48

static int wf_dtype_unknown(const TVMFFIByteArray* s) {
  return wf_err_raise("ValueError", "unknown dtype `%.*s`", (int)s->size, s->data);
}

static int wf_is_digit(char c) { return c >= '0' && c <= '9'; }

/* Parses decimal digits in [lo, hi]; 0 on any other text. */
static int wf_dtype_number(const char* p, size_t n, unsigned lo, unsigned hi, unsigned* out) {
  if (n == 0 || n > 6) return 0;
  unsigned v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!wf_is_digit(p[i])) return 0;
    v = v * 10 + (unsigned)(p[i] - '0');
  }
  if (v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int wf_starts(const char* s, size_t n, const char* prefix) {
  size_t k = strlen(prefix);
  return n >= k && memcmp(s, prefix, k) == 0;
}

/* Rewrites an alias prefix to its full name in buf; returns the new size. */
static size_t wf_dtype_normalize(const char* s, size_t n, char* buf) {
  static const struct {
    const char* alias;
    const char* full;
    int digit_follows; /* the alias only counts before a digit */
  } aliases[] = {
      {"i", "int", 1},       {"u", "uint", 1},      {"bf", "bfloat", 1},
      {"fp8_", "float8_", 0}, {"fp6_", "float6_", 0}, {"fp4_", "float4_", 0},
      {"f8_", "float8_", 0},  {"f6_", "float6_", 0},  {"f4_", "float4_", 0},
      {"f", "float", 1},
  };
  for (size_t i = 0; i < WF_COUNT(aliases); ++i) {
    size_t k = strlen(aliases[i].alias);
    if (!wf_starts(s, n, aliases[i].alias)) continue;
    if (aliases[i].digit_follows && (n <= k || !wf_is_digit(s[k]))) continue;
    size_t f = strlen(aliases[i].full);
    memcpy(buf, aliases[i].full, f);
    memcpy(buf + f, s + k, n - k);
    return f + n - k;
  }
  memcpy(buf, s, n);
  return n;
}

/* `xN` (N in 1..65535) or, when scalable, `xvscalexN` (lanes = -N);
 * nothing at all means one lane. */
static int wf_dtype_lanes(const char* p, size_t n, int scalable, uint16_t* lanes) {
  if (n == 0) {
    *lanes = 1;
    return 1;
  }
  unsigned v = 0;
  if (scalable && n > 8 && memcmp(p, "xvscalex", 8) == 0) {
    if (!wf_dtype_number(p + 8, n - 8, 1, 32768, &v)) return 0;
    *lanes = (uint16_t)(-(int32_t)v);
    return 1;
  }
  if (p[0] != 'x' || !wf_dtype_number(p + 1, n - 1, 1, 65535, &v)) return 0;
  *lanes = (uint16_t)v;
  return 1;
}

int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out) {
  if (str == NULL || out == NULL || (str->data == NULL && str->size != 0)) {
    return wf_err_raise("ValueError", "TVMFFIDataTypeFromString: NULL argument");
  }
  if (str->size == 0 || (str->size == 4 && memcmp(str->data, "void", 4) == 0)) {
    *out = (DLDataType){kDLOpaqueHandle, 0, 0};
    return 0;
  }
  if (str->size > WF_DTYPE_MAX_TEXT) return wf_dtype_unknown(str);
  char buf[WF_DTYPE_MAX_TEXT + 8];
  size_t n = wf_dtype_normalize(str->data, str->size, buf);
  const char* s = buf;
  for (size_t i = 0; i < WF_COUNT(wf_dtype_small_floats); ++i) {
    const wf_dtype_small_float* f = &wf_dtype_small_floats[i];
    size_t k = strlen(f->name);
    if (!wf_starts(s, n, f->name)) continue;
    /* float4_e2m1fn also takes `_` before its lanes */
    if (f->code == kDLFloat4_e2m1fn && n > k && s[k] == '_') ++k;
    if (n > k && s[k] != 'x') continue;
    uint16_t lanes;
    if (!wf_dtype_lanes(s + k, n - k, 0, &lanes)) return wf_dtype_unknown(str);
    *out = (DLDataType){f->code, f->bits, lanes};
    return 0;
  }
  if (wf_starts(s, n, "float8_") || wf_starts(s, n, "float6_") || wf_starts(s, n, "float4_")) {
    return wf_dtype_unknown(str);
  }
  for (size_t f = 0; f < WF_COUNT(wf_dtype_families); ++f) {
    const wf_dtype_family* fam = &wf_dtype_families[f];
    if (!wf_starts(s, n, fam->prefix)) continue;
    size_t at = strlen(fam->prefix);
    size_t digits = 0;
    while (at + digits < n && wf_is_digit(s[at + digits])) ++digits;
    unsigned bits = 0;
    /* a width is 1 to 255 bits; none at all (`int`) is the default width,
     * an explicit 0 (`int0`) is refused rather than read as the default */
    if (digits > 0 && !wf_dtype_number(s + at, digits, 1, 255, &bits)) {
      return wf_dtype_unknown(str);
    }
    if (bits == 0) bits = fam->default_bits;
    at += digits;
    uint16_t lanes;
    if (!wf_dtype_lanes(s + at, n - at, 1, &lanes)) return wf_dtype_unknown(str);
    *out = (DLDataType){fam->code, (uint8_t)bits, lanes};
    return 0;
  }
  return wf_dtype_unknown(str);
}

int wf_dtype_format(DLDataType d, wf_buf* out) {
  if (d.code == kDLBool && d.bits == 8 && d.lanes == 1) {
    wf_buf_puts(out, "bool");
    return 0;
  }
  if (d.code == kDLOpaqueHandle) {
    wf_buf_puts(out, d.bits == 0 && d.lanes == 0 ? "" : "handle");
    return 0;
  }
  const char* name = NULL;
  int print_bits = 0;
  for (size_t f = 0; f < WF_COUNT(wf_dtype_families); ++f) {
    if (wf_dtype_families[f].code == d.code) name = wf_dtype_families[f].prefix;
  }
  if (name != NULL) {
    print_bits = d.code != kDLBool || d.bits != 8;
  } else {
    for (size_t i = 0; i < WF_COUNT(wf_dtype_small_floats); ++i) {
      if (wf_dtype_small_floats[i].code == d.code) name = wf_dtype_small_floats[i].name;
    }
  }
  if (name == NULL) {
    return wf_err_raise("ValueError", "unknown dtype code %u (bits %u, lanes %u)",
                        (unsigned)d.code, (unsigned)d.bits, (unsigned)d.lanes);
  }
  wf_buf_puts(out, name);
  if (print_bits) wf_buf_printf(out, "%u", (unsigned)d.bits);
  /* lanes are an int16 in the text: negative means a scalable vector */
  int lanes = (int16_t)d.lanes;
  if (lanes > 1) {
    wf_buf_printf(out, "x%d", lanes);
  } else if (lanes < -1) {
    wf_buf_printf(out, "xvscalex%d", -lanes);
  }
  return 0;
}

int TVMFFIDataTypeToString(const DLDataType* dtype, TVMFFIAny* out) {
  if (dtype == NULL || out == NULL) {
    return wf_err_raise("ValueError", "TVMFFIDataTypeToString: NULL argument");
  }
  char storage[48];
  wf_buf b = {storage, 0, sizeof(storage), 0};
  storage[0] = '\0';
  if (wf_dtype_format(*dtype, &b) != 0) return -1;
  /* storage is large enough for every form, so the buffer never grows */
  return wf_str_make(0, b.data, b.size, out);
}
