/* libFuzzer target: the input is a little program that builds a graph of
 * containers (make, nest, share, append into Lists and Dicts, which may make
 * cycles), then every structural operation runs on what it built: repr,
 * hash, equality, DeepCopy and the JSON graph round trip; then everything
 * is released. Shared and deep graphs must stay cheap, and the operations
 * must agree with each other. */
#include <stdint.h>

#include "fuzz_support.h"

enum { POOL = 48, MAX_OPS = 512 };

typedef struct {
  TVMFFIAny v[POOL];
  int n;
  /* values dropped from the pool, released at the end with the rest: a
   * dropped List may still be part of a cycle that must be broken first */
  TVMFFIAny dropped[MAX_OPS + POOL];
  int num_dropped;
  const uint8_t* p;
  const uint8_t* end;
} program;

static unsigned next_byte(program* g) { return g->p < g->end ? *g->p++ : 0; }

/* A value of the pool, chosen by the next byte (None when it is empty). */
static TVMFFIAny* pick(program* g) {
  static TVMFFIAny none;
  memset(&none, 0, sizeof(none));
  return g->n == 0 ? &none : &g->v[next_byte(g) % (unsigned)g->n];
}

/* Keeps a new value (or drops it when the pool is full). */
static void keep(program* g, TVMFFIAny* v) {
  if (g->n < POOL) {
    g->v[g->n++] = *v;
  } else {
    g->dropped[g->num_dropped++] = *v;
  }
}

static void make(program* g, const char* ctor, TVMFFIAny* args, int32_t n) {
  TVMFFIAny r;
  if (fuzz_call(ctor, args, n, &r) == 0) keep(g, &r);
}

static void mutate(const char* name, TVMFFIAny* args, int32_t n) {
  TVMFFIAny r;
  if (fuzz_call(name, args, n, &r) == 0) fuzz_release(&r);
}

static int is_type(const TVMFFIAny* v, int32_t t) { return v->type_index == t; }

