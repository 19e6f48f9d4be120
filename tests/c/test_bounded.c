/* Bounded work on hostile shapes: nesting refused at construction, cycles,
 * release of very deep chains, shared (DAG) structure in every traversal,
 * keyed map hashing and size checks. */
#include <stdint.h>
#include <stdio.h>
#include <webffi/device_api.h>

#include "../../src/any.h"
#include "../../src/hash.h"
#include "../../src/map.h"
#include "../../src/memo.h"
#include "../../src/strmap.h"
#include "harness.h"

static TVMFFIAny make(const char* ctor, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  CHECK(call_global(ctor, args, n, &result) == 0);
  return result;
}

static void call2(const char* name, TVMFFIAny a, TVMFFIAny b) {
  TVMFFIAny args[2] = {a, b}, r;
  CHECK(call_global(name, args, 2, &r) == 0);
  release(&r);
}

static size_t str_size(const TVMFFIAny* v) {
  if (v->type_index == kTVMFFISmallStr) return v->small_str_len;
  return ((TVMFFIByteArray*)((char*)v->v_obj + sizeof(TVMFFIObject)))->size;
}

/* ------------------------------------------------- nesting at construction */
void bounded_nesting_refused_at_construction(void) {
  const char* ctors[] = {"ffi.Array", "ffi.List"};
  for (int c = 0; c < 2; ++c) {
    TVMFFIAny v = any_int(1), r;
    for (int level = 1; level <= 256; ++level) { /* [[...[1]...]]: 256 levels */
      TVMFFIAny next = make(ctors[c], &v, 1);
      release(&v);
      v = next;
    }
    CHECK(call_global(ctors[c], &v, 1, &r) == -1);
    CHECK_RAISED("ValueError", c == 0 ? "ffi.Array: nesting deeper than 256 levels"
                                      : "ffi.List: nesting deeper than 256 levels");
    /* the same through mutation: append, insert, set, and Map/Dict values or keys */
    TVMFFIAny list = make("ffi.List", NULL, 0);
    TVMFFIAny args3[3] = {list, any_int(0), v};
    TVMFFIAny app[2] = {list, v};
    CHECK(call_global("ffi.ListAppend", app, 2, &r) == -1);
    CHECK_RAISED("ValueError", "ffi.List: nesting deeper than 256 levels");
    CHECK(call_global("ffi.ListInsert", args3, 3, &r) == -1);
    CHECK_RAISED("ValueError", "ffi.List: nesting deeper than 256 levels");
    TVMFFIAny size;
    CHECK(call_global("ffi.ListSize", &list, 1, &size) == 0);
    CHECK_EQ_INT(size.v_int64, 0); /* refused before any change */
    TVMFFIAny kv[2] = {any_int(1), v};
    CHECK(call_global("ffi.Map", kv, 2, &r) == -1);
    CHECK_RAISED("ValueError", "ffi.Map: nesting deeper than 256 levels");
    TVMFFIAny vk[2] = {v, any_int(1)};
    CHECK(call_global("ffi.Dict", vk, 2, &r) == -1);
    CHECK_RAISED("ValueError", "ffi.Dict: nesting deeper than 256 levels");
    /* one level less is fine, and an emptied list takes deep values again */
    TVMFFIAny one = any_int(1);
    TVMFFIAny shallow = make(ctors[c], &one, 1);
    TVMFFIAny push[2] = {list, shallow};
    CHECK(call_global("ffi.ListAppend", push, 2, &r) == 0);
    CHECK(call_global("ffi.ListClear", &list, 1, &r) == 0);
    release(&shallow);
    release(&list);
    release(&v);
  }
}

