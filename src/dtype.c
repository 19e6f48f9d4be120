/* DataType parsing and printing with the upstream spellings. */
#include "dtype.h"

#include <string.h>

#include "error.h"
#include "str.h"

typedef struct {
  const char* prefix;
  uint8_t code;
  uint8_t default_bits;
} wf_dtype_family;

/* Longer prefixes first: "bfloat" before "float", "uint" before "int". */
static const wf_dtype_family wf_dtype_families[] = {
    {"bfloat", kDLBfloat, 16}, {"float", kDLFloat, 32},     {"uint", kDLUInt, 32},
    {"int", kDLInt, 32},       {"complex", kDLComplex, 64},
};

static int wf_dtype_unknown(const TVMFFIByteArray* s) {
  return wf_err_raise("ValueError", "unknown dtype `%.*s`", (int)s->size, s->data);
}

/* Parses decimal digits in [lo, hi]; 0 on any other text. */
static int wf_dtype_number(const char* p, size_t n, unsigned lo, unsigned hi, unsigned* out) {
  if (n == 0 || n > 6) return 0;
  unsigned v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] < '0' || p[i] > '9') return 0;
    v = v * 10 + (unsigned)(p[i] - '0');
  }
  if (v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out) {
  if (str == NULL || out == NULL || (str->data == NULL && str->size != 0)) {
    return wf_err_raise("ValueError", "TVMFFIDataTypeFromString: NULL argument");
  }
  const char* s = str->data;
  size_t n = str->size;
  if (n == 4 && memcmp(s, "bool", 4) == 0) {
    *out = (DLDataType){kDLBool, 8, 1};
    return 0;
  }
  if (n == 6 && memcmp(s, "handle", 6) == 0) {
    *out = (DLDataType){kDLOpaqueHandle, 64, 1};
    return 0;
  }
  if (n == 4 && memcmp(s, "void", 4) == 0) {
    *out = (DLDataType){kDLOpaqueHandle, 0, 0};
    return 0;
  }
  for (size_t f = 0; f < sizeof(wf_dtype_families) / sizeof(wf_dtype_families[0]); ++f) {
    const wf_dtype_family* fam = &wf_dtype_families[f];
    size_t plen = strlen(fam->prefix);
    if (n < plen || memcmp(s, fam->prefix, plen) != 0) continue;
    const char* rest = s + plen;
    size_t rest_len = n - plen;
    const char* x = memchr(rest, 'x', rest_len);
    size_t bits_len = x != NULL ? (size_t)(x - rest) : rest_len;
    unsigned bits = fam->default_bits, lanes = 1;
    if (bits_len > 0 && !wf_dtype_number(rest, bits_len, 1, 255, &bits)) {
      return wf_dtype_unknown(str);
    }
    if (x != NULL && !wf_dtype_number(x + 1, rest_len - bits_len - 1, 1, 65535, &lanes)) {
      return wf_dtype_unknown(str);
    }
    *out = (DLDataType){fam->code, (uint8_t)bits, (uint16_t)lanes};
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
    wf_buf_puts(out, d.bits == 0 && d.lanes == 0 ? "void" : "handle");
    return 0;
  }
  const char* prefix = NULL;
  for (size_t f = 0; f < sizeof(wf_dtype_families) / sizeof(wf_dtype_families[0]); ++f) {
    if (wf_dtype_families[f].code == d.code) prefix = wf_dtype_families[f].prefix;
  }
  if (d.code == kDLBool) prefix = "bool";
  if (prefix == NULL) {
    return wf_err_raise("ValueError", "unknown dtype code %u (bits %u, lanes %u)",
                        (unsigned)d.code, (unsigned)d.bits, (unsigned)d.lanes);
  }
  wf_buf_printf(out, "%s%u", prefix, (unsigned)d.bits);
  if (d.lanes != 1) wf_buf_printf(out, "x%u", (unsigned)d.lanes);
  return 0;
}

int TVMFFIDataTypeToString(const DLDataType* dtype, TVMFFIAny* out) {
  if (dtype == NULL || out == NULL) {
    return wf_err_raise("ValueError", "TVMFFIDataTypeToString: NULL argument");
  }
  char storage[32];
  wf_buf b = {storage, 0, sizeof(storage), 0};
  storage[0] = '\0';
  if (wf_dtype_format(*dtype, &b) != 0) return -1;
  /* storage is large enough for every form, so the buffer never grows */
  return wf_str_make(0, b.data, b.size, out);
}
