/* Shared by the fuzz targets: calling globals and checking invariants.
 * A broken invariant aborts, which libFuzzer reports as a crash. */
#ifndef WEBFFI_TESTS_FUZZ_SUPPORT_H_
#define WEBFFI_TESTS_FUZZ_SUPPORT_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#define FUZZ_CHECK(cond)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                             \
    }                                                                      \
  } while (0)

static inline void fuzz_release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin && v->v_obj != NULL) {
    TVMFFIObjectDecRef(v->v_obj);
  }
  memset(v, 0, sizeof(*v));
}

/* Calls global NAME with one or two arguments; on failure the raised error
 * must be there, and is dropped so the next call starts clean. */
static inline int fuzz_call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  FUZZ_CHECK(TVMFFIFunctionGetGlobal(&key, &f) == 0 && f != NULL);
  memset(result, 0, sizeof(*result));
  int rc = TVMFFIFunctionCall(f, args, n, result);
  TVMFFIObjectDecRef(f);
  if (rc != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    FUZZ_CHECK(err != NULL);
    TVMFFIObjectDecRef(err);
  }
  return rc;
}

/* The text of a String result, as a NUL-terminated copy owned by the caller. */
static inline char* fuzz_text(const TVMFFIAny* v) {
  const char* data;
  size_t n;
  if (v->type_index == kTVMFFISmallStr) {
    data = v->v_bytes;
    n = v->small_str_len;
  } else {
    FUZZ_CHECK(v->type_index == kTVMFFIStr);
    const TVMFFIByteArray* s = (const TVMFFIByteArray*)((const char*)v->v_obj + sizeof(TVMFFIObject));
    data = s->data;
    n = s->size;
  }
  char* copy = (char*)malloc(n + 1);
  FUZZ_CHECK(copy != NULL);
  memcpy(copy, data, n);
  copy[n] = '\0';
  return copy;
}

#endif /* WEBFFI_TESTS_FUZZ_SUPPORT_H_ */