void bounded_cycles_are_allowed_and_every_traversal_handles_them(void) {
  /* A holds B, then B appends A: mutable containers may form cycles (as in
   * tvm-ffi); each traversal reports or keeps them instead of recursing. */
  TVMFFIAny a = make("ffi.List", NULL, 0), b = make("ffi.List", NULL, 0), r;
  call2("ffi.ListAppend", a, b);
  call2("ffi.ListAppend", b, a);
  CHECK(call_global("ffi.ReprPrint", &a, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "[[...]]"); /* as upstream: `...` for the one open */
  release(&r);
  /* as upstream's: an object met inside itself hashes as its type key */
  CHECK(call_global("ffi.RecursiveHash", &a, 1, &r) == 0);
  TVMFFIAny ab[2] = {a, b};
  CHECK(call_global("ffi.RecursiveEq", ab, 2, &r) == -1);
  CHECK_RAISED("ValueError", "RecursiveEq: nesting deeper than 256 levels (or a cycle)");
  CHECK(call_global("ffi.ToJSONGraphString", &a, 1, &r) == -1);
  CHECK_RAISED("ValueError", "Cycle detected during serialization: a List contains itself");
  CHECK(call_global("ffi.json.Stringify", &a, 1, &r) == -1);
  CHECK_RAISED("ValueError", "JSON: nesting deeper than 256 levels (or a cycle)");
  TVMFFIAny copy;
  CHECK(call_global("ffi.DeepCopy", &a, 1, &copy) == 0);
  TVMFFIAny* ca = (TVMFFIAny*)((TVMFFISeqCell*)((char*)copy.v_obj + sizeof(TVMFFIObject)))->data;
  TVMFFIAny* cb = (TVMFFIAny*)((TVMFFISeqCell*)((char*)ca[0].v_obj + sizeof(TVMFFIObject)))->data;
  CHECK(ca[0].v_obj != b.v_obj && cb[0].v_obj == copy.v_obj); /* the cycle, copied */
  /* A cycle keeps itself alive, as reference counting does everywhere:
   * clearing one list breaks it and everything is freed (ASan checks). */
  CHECK(call_global("ffi.ListClear", &ca[0], 1, &r) == 0);
  release(&copy);
  CHECK(call_global("ffi.ListClear", &b, 1, &r) == 0);
  release(&a);
  release(&b);
}

/* ------------------------------------------------------------ deep release */
static TVMFFIAny long_chain(const char* ctor, int n) {
  /* built top-down through a List, so nothing limits its depth */
  TVMFFIAny head = make(ctor, NULL, 0), cur = head;
  for (int i = 0; i < n; ++i) {
    TVMFFIAny next = make("ffi.List", NULL, 0);
    call2("ffi.ListAppend", cur, next);
    release(&next); /* cur holds it */
    cur = next;
  }
  return head;
}

void bounded_release_of_a_million_nested_lists(void) {
  TVMFFIAny head = long_chain("ffi.List", 1000000), r;
  /* every recursive operation stops at the nesting limit */
  CHECK(call_global("ffi.RecursiveHash", &head, 1, &r) == -1);
  CHECK_RAISED("ValueError", "RecursiveHash: nesting deeper than 256 levels (or a cycle)");
  CHECK(call_global("ffi.DeepCopy", &head, 1, &r) == -1);
  CHECK_RAISED("ValueError", "DeepCopy: nesting deeper than 256 levels");
  CHECK(call_global("ffi.ToJSONGraphString", &head, 1, &r) == -1);
  CHECK_RAISED("ValueError", "ToJSONGraph: nesting deeper than 256 levels");
  CHECK(call_global("ffi.ReprPrint", &head, 1, &r) == 0);
  CHECK(str_size(&r) < 1000);
  release(&r);
  /* dropping the head frees 10^6 levels without recursing 10^6 deep */
  release(&head);
}

/* ---------------------------------------------------------- shared (DAGs) */
/* levels[i] = Array(levels[i-1], levels[i-1]): 2^60 paths to the leaf. */
static TVMFFIAny dag(int levels, int64_t leaf) {
  TVMFFIAny v = any_int(leaf);
  for (int i = 0; i < levels; ++i) {
    TVMFFIAny two[2] = {v, v};
    TVMFFIAny next = make(i % 2 ? "ffi.Array" : "ffi.List", two, 2);
    release(&v);
    v = next;
  }
  return v;
}

void bounded_shared_structure_costs_linear_time(void) {
  enum { LEVELS = 60 };
  TVMFFIAny a = dag(LEVELS, 7), b = dag(LEVELS, 7), c = dag(LEVELS, 8), r;
  /* hash and equality: each node (pair) is visited a bounded number of
   * times, where a walk per path would need 2^60 */
  uint64_t before = wf_memo_lookups;
  CHECK(call_global("ffi.RecursiveHash", &a, 1, &r) == 0);
  int64_t ha = r.v_int64;
  CHECK(wf_memo_lookups - before <= 4 * LEVELS);
  CHECK(call_global("ffi.RecursiveHash", &b, 1, &r) == 0);
  CHECK_EQ_INT(r.v_int64, ha);
  before = wf_memo_lookups;
  TVMFFIAny ab[2] = {a, b}, ac[2] = {a, c};
  CHECK(call_global("ffi.RecursiveEq", ab, 2, &r) == 0 && r.v_int64 == 1);
  CHECK(wf_memo_lookups - before <= 4 * LEVELS);
  CHECK(call_global("ffi.RecursiveEq", ac, 2, &r) == 0 && r.v_int64 == 0);
  /* repr: printed once per node, repeated (as upstream) while the text
   * stays under 1 MiB, then `<shared ...>`; short texts always repeated */
  CHECK(call_global("ffi.ReprPrint", &a, 1, &r) == 0);
  CHECK(str_size(&r) < (1 << 20) + 100 * LEVELS);
  CHECK(strstr(any_str(&r), "<shared ffi.") != NULL);
  release(&r);
  TVMFFIAny two = dag(2, 1);
  CHECK(call_global("ffi.ReprPrint", &two, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "([1, 1], [1, 1])");
  release(&r);
  release(&two);
  /* deep copy: one copy per node, sharing kept */
  TVMFFIAny copy;
  CHECK(call_global("ffi.DeepCopy", &a, 1, &copy) == 0);
  TVMFFIAny node = copy;
  for (int i = 0; i < LEVELS; ++i) {
    TVMFFIAny* e = (TVMFFIAny*)((TVMFFISeqCell*)((char*)node.v_obj + sizeof(TVMFFIObject)))->data;
    CHECK(e[0].type_index == e[1].type_index && e[0].v_obj == e[1].v_obj);
    node = e[0];
  }
  CHECK(node.type_index == kTVMFFIInt && node.v_int64 == 7);
  /* the JSON graph: one node per distinct value, and it reads back equal */
  CHECK(call_global("ffi.ToJSONGraphString", &copy, 1, &r) == 0);
  CHECK(str_size(&r) < 100 * LEVELS);
  TVMFFIAny back;
  CHECK(call_global("ffi.FromJSONGraphString", &r, 1, &back) == 0);
  release(&r);
  TVMFFIAny aback[2] = {a, back};
  CHECK(call_global("ffi.RecursiveEq", aback, 2, &r) == 0 && r.v_int64 == 1);
  release(&back);
  release(&copy);
  /* plain JSON must spell every path out: its output limit ends the walk */
  TVMFFIAny wide = dag(30, 1);
  CHECK(call_global("ffi.json.Stringify", &wide, 1, &r) == -1);
  CHECK_RAISED("ValueError", "JSON: output larger than the 268435456 byte limit");
  release(&wide);
  release(&a);
  release(&b);
  release(&c);
}

/* ------------------------------------------------------------ map hashing */
/* The byte hash as upstream writes it down: little-endian words, the tail
 * zero-padded, (h * 1099511628211 + word) % (2^31 - 1), wrapping at 2^64. */
static uint64_t reference_bytes_hash(const char* p, size_t n) {
  uint64_t h = 0;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = 0;
    for (size_t j = 0; j < 8 && i + j < n; ++j) w |= (uint64_t)(unsigned char)p[i + j] << (8 * j);
    h = (h * 1099511628211ull + w) % 2147483647ull;
  }
  return h;
}
static uint64_t reference_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9u + (key << 6) + (key >> 2));
}

