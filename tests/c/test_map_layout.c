/* Map and Dict storage against upstream tvm-ffi's layout, read here by a
 * reader written from that layout's description alone (byte offsets, no
 * struct of src/map.h): what C++ compiled against upstream's headers sees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/any.h"
#include "../../src/map.h"
#include "../../src/str.h"
#include "harness.h"

/* ---------------------------------------------- the reader (upstream's rules) */
#define PTR_SIZE sizeof(void*)
#define OFF_DATA sizeof(TVMFFIObject)
#define OFF_SIZE (OFF_DATA + 8)
#define OFF_SLOTS (OFF_DATA + 16)
#define OFF_DELETER (OFF_DATA + 24)
#define OFF_FIB (OFF_DELETER + PTR_SIZE)
#define OFF_HEAD ((OFF_FIB + 4 + 7) & ~(size_t)7)
#define OFF_TAIL (OFF_HEAD + 8)
#define BLOCK_BYTES (16 + 16 * 48)
#define NONE UINT64_MAX

static uint64_t u64_at(const void* obj, size_t off) {
  uint64_t v;
  memcpy(&v, (const char*)obj + off, 8);
  return v;
}
static void* ptr_at(const void* obj, size_t off) {
  void* p;
  memcpy(&p, (const char*)obj + off, sizeof(p));
  return p;
}
static int is_small(const void* obj) { return (u64_at(obj, OFF_SLOTS) >> 63) != 0; }
static uint64_t num_slots(const void* obj) { return u64_at(obj, OFF_SLOTS) & ~(UINT64_C(1) << 63); }
static uint32_t fib_shift(const void* obj) {
  uint32_t v;
  memcpy(&v, (const char*)obj + OFF_FIB, 4);
  return v;
}
static uint8_t* meta_of(const void* obj, uint64_t i) {
  return (uint8_t*)ptr_at(obj, OFF_DATA) + (i / 16) * BLOCK_BYTES + i % 16;
}
static char* item_of(const void* obj, uint64_t i) {
  return (char*)ptr_at(obj, OFF_DATA) + (i / 16) * BLOCK_BYTES + 16 + (i % 16) * 48;
}
static TVMFFIAny* item_key(const void* obj, uint64_t i) { return (TVMFFIAny*)item_of(obj, i); }
static uint64_t item_link(const void* obj, uint64_t i, int next) {
  return u64_at(item_of(obj, i), 32 + (next ? 8 : 0));
}

static uint64_t jump(unsigned code) {
  static const uint64_t large[] = {
    8515u, 19110u, 42778u, 96141u, 216153u,
    486591u, 1092981u, 2458653u, 5532801u, 12442566u,
    27993903u, 62983476u, 141717030u, 318844378u, 717352503u,
    1614057336u, 3631522476u, 8170957530ull, 18384510628ull, 41364789378ull,
    93070452520ull, 209408356380ull, 471168559170ull, 1060128894105ull, 2385289465695ull,
    5366898840628ull, 12075518705635ull, 27169915244790ull, 61132312065111ull, 137547689707000ull,
    309482283181501ull, 696335127828753ull, 1566753995631385ull, 3525196511162271ull, 7931691992677701ull,
    17846306936293605ull, 40154190677507445ull, 90346928918121501ull, 203280589587557251ull, 457381325854679626ull,
    1029107982097042876ull, 2315492959180353330ull, 5209859154120846435ull};
  if (code < 16) return code;
  if (code < 83) return (uint64_t)(code - 10) * (code - 9) / 2; /* 21, 28, ... 2628 */
  return large[code - 83];
}

static uint64_t ref_hash(const TVMFFIAny* key) {
  TVMFFIByteArray s;
  int is_str = wf_any_string_view(key, &s), is_bytes = !is_str && wf_any_bytes_view(key, &s);
  uint64_t tag = is_str ? kTVMFFIStr : is_bytes ? kTVMFFIBytes : (uint64_t)key->type_index;
  uint64_t v = key->v_uint64;
  if (is_str || is_bytes) {
    v = 0;
    for (size_t i = 0; i < s.size; i += 8) {
      uint64_t w = 0;
      for (size_t j = 0; j < 8 && i + j < s.size; ++j) {
        w |= (uint64_t)(unsigned char)s.data[i + j] << (8 * j);
      }
      v = (v * 1099511628211ull + w) % 2147483647ull;
    }
  }
  return tag ^ (v + 0x9e3779b9u + (tag << 6) + (tag >> 2));
}

