/* A small test harness: every test is listed once in test_list.h and runs
 * as its own ctest case (`webffi_tests NAME`). */
#ifndef WEBFFI_TESTS_C_HARNESS_H_
#define WEBFFI_TESTS_C_HARNESS_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                       \
  do {                                                                           \
    long long va_ = (long long)(a), vb_ = (long long)(b);                        \
    if (va_ != vb_) {                                                            \
      fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, va_, vb_); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                         \
  do {                                                                             \
    const char *sa_ = (a), *sb_ = (b);                                             \
    if (strcmp(sa_, sb_) != 0) {                                                   \
      fprintf(stderr, "%s:%d: %s is\n  \"%s\"\nexpected\n  \"%s\"\n", __FILE__, __LINE__, #a, sa_, sb_); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

/* Moves the raised error out and checks its kind and exact message. */
#define CHECK_RAISED(kind, message) check_raised(__FILE__, __LINE__, kind, message)
void check_raised(const char* file, int line, const char* kind, const char* message);

/* Content of a String/SmallStr Any as a NUL-terminated C string. */
const char* any_str(const TVMFFIAny* v);

/* Helpers to build argument values. */
TVMFFIAny any_int(int64_t v);
TVMFFIAny any_float(double v);
TVMFFIAny any_bool(int v);
TVMFFIAny any_none(void);
TVMFFIAny any_cstr(const char* s);
TVMFFIAny any_obj(TVMFFIObjectHandle obj);

/* Drops the reference an object Any holds; other values hold none. */
void release(TVMFFIAny* v);

/* Calls global NAME; returns the call's status. */
int call_global(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result);

/* A custom allocator that counts and can be told to fail. */
typedef struct {
  int allocations;
  int frees;
  int fail; /* when set, every allocation fails */
  int fail_after; /* when > 0, every allocation after this many fails */
} counting_allocator_state;
extern counting_allocator_state g_alloc;
void install_counting_allocator(void);
void restore_allocator(void);

#endif /* WEBFFI_TESTS_C_HARNESS_H_ */