void bounded_map_hash_is_upstreams(void) {
  /* known answers from upstream's AnyHash, compiled from its headers */
  TVMFFIAny abc = any_cstr("abc"), empty = any_cstr(""), i42 = any_int(42), neg = any_int(-1);
  TVMFFIAny t = any_bool(1), f = any_float(1.5);
  CHECK(wf_map_hash(&abc) == 2660953131ull);
  CHECK(wf_map_hash(&empty) == 2654440008ull);
  CHECK(wf_map_hash(&i42) == 2654435874ull);
  CHECK(wf_map_hash(&neg) == 2654435833ull);
  CHECK(wf_map_hash(&t) == 2654435896ull);
  CHECK(wf_map_hash(&f) == 4609434221268138618ull);
  TVMFFIByteArray in = {"abc", 3};
  TVMFFIAny small_bytes;
  CHECK(TVMFFIBytesFromByteArray(&in, &small_bytes) == 0);
  CHECK(wf_map_hash(&small_bytes) == 2660953320ull);
  /* every string form and length agrees with the reference, heap and small
   * alike (the word loop, the 4/2/1-byte tail, the reduction past 2^64) */
  char text[80];
  for (size_t n = 0; n < sizeof(text); ++n) {
    for (size_t i = 0; i < n; ++i) text[i] = (char)(0x80 + 37 * i + n);
    TVMFFIByteArray bytes = {text, n};
    TVMFFIAny s;
    CHECK(TVMFFIStringFromByteArray(&bytes, &s) == 0);
    CHECK(wf_map_hash(&s) == reference_combine(kTVMFFIStr, reference_bytes_hash(text, n)));
    wf_any_release(&s);
  }
}