static int ref_equal(const TVMFFIAny* a, const TVMFFIAny* b) {
  TVMFFIByteArray x, y;
  if (wf_any_string_view(a, &x)) {
    return wf_any_string_view(b, &y) && x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
  }
  return a->type_index == b->type_index && a->v_uint64 == b->v_uint64;
}

/* Upstream's lookup: the value for key, or NULL. */
static TVMFFIAny* reader_find(const void* obj, const TVMFFIAny* key) {
  uint64_t size = u64_at(obj, OFF_SIZE);
  if (is_small(obj)) {
    TVMFFIAny* kv = (TVMFFIAny*)ptr_at(obj, OFF_DATA);
    for (uint64_t i = 0; i < size; ++i) {
      if (ref_equal(&kv[2 * i], key)) return &kv[2 * i + 1];
    }
    return NULL;
  }
  if (size == 0) return NULL;
  uint64_t i = (ref_hash(key) * 11400714819323198485ull) >> fib_shift(obj);
  if (*meta_of(obj, i) & 0x80) return NULL;
  for (;;) {
    if (ref_equal(item_key(obj, i), key)) return item_key(obj, i) + 1;
    uint64_t d = jump(*meta_of(obj, i) & 0x7f);
    if (d == 0) return NULL;
    i = (i + d) % num_slots(obj);
  }
}

/* Upstream's iteration: the keys in order, into keys[]; returns the count. */
static uint64_t reader_keys(const void* obj, TVMFFIAny* keys, uint64_t cap) {
  uint64_t size = u64_at(obj, OFF_SIZE), n = 0;
  if (is_small(obj)) {
    TVMFFIAny* kv = (TVMFFIAny*)ptr_at(obj, OFF_DATA);
    for (; n < size && n < cap; ++n) keys[n] = kv[2 * n];
    return n;
  }
  uint64_t prev = NONE;
  for (uint64_t i = u64_at(obj, OFF_HEAD); i != NONE && n < cap; i = item_link(obj, i, 1)) {
    CHECK(i < num_slots(obj));
    CHECK(item_link(obj, i, 0) == prev);
    keys[n++] = *item_key(obj, i);
    prev = i;
  }
  CHECK(u64_at(obj, OFF_TAIL) == prev);
  return n;
}

/* The dense invariants upstream's code relies on. */
static void reader_check(const void* obj) {
  uint64_t size = u64_at(obj, OFF_SIZE);
  if (is_small(obj)) {
    CHECK(num_slots(obj) <= 4 && size <= num_slots(obj));
    return;
  }
  uint64_t slots = num_slots(obj), used = 0;
  CHECK(slots >= 2 && (slots & (slots - 1)) == 0);
  CHECK((UINT64_C(1) << (64 - fib_shift(obj))) == slots);
  CHECK((double)size <= (double)slots * 0.99);
  for (uint64_t i = 0; i < slots; ++i) {
    uint8_t m = *meta_of(obj, i);
    CHECK(m != 0xFE); /* reserved slots exist only mid-insertion */
    if (m == 0xFF) continue;
    ++used;
    /* a head sits at its own home; every slot is on its key's chain */
    uint64_t home = (ref_hash(item_key(obj, i)) * 11400714819323198485ull) >> fib_shift(obj);
    CHECK(((m & 0x80) == 0) == (home == i));
    CHECK(reader_find(obj, item_key(obj, i)) == item_key(obj, i) + 1);
  }
  CHECK(used == size);
}

/* ------------------------------------------------------------------ tests */
static TVMFFIObject* new_dict(void) {
  TVMFFIObject* d = wf_map_new(kTVMFFIDict, 0);
  CHECK(d != NULL);
  return d;
}

static TVMFFIAny key_n(int64_t i, int as_string) {
  if (!as_string) return any_int(i);
  char text[32];
  snprintf(text, sizeof(text), i % 3 ? "key-%lld" : "k%lld", (long long)i); /* small and heap */
  TVMFFIByteArray b = {text, strlen(text)};
  TVMFFIAny s;
  CHECK(TVMFFIStringFromByteArray(&b, &s) == 0);
  return s;
}

