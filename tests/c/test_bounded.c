/* Bounded work on hostile shapes: nesting refused at construction, cycles,
 * release of very deep chains, shared (DAG) structure in every traversal,
 * keyed map hashing and size checks. */
#include <stdint.h>
#include <webffi/device_api.h>

#include "../../src/any.h"
#include "../../src/hash.h"
#include "../../src/map.h"
#include "../../src/memo.h"
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
  CHECK_EQ_STR(any_str(&r), "[[[...]]]");
  release(&r);
  CHECK(call_global("ffi.RecursiveHash", &a, 1, &r) == -1);
  CHECK_RAISED("ValueError", "RecursiveHash: nesting deeper than 256 levels (or a cycle)");
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
  /* repr: printed once per node, short texts repeated */
  CHECK(call_global("ffi.ReprPrint", &a, 1, &r) == 0);
  CHECK(str_size(&r) < 100 * LEVELS);
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

/* ---------------------------------------------------------- keyed hashing */
void bounded_map_hash_is_keyed(void) {
  uint64_t process[4], other[4];
  wf_hash_key(process);
  CHECK((process[0] | process[1] | process[2] | process[3]) != 0);
  memcpy(other, process, sizeof(other));
  other[0] ^= 2;
  /* map hashing uses the process key; another key gives other hashes */
  TVMFFIAny s = any_cstr("a key"), i = any_int(42);
  CHECK(wf_any_hash(&s) == wf_hash_keyed_with(process, 0, "a key", 5));
  CHECK(wf_any_hash(&i) == wf_hash_keyed_word_with(process, 0, 42, kTVMFFIInt));
  CHECK(wf_hash_keyed_with(other, 0, "a key", 5) != wf_hash_keyed_with(process, 0, "a key", 5));
  CHECK(wf_hash_keyed_word_with(other, 0, 42, kTVMFFIInt) !=
        wf_hash_keyed_word_with(process, 0, 42, kTVMFFIInt));
  /* and so does another salt, and every byte and the length count */
  CHECK(wf_any_hash_salted(&s, 1) != wf_any_hash(&s));
  CHECK(wf_hash_keyed_with(process, 0, "a kez", 5) != wf_hash_keyed_with(process, 0, "a key", 5));
  CHECK(wf_hash_keyed_with(process, 0, "a key\0", 6) != wf_hash_keyed_with(process, 0, "a key", 5));
  const char* long_text = "a string longer than sixteen bytes, to cover whole blocks";
  CHECK(wf_hash_keyed_with(process, 0, long_text, strlen(long_text)) !=
        wf_hash_keyed_with(process, 0, long_text, strlen(long_text) - 1));
  /* structural hashes stay the same in every run: they do not use the key */
  CHECK(wf_any_hash_stable(&s) != wf_any_hash(&s));
}

void bounded_map_reseeds_when_probes_run_long(void) {
  /* A white-box attacker who knows this process's key: 500 int keys that
   * share their home slot in a 1024-slot index. The map notices the long
   * probe and re-seeds itself, which scatters them again. */
  uint64_t key[4];
  wf_hash_key(key);
  TVMFFIObject* dict = wf_map_new(kTVMFFIDict, 512);
  CHECK(dict != NULL && wf_map_cell_of(dict)->num_slots == 1024);
  int64_t found = 0;
  for (int64_t v = 0; found < 500; ++v) {
    if ((wf_hash_keyed_word_with(key, 0, (uint64_t)v, kTVMFFIInt) & 1023) != 0) continue;
    TVMFFIAny k = any_int(v), x = any_int(found++);
    CHECK(wf_map_set(dict, &k, &x) == 0);
  }
  CHECK(wf_map_cell_of(dict)->reseeds >= 1);
  CHECK(wf_map_longest_probe(dict) <= 64);
  int64_t pos = 0, n = 0;
  for (wf_map_entry* e; (e = wf_map_next(dict, &pos)) != NULL; ++n) {
    CHECK(wf_map_find(dict, &e->key) == e); /* every key is found again */
    CHECK_EQ_INT(e->value.v_int64, n);      /* in insertion order */
  }
  CHECK_EQ_INT(n, 500);
  wf_obj_decref(dict);
}

/* The inverse of the splitmix64 finaliser (wf_hash_mix), as an attacker of
 * an unkeyed map would use it. */
static uint64_t unxorshift(uint64_t x, int k) {
  uint64_t y = x;
  for (int i = 0; i < 64 / k + 1; ++i) y = x ^ (y >> k);
  return y;
}
static uint64_t inverse_odd(uint64_t a) {
  uint64_t x = a; /* Newton: correct bits double each step */
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}
static uint64_t unmix(uint64_t h) {
  h = unxorshift(h, 31);
  h *= inverse_odd(0x94d049bb133111ebull);
  h = unxorshift(h, 27);
  h *= inverse_odd(0xbf58476d1ce4e5b9ull);
  return unxorshift(h, 30);
}

void bounded_crafted_collisions_stay_short(void) {
  enum { N = 20000 };
  /* int keys whose unkeyed hash is identical in the low 32 bits: every one
   * would land in the same slot of an unkeyed table */
  uint64_t tag = wf_hash_mix((uint64_t)(uint32_t)kTVMFFIInt);
  TVMFFIObject* dict = wf_map_new(kTVMFFIDict, 0);
  CHECK(dict != NULL);
  for (uint64_t i = 0; i < N; ++i) {
    TVMFFIAny k = any_int((int64_t)(unmix((i << 32) | 0x1234u) ^ tag));
    CHECK((wf_any_hash_stable(&k) & 0xffffffffu) == 0x1234u);
    TVMFFIAny v = any_int((int64_t)i);
    CHECK(wf_map_set(dict, &k, &v) == 0);
  }
  CHECK_EQ_INT(wf_map_size(dict), N);
  /* with the keyed hash the probes stay short: linear probing at most half
   * full; a shared slot would make the longest N */
  CHECK(wf_map_longest_probe(dict) < 100);
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
