/* Growable text buffer with a sticky failure flag, so callers check once. */
#include "buffer.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wf_buf_reset(wf_buf* b) {
  b->size = 0;
  b->failed = 0;
  if (b->data != NULL) b->data[0] = '\0';
}

void wf_buf_free(wf_buf* b) {
  free(b->data);
  b->data = NULL;
  b->size = b->capacity = 0;
  b->failed = 0;
}

static int wf_buf_reserve(wf_buf* b, size_t extra) {
  if (b->failed) return 0;
  if (extra > SIZE_MAX / 2 - b->size) {
    b->failed = 1;
    return 0;
  }
  size_t need = b->size + extra + 1;
  if (need <= b->capacity) return 1;
  size_t cap = b->capacity ? b->capacity : 64;
  while (cap < need) cap *= 2;
  char* data = (char*)realloc(b->data, cap);
  if (data == NULL) {
    b->failed = 1;
    return 0;
  }
  b->data = data;
  b->capacity = cap;
  return 1;
}

void wf_buf_append(wf_buf* b, const char* data, size_t n) {
  if (!wf_buf_reserve(b, n)) return;
  if (n) memcpy(b->data + b->size, data, n);
  b->size += n;
  b->data[b->size] = '\0';
}

void wf_buf_append_own(wf_buf* b, size_t start, size_t n) {
  /* reserve first: growing may move the bytes being copied */
  if (!wf_buf_reserve(b, n)) return;
  if (n) memcpy(b->data + b->size, b->data + start, n);
  b->size += n;
  b->data[b->size] = '\0';
}

void wf_buf_puts(wf_buf* b, const char* s) { wf_buf_append(b, s, strlen(s)); }

void wf_buf_int(wf_buf* b, long long v) {
  char text[24];
  int at = (int)sizeof(text);
  /* Work on the magnitude as unsigned so LLONG_MIN needs no special case. */
  unsigned long long m = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do {
    text[--at] = (char)('0' + m % 10);
    m /= 10;
  } while (m != 0);
  if (v < 0) text[--at] = '-';
  wf_buf_append(b, text + at, sizeof(text) - (size_t)at);
}

void wf_buf_printf(wf_buf* b, const char* fmt, ...) {
  char small[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if ((size_t)n < sizeof(small)) {
    wf_buf_append(b, small, (size_t)n);
    return;
  }
  if (!wf_buf_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->size, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->size += (size_t)n;
}