void map_layout_small_form(void) {
  TVMFFIObject* d = new_dict();
  CHECK(is_small(d) && num_slots(d) == 4 && u64_at(d, OFF_SIZE) == 0);
  TVMFFIAny k[4] = {any_cstr("alpha"), any_int(7), any_cstr("a key longer than seven"), any_bool(1)};
  for (int64_t i = 0; i < 4; ++i) {
    TVMFFIAny v = any_int(100 + i);
    CHECK(wf_map_set(d, &k[i], &v) == 0);
  }
  CHECK(is_small(d) && u64_at(d, OFF_SIZE) == 4);
  TVMFFIAny keys[4];
  CHECK(reader_keys(d, keys, 4) == 4);
  for (int64_t i = 0; i < 4; ++i) {
    CHECK(ref_equal(&keys[i], &k[i]));
    TVMFFIAny* v = reader_find(d, &k[i]);
    CHECK(v != NULL && v->v_int64 == 100 + i);
  }
  /* erase closes the gap: the order stays */
  CHECK(wf_map_erase(d, &k[1]) == 1);
  CHECK(reader_keys(d, keys, 4) == 3);
  CHECK(ref_equal(&keys[0], &k[0]) && ref_equal(&keys[1], &k[2]) && ref_equal(&keys[2], &k[3]));
  CHECK(reader_find(d, &k[1]) == NULL);
  wf_obj_decref(d);
}

void map_layout_fifth_key_turns_dense(void) {
  TVMFFIObject* d = new_dict();
  for (int64_t i = 0; i < 5; ++i) {
    TVMFFIAny k = any_int(i * 10), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    CHECK(is_small(d) == (i < 4));
  }
  /* upstream's size for 4 pairs: 8 slots, shift 61 */
  CHECK(num_slots(d) == 8 && fib_shift(d) == 61);
  CHECK(ptr_at(d, OFF_DELETER) != NULL);
  reader_check(d);
  TVMFFIAny keys[5];
  CHECK(reader_keys(d, keys, 5) == 5);
  for (int64_t i = 0; i < 5; ++i) CHECK_EQ_INT(keys[i].v_int64, i * 10);
  /* replacing a value keeps the key's place */
  TVMFFIAny k = any_int(0), v = any_int(-1);
  CHECK(wf_map_set(d, &k, &v) == 0);
  CHECK(reader_keys(d, keys, 5) == 5 && keys[0].v_int64 == 0 && reader_find(d, &k)->v_int64 == -1);
  /* clearing our own map returns it to the small form */
  wf_map_clear(d);
  CHECK(is_small(d) && u64_at(d, OFF_SIZE) == 0);
  wf_obj_decref(d);
}

static void grow_erase_check(int as_string) {
  enum { N = 3000 };
  TVMFFIObject* d = new_dict();
  static TVMFFIAny order[N];
  for (int64_t i = 0; i < N; ++i) {
    TVMFFIAny k = key_n(i, as_string), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    wf_any_release(&k);
    if ((i & (i - 1)) == 0 || i == N - 1) reader_check(d);
  }
  CHECK(num_slots(d) >= N && num_slots(d) <= 4 * N);
  /* erase every third key: chains are patched as upstream patches them */
  for (int64_t i = 0; i < N; i += 3) {
    TVMFFIAny k = key_n(i, as_string);
    CHECK(wf_map_erase(d, &k) == 1);
    CHECK(reader_find(d, &k) == NULL);
    wf_any_release(&k);
  }
  reader_check(d);
  uint64_t n = reader_keys(d, order, N);
  CHECK(n == u64_at(d, OFF_SIZE));
  int64_t expect = 1;
  for (uint64_t j = 0; j < n; ++j, ++expect) {
    if (expect % 3 == 0) ++expect;
    TVMFFIAny* v = reader_find(d, &order[j]);
    CHECK(v != NULL && v->v_int64 == expect);
    CHECK(wf_map_find(d, &order[j]) != NULL);
  }
  /* and re-inserted keys go last */
  TVMFFIAny k0 = key_n(0, as_string), v0 = any_int(-5);
  CHECK(wf_map_set(d, &k0, &v0) == 0);
  n = reader_keys(d, order, N);
  CHECK(ref_equal(&order[n - 1], &k0));
  wf_any_release(&k0);
  reader_check(d);
  wf_obj_decref(d);
}

/* Growth after erasures and re-insertions: the insertion order (not the
 * order of the slots) survives every rebuild, and each new table keeps
 * upstream's invariants. The expected order is kept here as a list. */