static void run_op(program* g, unsigned op) {
  static const char* const texts[] = {"a", "key", "a longer string value", ""};
  TVMFFIAny args[4];
  switch (op % 12) {
    case 0: {
      TVMFFIAny v = {0};
      v.type_index = kTVMFFIInt;
      v.v_int64 = (int64_t)next_byte(g) - 128;
      keep(g, &v);
      return;
    }
    case 1: {
      TVMFFIAny v = {0};
      v.type_index = kTVMFFIRawStr;
      v.v_c_str = texts[next_byte(g) % 4];
      make(g, "ffi.Array", &v, 1); /* the string, wrapped */
      return;
    }
    case 2: /* the same child twice: depth doubles the paths */
    case 3: {
      TVMFFIAny* c = pick(g);
      args[0] = args[1] = *c;
      make(g, op % 12 == 2 ? "ffi.Array" : "ffi.List", args, 2);
      return;
    }
    case 4: {
      int32_t k = (int32_t)(next_byte(g) % 4);
      for (int32_t i = 0; i < k; ++i) args[i] = *pick(g);
      make(g, next_byte(g) & 1 ? "ffi.List" : "ffi.Array", args, k);
      return;
    }
    case 5: {
      args[0] = *pick(g);
      args[1] = *pick(g);
      make(g, next_byte(g) & 1 ? "ffi.Dict" : "ffi.Map", args, 2);
      return;
    }
    case 6: { /* append: into itself or an ancestor makes a cycle */
      args[0] = *pick(g);
      args[1] = *pick(g);
      if (is_type(&args[0], kTVMFFIList)) mutate("ffi.ListAppend", args, 2);
      return;
    }
    case 7: {
      args[0] = *pick(g);
      args[1] = *pick(g);
      args[2] = *pick(g);
      if (is_type(&args[0], kTVMFFIDict)) mutate("ffi.DictSetItem", args, 3);
      return;
    }
    case 8: {
      args[0] = *pick(g);
      args[1].type_index = kTVMFFIInt;
      args[1].zero_padding = 0;
      args[1].v_int64 = next_byte(g) % 4;
      args[2] = *pick(g);
      if (is_type(&args[0], kTVMFFIList)) mutate("ffi.ListSetItem", args, 3);
      return;
    }
    case 9: {
      args[0] = *pick(g);
      if (is_type(&args[0], kTVMFFIList)) mutate("ffi.ListClear", args, 1);
      if (is_type(&args[0], kTVMFFIDict)) mutate("ffi.DictClear", args, 1);
      return;
    }
    case 10: { /* share: one more reference to a value */
      TVMFFIAny* c = pick(g);
      TVMFFIAny copy = *c;
      if (copy.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectIncRef(copy.v_obj);
      keep(g, &copy);
      return;
    }
    default: { /* drop the newest value */
      if (g->n > 0) g->dropped[g->num_dropped++] = g->v[--g->n];
      return;
    }
  }
}

static int64_t hash_of(TVMFFIAny* v, int* ok) {
  TVMFFIAny r;
  *ok = fuzz_call("ffi.RecursiveHash", v, 1, &r) == 0;
  return *ok ? r.v_int64 : 0;
}

/* 1 equal, 0 not, -1 refused (a cycle, or too deep). */
static int equal(TVMFFIAny a, TVMFFIAny b) {
  TVMFFIAny args[2] = {a, b}, r;
  if (fuzz_call("ffi.RecursiveEq", args, 2, &r) != 0) return -1;
  return (int)r.v_int64;
}

/* The operations may refuse (cycles, nesting), but whatever they make must
 * agree: a copy or a graph read back is equal and hashes alike. */
static void check_value(TVMFFIAny* v) {
  TVMFFIAny r, copy, back;
  FUZZ_CHECK(fuzz_call("ffi.ReprPrint", v, 1, &r) == 0); /* printing never fails */
  fuzz_release(&r);
  FUZZ_CHECK(equal(*v, *v) == 1); /* identity */
  int ok;
  int64_t h = hash_of(v, &ok); /* a cycle hashes too, as upstream's */
  if (!ok) return;             /* too deep */
  int again_ok;
  FUZZ_CHECK(hash_of(v, &again_ok) == h && again_ok);
  /* the JSON graph refuses a cycle (through Map keys too): a copy of one
   * would keep itself alive, and hashes of cycles need not agree */
  if (fuzz_call("ffi.ToJSONGraphString", v, 1, &r) != 0) return;
  fuzz_release(&r);
  if (fuzz_call("ffi.DeepCopy", v, 1, &copy) == 0) {
    FUZZ_CHECK(equal(*v, copy) != 0);
    int copy_ok;
    int64_t hc = hash_of(&copy, &copy_ok);
    FUZZ_CHECK(!copy_ok || hc == h);
    fuzz_release(&copy);
  }
  if (fuzz_call("ffi.ToJSONGraphString", v, 1, &r) == 0) {
    /* Read back, the graph writes the same text again. (Equality would not
     * do: Map keys that are objects compare by identity, and reading makes
     * new ones.) */
    if (fuzz_call("ffi.FromJSONGraphString", &r, 1, &back) == 0) {
      TVMFFIAny again;
      FUZZ_CHECK(fuzz_call("ffi.ToJSONGraphString", &back, 1, &again) == 0);
      char* a = fuzz_text(&r);
      char* b = fuzz_text(&again);
      FUZZ_CHECK(strcmp(a, b) == 0);
      free(a);
      free(b);
      fuzz_release(&again);
      fuzz_release(&back);
    }
    fuzz_release(&r);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  program g;
  memset(&g, 0, sizeof(g));
  g.p = data;
  g.end = data + size;
  for (int i = 0; i < MAX_OPS && g.p < g.end; ++i) run_op(&g, next_byte(&g));
  for (int i = 0; i < g.n; ++i) check_value(&g.v[i]);
  /* Break cycles (they run through Lists and Dicts, all of which are in the
   * pool) so releasing frees everything; LeakSanitizer checks. */
  TVMFFIAny* all[2] = {g.v, g.dropped};
  int counts[2] = {g.n, g.num_dropped};
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < counts[s]; ++i) {
      if (is_type(&all[s][i], kTVMFFIList)) mutate("ffi.ListClear", &all[s][i], 1);
      if (is_type(&all[s][i], kTVMFFIDict)) mutate("ffi.DictClear", &all[s][i], 1);
    }
  }
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < counts[s]; ++i) fuzz_release(&all[s][i]);
  }
  return 0;
}
