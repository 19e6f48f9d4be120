/* Timing helpers shared by the C benchmarks. */
#ifndef WEBFFI_BENCH_UTIL_H_
#define WEBFFI_BENCH_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define BENCH_CHECK(cond)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: benchmark check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static inline TVMFFIObjectHandle bench_global(const char* name) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  BENCH_CHECK(TVMFFIFunctionGetGlobal(&key, &f) == 0 && f != NULL);
  return f;
}

#endif /* WEBFFI_BENCH_UTIL_H_ */