static void grow_after_erase_check(int as_string) {
  enum { N = 6000 };
  static int64_t expect[2 * N];
  int64_t n = 0;
  TVMFFIObject* d = new_dict();
  /* a first fill, then every other key erased and every fourth put back */
  for (int64_t i = 0; i < 200; ++i) {
    TVMFFIAny k = key_n(i, as_string), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    wf_any_release(&k);
  }
  for (int64_t i = 0; i < 200; i += 2) {
    TVMFFIAny k = key_n(i, as_string);
    CHECK(wf_map_erase(d, &k) == 1);
    wf_any_release(&k);
  }
  for (int64_t i = 1; i < 200; i += 2) expect[n++] = i;
  for (int64_t i = 0; i < 200; i += 4) {
    TVMFFIAny k = key_n(i, as_string), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    wf_any_release(&k);
    expect[n++] = i;
  }
  /* then enough new keys for several rebuilds, erasing as it goes */
  for (int64_t i = 200; i < N; ++i) {
    TVMFFIAny k = key_n(i, as_string), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    wf_any_release(&k);
    expect[n++] = i;
    if (i % 5 == 0) {
      TVMFFIAny g = key_n(i - 3, as_string);
      CHECK(wf_map_erase(d, &g) == 1);
      wf_any_release(&g);
      for (int64_t j = n - 1; j >= 0; --j) {
        if (expect[j] == i - 3) {
          memmove(&expect[j], &expect[j + 1], (size_t)(n - j - 1) * sizeof(int64_t));
          --n;
          break;
        }
      }
    }
    if ((i & (i - 1)) == 0) reader_check(d);
  }
  reader_check(d);
  static TVMFFIAny order[2 * N];
  CHECK_EQ_INT(reader_keys(d, order, 2 * N), n);
  for (int64_t j = 0; j < n; ++j) {
    TVMFFIAny* v = reader_find(d, &order[j]);
    CHECK(v != NULL);
    CHECK_EQ_INT(v->v_int64, expect[j]);
  }
  /* the core's own walk agrees */
  int64_t pos = 0, j = 0;
  for (wf_map_entry* e; (e = wf_map_next(d, &pos)) != NULL; ++j) CHECK_EQ_INT(e->value.v_int64, expect[j]);
  CHECK_EQ_INT(j, n);
  wf_obj_decref(d);
}

void map_layout_growth_after_erase_keeps_order_int_keys(void) { grow_after_erase_check(0); }
void map_layout_growth_after_erase_keeps_order_string_keys(void) { grow_after_erase_check(1); }

/* wf_map_reserve: one rebuild up front, none while the reserved keys come;
 * pairs and their order stay. */
void map_layout_reserve_builds_once(void) {
  enum { N = 1000 };
  TVMFFIObject* d = new_dict();
  for (int64_t i = 0; i < 3; ++i) {
    TVMFFIAny k = key_n(i, 1), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    wf_any_release(&k);
  }
  CHECK(wf_map_reserve(d, 2) == 0); /* fewer than it holds: nothing changes */
  CHECK(is_small(d));
  CHECK(wf_map_reserve(d, N) == 0);
  CHECK(!is_small(d) && (double)num_slots(d) * 0.99 >= N);
  reader_check(d);
  void* data = ptr_at(d, OFF_DATA);
  for (int64_t i = 3; i < N; ++i) {
    TVMFFIAny k = key_n(i, 1), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    wf_any_release(&k);
  }
  CHECK(ptr_at(d, OFF_DATA) == data); /* no rebuild on the way */
  reader_check(d);
  /* a dense map with holes, reserved far larger: same pairs, same order */
  for (int64_t i = 0; i < N; i += 7) {
    TVMFFIAny k = key_n(i, 1);
    CHECK(wf_map_erase(d, &k) == 1);
    wf_any_release(&k);
  }
  uint64_t slots = num_slots(d);
  CHECK(wf_map_reserve(d, 20 * N) == 0);
  CHECK(num_slots(d) > slots && (double)num_slots(d) * 0.99 >= 20 * N);
  reader_check(d);
  static TVMFFIAny order[N];
  uint64_t n = reader_keys(d, order, N), j = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (i % 7 == 0) continue;
    TVMFFIAny* v = reader_find(d, &order[j++]);
    CHECK(v != NULL);
    CHECK_EQ_INT(v->v_int64, i);
  }
  CHECK_EQ_INT(j, n);
  wf_obj_decref(d);
  /* an empty map reserved dense */
  d = new_dict();
  CHECK(wf_map_reserve(d, 5) == 0 && !is_small(d) && u64_at(d, OFF_SIZE) == 0);
  reader_check(d);
  wf_obj_decref(d);
}

void map_layout_growth_and_erase_int_keys(void) { grow_erase_check(0); }
void map_layout_growth_and_erase_string_keys(void) { grow_erase_check(1); }

