/* Runs one test by name (or all), with shared checking helpers. */
#include "harness.h"

#include <stdint.h>

#define TEST(name) void name(void);
#include "test_list.h"
#undef TEST

static const struct {
  const char* name;
  void (*fn)(void);
} tests[] = {
#define TEST(name) {#name, name},
#include "test_list.h"
#undef TEST
};

void check_raised(const char* file, int line, const char* kind, const char* message) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) {
    fprintf(stderr, "%s:%d: expected a raised %s, but the slot is empty\n", file, line, kind);
    exit(1);
  }
  TVMFFIErrorCell* cell = (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  if (strcmp(cell->kind.data, kind) != 0 || strcmp(cell->message.data, message) != 0) {
    fprintf(stderr, "%s:%d: raised\n  %s: %s\nexpected\n  %s: %s\n", file, line,
            cell->kind.data, cell->message.data, kind, message);
    exit(1);
  }
  TVMFFIObjectDecRef(err);
}

const char* any_str(const TVMFFIAny* v) {
  if (v->type_index == kTVMFFISmallStr) return v->v_bytes;
  if (v->type_index == kTVMFFIRawStr) return v->v_c_str;
  if (v->type_index == kTVMFFIStr) {
    return ((TVMFFIByteArray*)((char*)v->v_obj + sizeof(TVMFFIObject)))->data;
  }
  fprintf(stderr, "any_str: type index %d is not a string\n", (int)v->type_index);
  exit(1);
}

void release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(v->v_obj);
}

TVMFFIAny any_int(int64_t v) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}

TVMFFIAny any_float(double v) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}

TVMFFIAny any_bool(int v) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIBool;
  a.v_int64 = v != 0;
  return a;
}

TVMFFIAny any_none(void) {
  TVMFFIAny a = {0};
  return a;
}

TVMFFIAny any_cstr(const char* s) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

TVMFFIAny any_obj(TVMFFIObjectHandle obj) {
  TVMFFIAny a = {0};
  a.type_index = ((TVMFFIObject*)obj)->type_index;
  a.v_obj = (TVMFFIObject*)obj;
  return a;
}

int call_global(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionGetGlobal(&key, &f) == 0);
  if (f == NULL) {
    fprintf(stderr, "global function %s is not registered\n", name);
    exit(1);
  }
  *result = any_none();
  int rc = TVMFFIFunctionCall(f, args, n, result);
  TVMFFIObjectDecRef(f);
  return rc;
}

counting_allocator_state g_alloc;

static void counting_delete_space(void* body) {
  ++g_alloc.frees;
  free((char*)body - 16);
}

static void* counting_allocate(size_t size, size_t alignment, int32_t type_index, void* ctx) {
  (void)type_index;
  (void)ctx;
  if (g_alloc.fail || alignment > 16) return NULL;
  if (g_alloc.fail_after > 0 && g_alloc.allocations >= g_alloc.fail_after) return NULL;
  char* base = (char*)malloc(size + 16);
  if (base == NULL) return NULL;
  ++g_alloc.allocations;
  ((TVMFFIObjectAllocHeader*)(base + 16 - sizeof(TVMFFIObjectAllocHeader)))->delete_space =
      counting_delete_space;
  return base + 16;
}

static TVMFFICustomAllocator counting = {counting_allocate, NULL};

void install_counting_allocator(void) {
  memset(&g_alloc, 0, sizeof(g_alloc));
  CHECK(TVMFFISetCustomAllocator(&counting) == 0);
}

void restore_allocator(void) { CHECK(TVMFFISetCustomAllocator(NULL) == 0); }

int main(int argc, char** argv) {
  size_t count = sizeof(tests) / sizeof(tests[0]);
  int ran = 0;
  for (size_t i = 0; i < count; ++i) {
    if (argc > 1 && strcmp(argv[1], tests[i].name) != 0) continue;
    tests[i].fn();
    ++ran;
  }
  if (ran == 0) {
    fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "(none)");
    return 1;
  }
  return 0;
}