void bounded_map_colliding_keys_stay_correct(void) {
  /* Upstream's hash is public and unkeyed: ints whose hashes times the
   * Fibonacci multiplier are small all start at slot 0 of every table, so
   * they form one chain. Insertions into it are refused once it is 1024
   * long (a ValueError, so the work per insertion stays bounded); the map
   * stays correct (found, in order), its table bounded, and other keys
   * still go in. */
  enum { N = 3000, MAX_CHAIN = 1024 };
  uint64_t inv = 11400714819323198485ull; /* inverse of the odd multiplier */
  for (int i = 0; i < 6; ++i) inv *= 2 - 11400714819323198485ull * inv;
  TVMFFIObject* dict = wf_map_new(kTVMFFIDict, 0);
  CHECK(dict != NULL);
  int64_t inserted = 0, refused = 0;
  for (uint64_t i = 0; i < N; ++i) {
    /* hash(int k) = 1 ^ (k + 0x9e3779b9 + 64): solve for k */
    uint64_t h = inv * i;
    TVMFFIAny k = any_int((int64_t)((h ^ 1u) - 0x9e3779b9u - 64u));
    CHECK(wf_map_hash(&k) == h);
    TVMFFIAny v = any_int(inserted);
    if (wf_map_set(dict, &k, &v) == 0) {
      ++inserted;
    } else {
      ++refused;
      CHECK_RAISED("ValueError",
                   "ffi.Dict: more than 1024 keys share one hash chain; the insertion is refused "
                   "(keys built to collide?)");
    }
  }
  CHECK(inserted >= MAX_CHAIN && inserted < N);
  CHECK_EQ_INT(inserted + refused, N);
  CHECK_EQ_INT(wf_map_size(dict), inserted);
  CHECK(wf_map_longest_chain(dict) <= MAX_CHAIN);
  int64_t pos = 0, n = 0;
  for (wf_map_entry* e; (e = wf_map_next(dict, &pos)) != NULL; ++n) {
    CHECK(wf_map_find(dict, &e->key) == e); /* every key is found again */
    CHECK_EQ_INT(e->value.v_int64, n);      /* in insertion order */
  }
  CHECK_EQ_INT(n, inserted);
  CHECK(wf_map_obj_of(dict)->slots <= 16 * N);
  TVMFFIAny k = any_int(12345), v = any_int(-1);
  CHECK(wf_map_set(dict, &k, &v) == 0); /* an ordinary key still goes in */
  CHECK(wf_map_find(dict, &k) != NULL);
  wf_obj_decref(dict);
}