void map_layout_colliding_chains(void) {
  /* keys that all start at slot 0, and keys whose home is taken by a chain
   * body (the head-sparing move); erase from the middle of a chain */
  uint64_t inv = 11400714819323198485ull;
  for (int i = 0; i < 6; ++i) inv *= 2 - 11400714819323198485ull * inv;
  TVMFFIObject* d = wf_map_new(kTVMFFIDict, 100);
  CHECK(d != NULL && !is_small(d));
  uint32_t shift = fib_shift(d);
  enum { N = 60 };
  TVMFFIAny keys[2 * N];
  for (int64_t i = 0; i < 2 * N; ++i) {
    /* the first N at home 0, the next N at homes 1, 2, ... */
    uint64_t target = i < N ? (uint64_t)i : ((uint64_t)(i - N + 1) << shift);
    uint64_t h = inv * target;
    keys[i] = any_int((int64_t)((h ^ 1u) - 0x9e3779b9u - 64u));
    CHECK(ref_hash(&keys[i]) == h);
    TVMFFIAny v = any_int(i);
    CHECK(wf_map_set(d, &keys[i], &v) == 0);
  }
  reader_check(d);
  for (int64_t i = 0; i < 2 * N; i += 4) CHECK(wf_map_erase(d, &keys[i]) == 1);
  reader_check(d);
  for (int64_t i = 0; i < 2 * N; ++i) {
    TVMFFIAny* v = reader_find(d, &keys[i]);
    CHECK((v != NULL) == (i % 4 != 0));
    if (v != NULL) CHECK_EQ_INT(v->v_int64, i);
  }
  wf_obj_decref(d);
}

/* ------------------------------------------ a map made the way C++ makes it */
typedef struct {
  TVMFFIObject header;
  char fields[80 - sizeof(TVMFFIObject)]; /* the shared and dense fields */
  TVMFFIAny inline_kv[2 * 2];             /* two pairs, as upstream's smallest */
} foreign_map;
static int foreign_deleted;

static void foreign_deleter(void* self, int flags) {
  /* what upstream's destructor does: release the pairs of whichever form
   * the map is in now, then data_deleter(data) */
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    TVMFFIAny keys[64];
    TVMFFIAny* values[64];
    uint64_t n = reader_keys(self, keys, 64);
    for (uint64_t i = 0; i < n; ++i) values[i] = reader_find(self, &keys[i]);
    for (uint64_t i = 0; i < n; ++i) {
      wf_any_release(values[i]);
      wf_any_release(&keys[i]);
    }
    void (*del)(void*) = (void (*)(void*))ptr_at(self, OFF_DELETER);
    if (del != NULL) del(ptr_at(self, OFF_DATA));
    ++foreign_deleted;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

void map_layout_core_changes_a_foreign_map(void) {
  foreign_map* f = (foreign_map*)calloc(1, sizeof(foreign_map));
  CHECK(f != NULL);
  f->header.combined_ref_count = 1 | (UINT64_C(1) << 32);
  f->header.type_index = kTVMFFIDict;
  f->header.deleter = foreign_deleter;
  void* data = f->inline_kv;
  memcpy((char*)f + OFF_DATA, &data, sizeof(data));
  uint64_t slots = (UINT64_C(1) << 63) | 2;
  memcpy((char*)f + OFF_SLOTS, &slots, 8);
  TVMFFIObject* d = &f->header;
  /* the core fills it, widens it past 2 slots, then turns it dense in place */
  for (int64_t i = 0; i < 9; ++i) {
    TVMFFIAny k = key_n(i, 1), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    wf_any_release(&k);
    if (i == 1) CHECK(is_small(d) && num_slots(d) == 2 && ptr_at(d, OFF_DATA) == f->inline_kv);
    if (i == 2) CHECK(is_small(d) && num_slots(d) == 4 && ptr_at(d, OFF_DATA) != f->inline_kv);
  }
  CHECK(!is_small(d));
  reader_check(d);
  TVMFFIAny k3 = key_n(3, 1);
  CHECK(wf_map_erase(d, &k3) == 1);
  CHECK(reader_find(d, &k3) == NULL && wf_map_find(d, &k3) == NULL);
  wf_any_release(&k3);
  reader_check(d);
  /* clearing leaves a foreign dense map dense */
  TVMFFIAny k4 = key_n(4, 1);
  CHECK(wf_map_find(d, &k4) != NULL);
  wf_map_clear(d);
  CHECK(!is_small(d) && u64_at(d, OFF_SIZE) == 0 && wf_map_find(d, &k4) == NULL);
  TVMFFIAny v = any_int(1);
  CHECK(wf_map_set(d, &k4, &v) == 0);
  wf_any_release(&k4);
  reader_check(d);
  CHECK_EQ_INT(wf_map_nesting(d), 1);
  foreign_deleted = 0;
  wf_obj_decref(d);
  CHECK_EQ_INT(foreign_deleted, 1);
}
