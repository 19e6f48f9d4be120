/* A growable byte buffer for building text (backtraces, JSON, messages). */
#ifndef WEBFFI_SRC_BUFFER_H_
#define WEBFFI_SRC_BUFFER_H_

#include <stddef.h>

typedef struct {
  char* data;   /* NUL-terminated while not failed */
  size_t size;
  size_t capacity;
  int failed;   /* sticky: set once an allocation fails */
} wf_buf;

void wf_buf_reset(wf_buf* b);
void wf_buf_free(wf_buf* b);
void wf_buf_append(wf_buf* b, const char* data, size_t n);
void wf_buf_puts(wf_buf* b, const char* s);
/* Appends a copy of the n bytes at offset start of b itself. */
void wf_buf_append_own(wf_buf* b, size_t start, size_t n);
/* Appends an integer in decimal (faster than printf on hot paths). */
void wf_buf_int(wf_buf* b, long long v);
void wf_buf_printf(wf_buf* b, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif /* WEBFFI_SRC_BUFFER_H_ */