/* ----------------------------------------------------------- size checks */
void bounded_sizes_are_checked_before_arithmetic(void) {
  /* an empty tensor whose other extents multiply past 64 bits */
  int64_t shape[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.ndim = 3;
  t.shape = shape;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  CHECK(WebFFITensorNumBytes(&t) == -1);
  CHECK_RAISED("ValueError", "Tensor size overflows 64 bits");
  int64_t big[2] = {INT64_C(1) << 62, 4};
  t.ndim = 2;
  t.shape = big;
  CHECK(WebFFITensorNumBytes(&t) == -1);
  CHECK_RAISED("ValueError", "Tensor size overflows 64 bits");
  /* a map asked for more entries than its index can address */
  CHECK(wf_map_new(kTVMFFIDict, INT64_C(1) << 40) == NULL);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  CHECK_EQ_STR(((TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject)))->kind.data, "MemoryError");
  TVMFFIObjectDecRef(err);
}

/* ------------------------------------------- churn gives everything back */
/* Registering and removing names (one name, or ever new ones with a few
 * live) leaves no markers: the table holds the live keys only, so it keeps
 * its size and every probe run stays short. Checked against a model with
 * random operations, then counted after 200,000 cycles of each kind. */
void bounded_strmap_churn_leaves_nothing_behind(void) {
  enum { KEYS = 512 };
  wf_strmap m = {0};
  static void* model[KEYS];
  char key[32];
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (int step = 0; step < 200000; ++step) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    int k = (int)(rng % KEYS);
    int n = snprintf(key, sizeof key, "churn.%d", k);
    void* value = (void*)(uintptr_t)(step + 1);
    switch ((rng >> 20) % 3) {
      case 0:
        CHECK(wf_strmap_put(&m, key, (size_t)n, value) == 0);
        model[k] = value;
        break;
      case 1:
        CHECK(wf_strmap_remove(&m, key, (size_t)n) == model[k]);
        model[k] = NULL;
        break;
      default:
        CHECK(wf_strmap_get(&m, key, (size_t)n) == model[k]);
    }
  }
  size_t live = 0;
  for (int k = 0; k < KEYS; ++k) {
    int n = snprintf(key, sizeof key, "churn.%d", k);
    CHECK(wf_strmap_get(&m, key, (size_t)n) == model[k]);
    live += model[k] != NULL;
  }
  CHECK(m.used == live);
  wf_strmap_clear(&m, NULL);

  /* 100 live names; one name registered and removed 200,000 times, then
   * 200,000 names each registered and removed once */
  for (int k = 0; k < 100; ++k) {
    int n = snprintf(key, sizeof key, "live.%d", k);
    CHECK(wf_strmap_put(&m, key, (size_t)n, &m) == 0);
  }
  size_t capacity = m.capacity;
  for (int i = 0; i < 200000; ++i) {
    CHECK(wf_strmap_put(&m, "one.name", 8, &m) == 0);
    CHECK(wf_strmap_remove(&m, "one.name", 8) == &m);
  }
  for (int i = 0; i < 200000; ++i) {
    int n = snprintf(key, sizeof key, "distinct.%d", i);
    CHECK(wf_strmap_put(&m, key, (size_t)n, &m) == 0);
    CHECK(wf_strmap_remove(&m, key, (size_t)n) == &m);
  }
  CHECK(m.used == 100);
  CHECK(m.capacity == capacity);
  /* no probe run is longer than the live keys could make it */
  size_t run = 0, longest = 0;
  for (size_t i = 0; i < 2 * m.capacity; ++i) {
    run = m.slots[i & (m.capacity - 1)].key != NULL ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  CHECK(longest <= 100);
  wf_strmap_clear(&m, NULL);
}
