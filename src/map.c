/*
 * Map and Dict storage and their ffi.* global functions.
 *
 * The layout is upstream tvm-ffi's (its C++ headers implement Map and Dict
 * inline), so maps cross between this core and C++ code compiled against
 * those headers in both directions: either side reads, walks, looks up,
 * inserts into and erases from the other's maps. What has to agree:
 *
 * - The object (wf_map_obj in src/map.h): data, size, slots (top bit set:
 *   the small form), data_deleter, then fib_shift and the insertion-order
 *   list ends of the dense form.
 * - Small form (at most 4 pairs): `data` points at an array of pairs in
 *   insertion order, looked up by a linear scan; erase closes the gap.
 * - Dense form: `data` points at blocks of 16 one-byte slot states and 16
 *   items (pair, prev, next). A key's chain starts at slot
 *   (hash * 11400714819323198485) >> fib_shift when that slot holds a chain
 *   head (top bit clear); the low 7 bits of a state pick the distance to the
 *   next slot of the chain from wf_map_jumps. 0xFF is an empty slot, 0xFE one
 *   reserved while a chain moves. Inserting follows upstream step by step
 *   (append at the first empty jump from the tail; a head slot taken by
 *   another chain has that chain moved away first; too full, or no free
 *   jump: the table doubles and every pair is inserted again in insertion
 *   order), because a lookup only finds what sits where upstream would put
 *   it.
 * - Keys hash and compare as upstream's AnyHash/AnyEqual (wf_map_hash).
 * - Whoever changes a map's storage may swap `data` for a block of its own,
 *   with its own data_deleter, and may turn a small map dense in place
 *   (every map object has room for the dense fields), never dense to small
 *   unless it made the object: the maker's deleter frees what data_deleter
 *   names, whichever form the map ends in.
 *
 * Maps this core makes carry more after the shared fields (wf_map_own): the
 * nesting record and room for 4 pairs inline. A map is ours when its
 * deleter is wf_map_deleter.
 *
 * The hash is upstream's, unkeyed, so crafted keys can make chains long
 * (quadratic insertion); the keyed hash this core used before cannot be
 * kept with a layout that C++ code probes itself.
 */
#include "map.h"

#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "nesting.h"
#include "platform.h"
#include "sentinels.h"
#include "str.h"

#define WF_MAP_SMALL_MAX 4
/* Entry counts past this are refused (MemoryError), well before any size
 * arithmetic below could overflow. */
#define WF_MAP_MAX_ENTRIES (INT64_C(1) << 30)
#define WF_MAP_MAX_SLOTS (UINT64_C(1) << 36)
#define WF_MAP_EMPTY 0xFFu
#define WF_MAP_PROTECTED 0xFEu
#define WF_MAP_NUM_JUMPS 126
/* The longest chain an insertion walks. The hash is upstream's and public,
 * so keys can be built to share one chain, each insertion then walking all
 * of it; random keys at our load factor never come near this length. */
#define WF_MAP_MAX_CHAIN 1024
#define WF_MAP_CHAIN_FULL (WF_MAP_NO_INDEX - 1)

typedef struct {
  wf_map_obj base;
  int32_t nesting; /* src/nesting.h */
  wf_map_entry inline_kv[WF_MAP_SMALL_MAX];
} wf_map_own;

_Static_assert(sizeof(wf_map_entry) == 32, "pair size");
_Static_assert(sizeof(wf_map_item) == 48, "dense item size");
_Static_assert(sizeof(wf_map_block) == 784, "block size");
_Static_assert(offsetof(wf_map_obj, data) == sizeof(TVMFFIObject), "data follows the header");
_Static_assert(offsetof(wf_map_obj, size) == sizeof(TVMFFIObject) + 8, "size offset");
_Static_assert(offsetof(wf_map_obj, slots) == sizeof(TVMFFIObject) + 16, "slots offset");
_Static_assert(offsetof(wf_map_obj, data_deleter) == sizeof(TVMFFIObject) + 24, "deleter offset");
_Static_assert(offsetof(wf_map_obj, iter_head) == (sizeof(void*) == 8 ? 64 : 56), "head offset");

/* Distances from a slot to the next of its chain, by the 7-bit jump code:
 * 0-15, triangle numbers up to 2628, then larger triangle numbers. */
static const uint64_t wf_map_jumps[WF_MAP_NUM_JUMPS] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 21, 28, 36, 45, 55, 66, 78, 91, 105,
    120, 136, 153, 171, 190, 210, 231, 253, 276, 300, 325, 351, 378, 406, 435, 465, 496, 528,
    561, 595, 630, 666, 703, 741, 780, 820, 861, 903, 946, 990, 1035, 1081, 1128, 1176, 1225,
    1275, 1326, 1378, 1431, 1485, 1540, 1596, 1653, 1711, 1770, 1830, 1891, 1953, 2016, 2080,
    2145, 2211, 2278, 2346, 2415, 2485, 2556, 2628, 8515, 19110, 42778, 96141, 216153, 486591,
    1092981, 2458653, 5532801, 12442566, 27993903, 62983476, 141717030, 318844378, 717352503,
    1614057336, UINT64_C(3631522476), UINT64_C(8170957530), UINT64_C(18384510628),
    UINT64_C(41364789378), UINT64_C(93070452520), UINT64_C(209408356380),
    UINT64_C(471168559170), UINT64_C(1060128894105), UINT64_C(2385289465695),
    UINT64_C(5366898840628), UINT64_C(12075518705635), UINT64_C(27169915244790),
    UINT64_C(61132312065111), UINT64_C(137547689707000), UINT64_C(309482283181501),
    UINT64_C(696335127828753), UINT64_C(1566753995631385), UINT64_C(3525196511162271),
    UINT64_C(7931691992677701), UINT64_C(17846306936293605), UINT64_C(40154190677507445),
    UINT64_C(90346928918121501), UINT64_C(203280589587557251), UINT64_C(457381325854679626),
    UINT64_C(1029107982097042876), UINT64_C(2315492959180353330), UINT64_C(5209859154120846435)
};

static void wf_map_deleter(void* self, int flags);

static wf_map_own* wf_map_own_of(TVMFFIObject* map) {
  return map->deleter == wf_map_deleter ? (wf_map_own*)map : NULL;
}

int32_t wf_map_nesting(TVMFFIObject* map) {
  wf_map_own* own = wf_map_own_of(map);
  if (own != NULL) return own->nesting;
  return wf_map_obj_of(map)->size > 0;
}

/* ------------------------------------------------------------ hashing */
#define WF_MAP_MOD 2147483647u

/* x mod (2^31 - 1) without a division: 2^31 is 1 in that ring. */
static inline uint64_t wf_map_mod31(uint64_t x) {
  x = (x & WF_MAP_MOD) + (x >> 31);
  x = (x & WF_MAP_MOD) + (x >> 31);
  return x >= WF_MAP_MOD ? x - WF_MAP_MOD : x;
}

/* Little-endian loads of 8 and of 1-7 bytes (fixed-size copies, which
 * compile to plain loads). */
static inline uint64_t wf_map_load8(const unsigned char* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t x;
  memcpy(&x, p, 8);
  return x;
#else
  uint64_t x = 0;
  for (int i = 8; i-- > 0;) x = (x << 8) | p[i];
  return x;
#endif
}

static inline uint64_t wf_map_load_tail(const unsigned char* p, size_t n) { /* 0 < n < 8 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t x = 0;
  size_t k = 0;
  if (n & 4) {
    uint32_t w;
    memcpy(&w, p, 4);
    x = w;
    k = 4;
  }
  if (n & 2) {
    uint16_t w;
    memcpy(&w, p + k, 2);
    x |= (uint64_t)w << (8 * k);
    k += 2;
  }
  if (n & 1) x |= (uint64_t)p[k] << (8 * k);
  return x;
#else
  uint64_t x = 0;
  for (size_t i = n; i-- > 0;) x = (x << 8) | p[i];
  return x;
#endif
}

/* Upstream's stable byte hash: little-endian words, the tail zero-padded,
 * folded as (h * 1099511628211 + word) mod (2^31 - 1), wrapping at 2^64. */
static inline uint64_t wf_map_hash_bytes(const char* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) h = wf_map_mod31(h * UINT64_C(1099511628211) + wf_map_load8(p + i));
  if (i < n) h = wf_map_mod31(h * UINT64_C(1099511628211) + wf_map_load_tail(p + i, n - i));
  return h;
}

static inline uint64_t wf_map_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9u + (key << 6) + (key >> 2));
}

/* ------------------------------------------ a type's own hash and equality */
/* A type may set `__any_hash__` / `__any_equal__` (upstream's AnyHash and
 * AnyEqual honour them, and C++ code probing a map hashes with them): an
 * opaque pointer to a function with the C++ signature int64_t(const Any&)
 * or bool(const Any&, const Any&) (an Any is a TVMFFIAny, a reference a
 * pointer), or a Function. */
typedef int64_t (*wf_map_hash_ptr)(const TVMFFIAny* v);
typedef _Bool (*wf_map_equal_ptr)(const TVMFFIAny* a, const TVMFFIAny* b);

/* Set when a type's Function failed (its error raised): the caller of
 * wf_map_hash / wf_map_key_equal reports it (wf_map_custom_error). */
static WF_THREAD_LOCAL int wf_map_custom_failed;

/* Both columns exist from start (src/type_attr_columns.c) and are never
 * moved, so their addresses are kept once found. */
static const TVMFFITypeAttrColumn* wf_map_hash_column;
static const TVMFFITypeAttrColumn* wf_map_equal_column;

static const TVMFFIAny* wf_map_custom(const TVMFFITypeAttrColumn** cache, const char* name,
                                      size_t n, int32_t type_index) {
  const TVMFFITypeAttrColumn* col = *cache;
  if (col == NULL) {
    TVMFFIByteArray key = {name, n};
    col = *cache = TVMFFIGetTypeAttrColumn(&key);
    if (col == NULL) return NULL;
  }
  int32_t k = type_index - col->begin_index;
  if (k < 0 || k >= col->size || col->data[k].type_index == kTVMFFINone) return NULL;
  return &col->data[k];
}

static uint64_t wf_map_custom_hash(const TVMFFIAny* f, const TVMFFIAny* key) {
  if (f->type_index == kTVMFFIOpaquePtr) {
    return (uint64_t)((wf_map_hash_ptr)(uintptr_t)f->v_ptr)(key);
  }
  TVMFFIAny r;
  wf_any_set_none(&r);
  if (f->type_index == kTVMFFIFunction && wf_func_call(f->v_obj, key, 1, &r) == 0) {
    if (r.type_index == kTVMFFIInt) return r.v_uint64;
    wf_any_release(&r);
    wf_err_raise("TypeError", "`__any_hash__` of type index %d returned a non-int",
                 (int)key->type_index);
  } else if (f->type_index != kTVMFFIFunction) {
    wf_err_raise("TypeError", "`__any_hash__` of type index %d is neither a function pointer "
                 "nor a Function", (int)key->type_index);
  }
  wf_map_custom_failed = 1;
  return key->v_uint64;
}

static int wf_map_custom_equal(const TVMFFIAny* f, const TVMFFIAny* a, const TVMFFIAny* b) {
  if (f->type_index == kTVMFFIOpaquePtr) return ((wf_map_equal_ptr)(uintptr_t)f->v_ptr)(a, b);
  TVMFFIAny args[2] = {*a, *b};
  TVMFFIAny r;
  wf_any_set_none(&r);
  if (f->type_index == kTVMFFIFunction && wf_func_call(f->v_obj, args, 2, &r) == 0) {
    if (r.type_index == kTVMFFIBool || r.type_index == kTVMFFIInt) return r.v_int64 != 0;
    wf_any_release(&r);
    wf_err_raise("TypeError", "`__any_equal__` of type index %d returned a non-bool",
                 (int)a->type_index);
  } else if (f->type_index != kTVMFFIFunction) {
    wf_err_raise("TypeError", "`__any_equal__` of type index %d is neither a function pointer "
                 "nor a Function", (int)a->type_index);
  }
  wf_map_custom_failed = 1;
  return 0;
}

void wf_map_custom_reset(void) { wf_map_custom_failed = 0; }

int wf_map_custom_error(void) {
  int failed = wf_map_custom_failed;
  wf_map_custom_failed = 0;
  return failed ? -1 : 0;
}

uint64_t wf_map_hash(const TVMFFIAny* key) {
  TVMFFIByteArray s;
  switch (key->type_index) {
    case kTVMFFISmallStr:
      return wf_map_combine(kTVMFFIStr, wf_map_hash_bytes(key->v_bytes, key->small_str_len));
    case kTVMFFIStr: {
      const TVMFFIByteArray* b =
          (const TVMFFIByteArray*)((const char*)key->v_obj + sizeof(TVMFFIObject));
      return wf_map_combine(kTVMFFIStr, wf_map_hash_bytes(b->data, b->size));
    }
    case kTVMFFIRawStr:
      if (!wf_any_string_view(key, &s)) break;
      return wf_map_combine(kTVMFFIStr, wf_map_hash_bytes(s.data, s.size));
    case kTVMFFISmallBytes:
    case kTVMFFIBytes:
    case kTVMFFIByteArrayPtr:
      if (!wf_any_bytes_view(key, &s)) break;
      return wf_map_combine(kTVMFFIBytes, wf_map_hash_bytes(s.data, s.size));
    default:
      if (key->type_index >= kTVMFFIStaticObjectBegin) {
        const TVMFFIAny* f = wf_map_custom(&wf_map_hash_column, "__any_hash__", 12, key->type_index);
        if (f != NULL) return wf_map_combine((uint64_t)(uint32_t)key->type_index, wf_map_custom_hash(f, key));
      }
      break;
  }
  return wf_map_combine((uint64_t)(uint32_t)key->type_index, key->v_uint64);
}

static inline int wf_map_is_text(int32_t t) {
  return t == kTVMFFIStr || t == kTVMFFISmallStr || t == kTVMFFIRawStr || t == kTVMFFIBytes ||
         t == kTVMFFISmallBytes || t == kTVMFFIByteArrayPtr;
}

int wf_map_key_equal(const TVMFFIAny* a, const TVMFFIAny* b) {
  if (a->type_index == b->type_index && a->v_uint64 == b->v_uint64) return 1;
  /* the common miss on a chain: two values that are not text */
  if (!wf_map_is_text(a->type_index) || !wf_map_is_text(b->type_index)) {
    if (a->type_index != b->type_index || a->type_index < kTVMFFIStaticObjectBegin) return 0;
    const TVMFFIAny* f = wf_map_custom(&wf_map_equal_column, "__any_equal__", 13, a->type_index);
    return f != NULL && wf_map_custom_equal(f, a, b);
  }
  if (a->type_index == kTVMFFIStr && b->type_index == kTVMFFIStr) {
    /* two heap strings: their bytes follow the header */
    const TVMFFIByteArray* x = (const TVMFFIByteArray*)((const char*)a->v_obj + sizeof(TVMFFIObject));
    const TVMFFIByteArray* y = (const TVMFFIByteArray*)((const char*)b->v_obj + sizeof(TVMFFIObject));
    return x->size == y->size && memcmp(x->data, y->data, x->size) == 0;
  }
  TVMFFIByteArray x, y;
  if (wf_any_string_view(a, &x)) {
    return wf_any_string_view(b, &y) && x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
  }
  if (wf_any_bytes_view(a, &x)) {
    return wf_any_bytes_view(b, &y) && x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
  }
  return 0;
}

/* The chain walks' comparison: a value that is neither text nor an object
 * equals only the same bits, decided here without a call. */
static inline int wf_map_key_eq(const TVMFFIAny* a, const TVMFFIAny* b) {
  if (a->type_index == b->type_index && a->v_uint64 == b->v_uint64) return 1;
  if ((a->type_index < kTVMFFIStaticObjectBegin && !wf_map_is_text(a->type_index)) ||
      (b->type_index < kTVMFFIStaticObjectBegin && !wf_map_is_text(b->type_index))) {
    return 0;
  }
  return wf_map_key_equal(a, b);
}

/* ------------------------------------------------------- dense storage */
static inline uint8_t* wf_dense_meta(const wf_map_obj* m, uint64_t i) {
  return &((wf_map_block*)m->data)[i / WF_MAP_BLOCK_CAP].meta[i % WF_MAP_BLOCK_CAP];
}
static inline wf_map_item* wf_dense_item(const wf_map_obj* m, uint64_t i) {
  return &((wf_map_block*)m->data)[i / WF_MAP_BLOCK_CAP].item[i % WF_MAP_BLOCK_CAP];
}
static inline uint64_t wf_dense_home(const wf_map_obj* m, uint64_t hash) {
  return (hash * UINT64_C(11400714819323198485)) >> m->fib_shift;
}
/* The next slot of the chain after slot i whose state is meta, or NO_INDEX. */
static inline uint64_t wf_dense_step(const wf_map_obj* m, uint64_t i, uint8_t meta) {
  uint64_t d = wf_map_jumps[meta & 0x7Fu];
  return d == 0 ? WF_MAP_NO_INDEX : (i + d) & (m->slots - 1);
}
static inline void wf_dense_set_jump(const wf_map_obj* m, uint64_t i, uint8_t jump) {
  uint8_t* meta = wf_dense_meta(m, i);
  *meta = (uint8_t)((*meta & 0x80u) | jump);
}
/* Upstream's growth point: more than 99% full. */
static inline int wf_dense_full(const wf_map_obj* m) {
  return (double)(m->size + 1) > (double)m->slots * 0.99;
}

static void wf_dense_free(void* data) { free(data); }

/* Blocks for n_slots (a power of two), every slot empty; NULL with
 * MemoryError raised. */
static wf_map_block* wf_dense_alloc(uint64_t n_slots) {
  uint64_t n_blocks = (n_slots + WF_MAP_BLOCK_CAP - 1) / WF_MAP_BLOCK_CAP;
  if (n_slots > WF_MAP_MAX_SLOTS || n_blocks > SIZE_MAX / sizeof(wf_map_block)) {
    wf_err_raise_oom((size_t)-1);
    return NULL;
  }
  size_t bytes = (size_t)n_blocks * sizeof(wf_map_block);
  wf_map_block* blocks = (wf_map_block*)malloc(bytes);
  if (blocks == NULL) {
    wf_err_raise_oom(bytes);
    return NULL;
  }
  for (uint64_t b = 0; b < n_blocks; ++b) memset(blocks[b].meta, WF_MAP_EMPTY, WF_MAP_BLOCK_CAP);
  return blocks;
}

/* Upstream's table size for cap pairs: the power of two above cap, doubled
 * when that is under 2 * cap. */
static void wf_dense_table_size(uint64_t cap, uint32_t* fib_shift, uint64_t* n_slots) {
  uint32_t shift = 64;
  uint64_t slots = 1;
  for (uint64_t c = cap; c; c >>= 1) {
    --shift;
    slots <<= 1;
  }
  if (slots < cap * 2) {
    --shift;
    slots <<= 1;
  }
  *fib_shift = shift;
  *n_slots = slots;
}

static int wf_dense_init(wf_map_obj* m, uint32_t fib_shift, uint64_t n_slots) {
  wf_map_block* blocks = wf_dense_alloc(n_slots);
  if (blocks == NULL) return -1;
  m->data = blocks;
  m->data_deleter = wf_dense_free;
  m->slots = n_slots;
  m->size = 0;
  m->fib_shift = fib_shift;
  m->iter_head = m->iter_tail = WF_MAP_NO_INDEX;
  return 0;
}

static void wf_dense_unlink(wf_map_obj* m, uint64_t i) {
  wf_map_item* it = wf_dense_item(m, i);
  if (it->prev == WF_MAP_NO_INDEX) {
    m->iter_head = it->next;
  } else {
    wf_dense_item(m, it->prev)->next = it->next;
  }
  if (it->next == WF_MAP_NO_INDEX) {
    m->iter_tail = it->prev;
  } else {
    wf_dense_item(m, it->next)->prev = it->prev;
  }
}

static void wf_dense_push_back(wf_map_obj* m, uint64_t i) {
  wf_map_item* it = wf_dense_item(m, i);
  it->prev = m->iter_tail;
  it->next = WF_MAP_NO_INDEX;
  if (m->iter_tail != WF_MAP_NO_INDEX) wf_dense_item(m, m->iter_tail)->next = i;
  if (m->iter_head == WF_MAP_NO_INDEX) m->iter_head = i;
  m->iter_tail = i;
}

/* Slot dst takes slot src's place in the insertion order. */
static void wf_dense_replace_node(wf_map_obj* m, uint64_t src, uint64_t dst) {
  wf_map_item* s = wf_dense_item(m, src);
  wf_map_item* d = wf_dense_item(m, dst);
  d->prev = s->prev;
  d->next = s->next;
  if (d->prev == WF_MAP_NO_INDEX) {
    m->iter_head = dst;
  } else {
    wf_dense_item(m, d->prev)->next = dst;
  }
  if (d->next == WF_MAP_NO_INDEX) {
    m->iter_tail = dst;
  } else {
    wf_dense_item(m, d->next)->prev = dst;
  }
}

/* The first empty slot a jump away from slot i. */
static int wf_dense_next_empty(const wf_map_obj* m, uint64_t i, uint8_t* jump, uint64_t* out) {
  uint64_t mask = m->slots - 1;
  for (uint8_t j = 1; j < WF_MAP_NUM_JUMPS; ++j) {
    uint64_t c = (i + wf_map_jumps[j]) & mask;
    if (*wf_dense_meta(m, c) == WF_MAP_EMPTY) {
      *jump = j;
      *out = c;
      return 1;
    }
  }
  return 0;
}

/* The slot before slot i on its chain (i is not a head). */
static uint64_t wf_dense_find_prev(const wf_map_obj* m, uint64_t i) {
  uint64_t prev = wf_dense_home(m, wf_map_hash(&wf_dense_item(m, i)->kv.key));
  for (uint64_t next = wf_dense_step(m, prev, *wf_dense_meta(m, prev));
       next != i && next != WF_MAP_NO_INDEX; next = wf_dense_step(m, next, *wf_dense_meta(m, next))) {
    prev = next;
  }
  return prev;
}

static uint64_t wf_dense_lookup(const wf_map_obj* m, const TVMFFIAny* key) {
  if (m->size == 0) return WF_MAP_NO_INDEX;
  uint64_t i = wf_dense_home(m, wf_map_hash(key));
  uint8_t meta = *wf_dense_meta(m, i);
  if (meta & 0x80u) return WF_MAP_NO_INDEX; /* not a head: no chain for this hash */
  for (;;) {
    if (wf_map_key_eq(key, &wf_dense_item(m, i)->kv.key)) return i;
    i = wf_dense_step(m, i, meta);
    if (i == WF_MAP_NO_INDEX) return WF_MAP_NO_INDEX;
    meta = *wf_dense_meta(m, i);
  }
}

/* Slot i belongs to another chain: moves that chain's part from i on to
 * empty slots after its predecessor, then makes i the head of a new chain.
 * NO_INDEX when some part found no empty slot (the caller grows the table,
 * which re-inserts everything from the insertion-order list). */
static uint64_t wf_dense_spare_head(wf_map_obj* m, uint64_t target, int relink, wf_map_obj* src) {
  uint64_t r = target, w = wf_dense_find_prev(m, target);
  int first = 1;
  for (;;) {
    uint8_t jump;
    uint64_t e;
    if (!wf_dense_next_empty(m, w, &jump, &e)) return WF_MAP_NO_INDEX;
    *wf_dense_meta(m, e) = 0x80u;
    wf_dense_item(m, e)->kv = wf_dense_item(m, r)->kv;
    if (relink) {
      wf_dense_replace_node(m, r, e);
    } else { /* a rebuild: the item's source index goes with it */
      uint64_t k = wf_dense_item(m, r)->next;
      wf_dense_item(m, e)->next = k;
      if (src != NULL) wf_dense_item(src, k)->prev = e;
    }
    uint8_t r_meta = *wf_dense_meta(m, r);
    /* the target slot stays reserved until the new head takes it */
    *wf_dense_meta(m, r) = first ? WF_MAP_PROTECTED : WF_MAP_EMPTY;
    first = 0;
    wf_dense_set_jump(m, w, jump);
    w = e;
    r = wf_dense_step(m, r, r_meta);
    if (r == WF_MAP_NO_INDEX) break;
  }
  *wf_dense_meta(m, target) = 0x00u;
  m->size += 1;
  return target;
}

/* Finds key's slot (*found = 1) or claims a new one for it (size counted,
 * pair and links left to the caller); NO_INDEX when the table must grow,
 * CHAIN_FULL when the key's chain is WF_MAP_MAX_CHAIN long already.
 * A rebuild, whose keys are distinct (and chains no longer), passes
 * compare = 0: its items carry their source index in `next` instead of
 * links (wf_dense_fill), and a moved item takes that along, noting its
 * new slot in the source item's `prev` when the source is a dense table
 * (src). */
static inline uint64_t wf_dense_try_insert(wf_map_obj* m, const TVMFFIAny* key, uint64_t hash,
                                           int* found, int compare, wf_map_obj* src) {
  *found = 0;
  uint64_t i = wf_dense_home(m, hash);
  uint8_t meta = *wf_dense_meta(m, i);
  if (meta == WF_MAP_EMPTY) {
    *wf_dense_meta(m, i) = 0x00u;
    m->size += 1;
    return i;
  }
  if (meta & 0x80u) return wf_dense_full(m) ? WF_MAP_NO_INDEX : wf_dense_spare_head(m, i, compare, src);
  uint64_t tail = i, length = 0;
  for (uint64_t n = i; n != WF_MAP_NO_INDEX; n = wf_dense_step(m, n, *wf_dense_meta(m, n))) {
    if (compare && wf_map_key_eq(key, &wf_dense_item(m, n)->kv.key)) {
      *found = 1;
      return n;
    }
    tail = n;
    ++length;
  }
  if (compare && length >= WF_MAP_MAX_CHAIN) return WF_MAP_CHAIN_FULL;
  if (wf_dense_full(m)) return WF_MAP_NO_INDEX;
  uint8_t jump;
  uint64_t e;
  if (!wf_dense_next_empty(m, tail, &jump, &e)) return WF_MAP_NO_INDEX;
  *wf_dense_meta(m, e) = 0x80u;
  wf_dense_set_jump(m, tail, jump);
  m->size += 1;
  return e;
}

/*
 * Rebuilding (a small map turning dense, a dense one growing) re-inserts
 * every pair: the layout keeps no hashes, so each key is hashed again.
 * What made it slow was walking the old insertion-order list, one
 * dependent cache miss per pair (and a second to read the pair). Instead
 * the pairs are inserted in the order they sit in memory (any table that
 * holds them on valid chains serves either side; the order of insertion
 * only decides which slot each takes), each new item carrying its source
 * index, and the insertion order is rebuilt afterwards with passes whose
 * memory accesses do not depend on each other.
 */
typedef const wf_map_entry* (*wf_map_pair_at)(const void* src, uint64_t k);

#if defined(__GNUC__) || defined(__clang__)
#define WF_MAP_PREFETCH(p) __builtin_prefetch(p)
#else
#define WF_MAP_PREFETCH(p) ((void)(p))
#endif
/* Hashes run this many pairs ahead of the insertions, so that the slot
 * states an insertion reads are on their way from memory. */
#define WF_MAP_AHEAD 8

/* A dense table (fields in *out) holding the pairs src yields for k < n
 * (NULL: no pair at k), raw copies (references move, none are taken),
 * each item's `next` holding its k; from fib_shift / n_slots, doubling
 * until every pair finds a slot. When src is a dense table (src_dense),
 * the `prev` of its item k is overwritten with the slot its pair took. */
static inline int wf_dense_fill(wf_map_obj* out, uint32_t fib_shift, uint64_t n_slots, const void* src,
                                uint64_t n, wf_map_pair_at at, wf_map_obj* src_dense) {
  for (;;) {
    if (wf_dense_init(out, fib_shift, n_slots) != 0) return -1;
    uint64_t hashes[WF_MAP_AHEAD], ks[WF_MAP_AHEAD];
    uint64_t queued = 0, done = 0, k = 0;
    int ok = 1;
    while (ok && (k < n || done < queued)) {
      /* top the queue up, prefetching each home slot's state */
      while (k < n && queued - done < WF_MAP_AHEAD) {
        /* further ahead, the key object a hash reads (a string's bytes) */
        if (k + WF_MAP_AHEAD < n) {
          const wf_map_entry* later = at(src, k + WF_MAP_AHEAD);
          if (later != NULL && later->key.type_index >= kTVMFFIStaticObjectBegin) {
            WF_MAP_PREFETCH(later->key.v_obj);
          }
        }
        const wf_map_entry* kv = at(src, k);
        if (kv != NULL) {
          uint64_t h = wf_map_hash(&kv->key);
          hashes[queued % WF_MAP_AHEAD] = h;
          ks[queued % WF_MAP_AHEAD] = k;
          WF_MAP_PREFETCH(wf_dense_meta(out, wf_dense_home(out, h)));
          ++queued;
        }
        ++k;
      }
      if (done == queued) break;
      const wf_map_entry* kv = at(src, ks[done % WF_MAP_AHEAD]);
      int found;
      uint64_t k_done = ks[done % WF_MAP_AHEAD];
      uint64_t i = wf_dense_try_insert(out, &kv->key, hashes[done % WF_MAP_AHEAD], &found, 0, src_dense);
      if (i == WF_MAP_NO_INDEX) {
        ok = 0;
        break;
      }
      wf_dense_item(out, i)->kv = *kv;
      wf_dense_item(out, i)->next = k_done;
      if (src_dense != NULL) wf_dense_item(src_dense, k_done)->prev = i;
      ++done;
    }
    if (ok) return 0;
    free(out->data);
    if (fib_shift == 0 || n_slots > WF_MAP_MAX_SLOTS / 2) return wf_err_raise_oom((size_t)-1);
    fib_shift -= 1;
    n_slots *= 2;
  }
}

static inline int wf_dense_live(const wf_map_obj* m, uint64_t i) {
  return *wf_dense_meta(m, i) < WF_MAP_PROTECTED;
}

static const wf_map_entry* wf_small_pair_at(const void* src, uint64_t k) {
  return (const wf_map_entry*)src + k;
}

/* The pair in slot k of a dense map (NULL for an empty slot). */
static const wf_map_entry* wf_slot_pair_at(const void* src, uint64_t k) {
  const wf_map_obj* m = (const wf_map_obj*)src;
  return wf_dense_live(m, k) ? &wf_dense_item(m, k)->kv : NULL;
}

/* Installs table t in m (same object, new storage) and frees m's old one,
 * whose pairs t now holds. */
static void wf_map_install(wf_map_obj* m, const wf_map_obj* t) {
  void* old = m->data;
  void (*old_deleter)(void*) = m->data_deleter;
  m->data = t->data;
  m->data_deleter = t->data_deleter;
  m->size = t->size;
  m->slots = t->slots;
  m->fib_shift = t->fib_shift;
  m->iter_head = t->iter_head;
  m->iter_tail = t->iter_tail;
  if (old_deleter != NULL) old_deleter(old);
}

/* The `prev` links of a dense map from its `next` links. */
static void wf_dense_restore_prev(wf_map_obj* m) {
  uint64_t prev = WF_MAP_NO_INDEX;
  for (uint64_t i = m->iter_head; i != WF_MAP_NO_INDEX; i = wf_dense_item(m, i)->next) {
    wf_dense_item(m, i)->prev = prev;
    prev = i;
  }
}

/* Grows a dense map's table to fib_shift / n_slots (or more), keeping the
 * insertion order. */
static int wf_dense_rehash(wf_map_obj* m, uint32_t fib_shift, uint64_t n_slots) {
  wf_map_obj t;
  /* The old items' `prev` fields note where each pair went. */
  if (wf_dense_fill(&t, fib_shift, n_slots, m, m->slots, wf_slot_pair_at, m) != 0) {
    wf_dense_restore_prev(m); /* the map stays as it was */
    return -1;
  }
  /* Each pair's successor is where its old successor went, and it is that
   * one's predecessor; the ends come from the old ends. */
  for (uint64_t k = 0; k < m->slots; ++k) {
    if (!wf_dense_live(m, k)) continue;
    const wf_map_item* old = wf_dense_item(m, k);
    wf_map_item* it = wf_dense_item(&t, old->prev);
    if (old->next == WF_MAP_NO_INDEX) {
      it->next = WF_MAP_NO_INDEX;
    } else {
      it->next = wf_dense_item(m, old->next)->prev;
      wf_dense_item(&t, it->next)->prev = old->prev;
    }
  }
  if (m->size > 0) {
    t.iter_head = wf_dense_item(m, m->iter_head)->prev;
    t.iter_tail = wf_dense_item(m, m->iter_tail)->prev;
    wf_dense_item(&t, t.iter_head)->prev = WF_MAP_NO_INDEX;
  }
  wf_map_install(m, &t);
  return 0;
}

/* Grows a dense map's table: 4 times while it is under 2^16 slots (fewer
 * rebuilds while a map fills; upstream doubles, and any power of two is a
 * valid table for either side), then 2 times. */
#define WF_MAP_QUAD_GROWTH_SLOTS (UINT64_C(1) << 16)

static int wf_dense_grow(wf_map_obj* m) {
  uint32_t steps = m->slots < WF_MAP_QUAD_GROWTH_SLOTS ? 2 : 1;
  if (m->fib_shift <= steps || m->slots > WF_MAP_MAX_SLOTS >> steps) {
    return wf_err_raise_oom((size_t)-1);
  }
  return wf_dense_rehash(m, m->fib_shift - steps, m->slots << steps);
}

/* Turns a small map dense, in place (any map object has room), with a
 * table for cap pairs. */
static int wf_small_to_dense_for(wf_map_obj* m, uint64_t cap) {
  uint32_t fib_shift;
  uint64_t n_slots;
  wf_dense_table_size(cap, &fib_shift, &n_slots);
  wf_map_obj t;
  if (wf_dense_fill(&t, fib_shift, n_slots, m->data, m->size, wf_small_pair_at, NULL) != 0) return -1;
  /* linked in the pairs' order (upstream's small maps, as ours, hold at
   * most 4; a larger one from elsewhere gets a heap array) */
  uint64_t stack_at[WF_MAP_SMALL_MAX], *at = stack_at;
  if (t.size > WF_MAP_SMALL_MAX) {
    at = (uint64_t*)malloc((size_t)t.size * sizeof(uint64_t));
    if (at == NULL) {
      free(t.data);
      return wf_err_raise_oom((size_t)t.size * sizeof(uint64_t));
    }
  }
  for (uint64_t i = 0; i < t.slots; ++i) {
    if (wf_dense_live(&t, i)) at[wf_dense_item(&t, i)->next] = i;
  }
  for (uint64_t k = 0; k < t.size; ++k) wf_dense_push_back(&t, at[k]);
  if (at != stack_at) free(at);
  wf_map_install(m, &t);
  return 0;
}

/* Turns a full small map dense. */
static int wf_small_to_dense(wf_map_obj* m) {
  return wf_small_to_dense_for(m, m->size < WF_MAP_SMALL_MAX ? WF_MAP_SMALL_MAX : m->size);
}

/* Gives a small map of another maker, full below 4 slots, a 4-slot array. */
static int wf_small_widen(wf_map_obj* m) {
  wf_map_entry* kv = (wf_map_entry*)malloc(WF_MAP_SMALL_MAX * sizeof(wf_map_entry));
  if (kv == NULL) return wf_err_raise_oom(WF_MAP_SMALL_MAX * sizeof(wf_map_entry));
  if (m->size > 0) memcpy(kv, m->data, (size_t)m->size * sizeof(wf_map_entry));
  void* old = m->data;
  void (*old_deleter)(void*) = m->data_deleter;
  m->data = kv;
  m->data_deleter = wf_dense_free;
  m->slots = WF_MAP_SMALL_TAG | WF_MAP_SMALL_MAX;
  if (old_deleter != NULL) old_deleter(old);
  return 0;
}

/* ------------------------------------------------------------ the object */
static void wf_map_release_all(wf_map_obj* m) {
  if (m->slots & WF_MAP_SMALL_TAG) {
    wf_map_entry* kv = (wf_map_entry*)m->data;
    for (uint64_t i = 0; i < m->size; ++i) {
      wf_any_release(&kv[i].key);
      wf_any_release(&kv[i].value);
    }
    return;
  }
  if (m->data == NULL) return;
  for (uint64_t i = 0; i < m->slots; ++i) {
    uint8_t meta = *wf_dense_meta(m, i);
    if (meta == WF_MAP_EMPTY || meta == WF_MAP_PROTECTED) continue;
    wf_any_release(&wf_dense_item(m, i)->kv.key);
    wf_any_release(&wf_dense_item(m, i)->kv.value);
  }
}

static void wf_map_use_inline(wf_map_own* own) {
  own->base.data = own->inline_kv;
  own->base.data_deleter = NULL;
  own->base.size = 0;
  own->base.slots = WF_MAP_SMALL_TAG | WF_MAP_SMALL_MAX;
  own->base.fib_shift = 63;
  own->base.iter_head = own->base.iter_tail = WF_MAP_NO_INDEX;
  own->nesting = 0;
}

static void wf_map_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_map_obj* m = (wf_map_obj*)self;
    wf_map_release_all(m);
    if (m->data_deleter != NULL) m->data_deleter(m->data);
    m->data = NULL;
    m->data_deleter = NULL;
    m->size = 0;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

TVMFFIObject* wf_map_new(int32_t type_index, int64_t capacity) {
  if (capacity > WF_MAP_MAX_ENTRIES) {
    wf_err_raise_oom((size_t)-1);
    return NULL;
  }
  TVMFFIObject* map = wf_obj_alloc(sizeof(wf_map_own), 8, type_index, wf_map_deleter);
  if (map == NULL) return NULL;
  wf_map_own* own = (wf_map_own*)map;
  wf_map_use_inline(own);
  if (capacity > WF_MAP_SMALL_MAX) {
    uint32_t fib_shift;
    uint64_t n_slots;
    wf_dense_table_size((uint64_t)capacity, &fib_shift, &n_slots);
    if (wf_dense_init(&own->base, fib_shift, n_slots) != 0) {
      wf_obj_decref(map);
      return NULL;
    }
  }
  return map;
}

int wf_map_reserve(TVMFFIObject* map, int64_t n) {
  wf_map_obj* m = wf_map_obj_of(map);
  if (n > WF_MAP_MAX_ENTRIES) return wf_err_raise_oom((size_t)-1);
  if (n <= (int64_t)m->size) return 0;
  if (m->slots & WF_MAP_SMALL_TAG) {
    if (n > WF_MAP_SMALL_MAX) return wf_small_to_dense_for(m, (uint64_t)n);
    return (m->slots & ~WF_MAP_SMALL_TAG) < (uint64_t)n ? wf_small_widen(m) : 0;
  }
  uint32_t fib_shift;
  uint64_t n_slots;
  wf_dense_table_size((uint64_t)n, &fib_shift, &n_slots);
  return n_slots > m->slots ? wf_dense_rehash(m, fib_shift, n_slots) : 0;
}

wf_map_entry* wf_map_find(TVMFFIObject* map, const TVMFFIAny* key) {
  wf_map_obj* m = wf_map_obj_of(map);
  if (m->slots & WF_MAP_SMALL_TAG) {
    wf_map_entry* kv = (wf_map_entry*)m->data;
    for (uint64_t i = 0; i < m->size; ++i) {
      if (wf_map_key_eq(&kv[i].key, key)) return &kv[i];
    }
    return NULL;
  }
  uint64_t i = wf_dense_lookup(m, key);
  return i == WF_MAP_NO_INDEX ? NULL : &wf_dense_item(m, i)->kv;
}

/* Stores owned_value in place of kv's value; the old one is released after,
 * since it may be what keeps the caller's key alive. */
static void wf_map_replace_value(wf_map_entry* kv, TVMFFIAny* owned_value) {
  TVMFFIAny old = kv->value;
  kv->value = *owned_value;
  wf_any_release(&old);
}

static int wf_map_set_pair(TVMFFIObject* map, const TVMFFIAny* key, const TVMFFIAny* value);

int wf_map_set(TVMFFIObject* map, const TVMFFIAny* key, const TVMFFIAny* value) {
  wf_map_custom_reset();
  int rc = wf_map_set_pair(map, key, value);
  /* a type's own hash or equality failed: its error is the result (the
   * pair may be stored where that hash's fallback put it) */
  if (wf_map_custom_error() != 0) return -1;
  return rc;
}

static int wf_map_set_pair(TVMFFIObject* map, const TVMFFIAny* key, const TVMFFIAny* value) {
  wf_map_obj* m = wf_map_obj_of(map);
  wf_map_own* own = wf_map_own_of(map);
  if (own != NULL) {
    const char* name = map->type_index == kTVMFFIDict ? "ffi.Dict" : "ffi.Map";
    int32_t nesting = own->nesting;
    if (wf_nesting_take(&nesting, key, name) != 0 || wf_nesting_take(&nesting, value, name) != 0) {
      return -1;
    }
    own->nesting = nesting;
  }
  TVMFFIAny owned_value;
  if (TVMFFIAnyViewToOwnedAny(value, &owned_value) != 0) return -1;
  if (m->slots & WF_MAP_SMALL_TAG) {
    wf_map_entry* kv = (wf_map_entry*)m->data;
    for (uint64_t i = 0; i < m->size; ++i) {
      if (wf_map_key_eq(&kv[i].key, key)) {
        wf_map_replace_value(&kv[i], &owned_value);
        return 0;
      }
    }
  }
  TVMFFIAny owned_key;
  if (TVMFFIAnyViewToOwnedAny(key, &owned_key) != 0) {
    wf_any_release(&owned_value);
    return -1;
  }
  if (m->size >= (uint64_t)WF_MAP_MAX_ENTRIES) {
    wf_any_release(&owned_key);
    wf_any_release(&owned_value);
    return wf_err_raise_oom((size_t)-1);
  }
  if (m->slots & WF_MAP_SMALL_TAG) {
    uint64_t n_slots = m->slots & ~WF_MAP_SMALL_TAG;
    int rc = 0;
    if (m->size >= n_slots) rc = n_slots < WF_MAP_SMALL_MAX ? wf_small_widen(m) : wf_small_to_dense(m);
    if (rc != 0) {
      wf_any_release(&owned_key);
      wf_any_release(&owned_value);
      return -1;
    }
    if (m->slots & WF_MAP_SMALL_TAG) {
      ((wf_map_entry*)m->data)[m->size++] = (wf_map_entry){owned_key, owned_value};
      return 0;
    }
  }
  uint64_t hash = wf_map_hash(&owned_key);
  for (;;) {
    int found;
    uint64_t i = wf_dense_try_insert(m, &owned_key, hash, &found, 1, NULL);
    if (i == WF_MAP_CHAIN_FULL) {
      wf_any_release(&owned_key);
      wf_any_release(&owned_value);
      return wf_err_raise("ValueError",
                          "%s: more than %d keys share one hash chain; the insertion is refused "
                          "(keys built to collide?)",
                          map->type_index == kTVMFFIDict ? "ffi.Dict" : "ffi.Map", WF_MAP_MAX_CHAIN);
    }
    if (i != WF_MAP_NO_INDEX) {
      wf_map_item* it = wf_dense_item(m, i);
      if (found) {
        wf_map_replace_value(&it->kv, &owned_value);
        wf_any_release(&owned_key);
      } else {
        it->kv = (wf_map_entry){owned_key, owned_value};
        wf_dense_push_back(m, i);
      }
      return 0;
    }
    if (wf_dense_grow(m) != 0) {
      wf_any_release(&owned_key);
      wf_any_release(&owned_value);
      return -1;
    }
  }
}

/* Upstream's dense erase: the chain's last slot moves into the freed one. */
static void wf_dense_erase(wf_map_obj* m, uint64_t i, wf_map_entry* removed) {
  m->size -= 1;
  *removed = wf_dense_item(m, i)->kv;
  uint8_t meta = *wf_dense_meta(m, i);
  if (wf_map_jumps[meta & 0x7Fu] == 0) {
    if (meta & 0x80u) wf_dense_set_jump(m, wf_dense_find_prev(m, i), 0);
    wf_dense_unlink(m, i);
    *wf_dense_meta(m, i) = WF_MAP_EMPTY;
    return;
  }
  uint64_t prev = i, last = wf_dense_step(m, i, meta);
  for (uint64_t n; (n = wf_dense_step(m, last, *wf_dense_meta(m, last))) != WF_MAP_NO_INDEX;) {
    prev = last;
    last = n;
  }
  wf_dense_unlink(m, i);
  wf_dense_item(m, i)->kv = wf_dense_item(m, last)->kv;
  wf_dense_replace_node(m, last, i);
  *wf_dense_meta(m, last) = WF_MAP_EMPTY;
  wf_dense_set_jump(m, prev, 0);
}

int wf_map_erase(TVMFFIObject* map, const TVMFFIAny* key) {
  wf_map_obj* m = wf_map_obj_of(map);
  wf_map_entry removed;
  if (m->slots & WF_MAP_SMALL_TAG) {
    wf_map_entry* kv = (wf_map_entry*)m->data;
    uint64_t i = 0;
    while (i < m->size && !wf_map_key_eq(&kv[i].key, key)) ++i;
    if (i == m->size) return 0;
    removed = kv[i];
    memmove(kv + i, kv + i + 1, (size_t)(m->size - i - 1) * sizeof(wf_map_entry));
    m->size -= 1;
  } else {
    uint64_t i = wf_dense_lookup(m, key);
    if (i == WF_MAP_NO_INDEX) return 0;
    wf_dense_erase(m, i, &removed);
  }
  wf_map_own* own = wf_map_own_of(map);
  if (own != NULL && m->size == 0) own->nesting = 0;
  /* released last: a deleter may use this map */
  wf_any_release(&removed.key);
  wf_any_release(&removed.value);
  return 1;
}

void wf_map_clear(TVMFFIObject* map) {
  wf_map_obj* m = wf_map_obj_of(map);
  wf_map_own* own = wf_map_own_of(map);
  /* The map is emptied before any pair is released: releasing one may run
   * code that uses this map. */
  if (m->slots & WF_MAP_SMALL_TAG) {
    wf_map_entry copy[WF_MAP_SMALL_MAX];
    uint64_t n = m->size;
    if (n > WF_MAP_SMALL_MAX) n = WF_MAP_SMALL_MAX; /* small maps never hold more */
    memcpy(copy, m->data, (size_t)n * sizeof(wf_map_entry));
    m->size = 0;
    if (own != NULL) own->nesting = 0;
    for (uint64_t i = 0; i < n; ++i) {
      wf_any_release(&copy[i].key);
      wf_any_release(&copy[i].value);
    }
    return;
  }
  if (own != NULL) {
    wf_map_obj old = *m;
    wf_map_use_inline(own);
    wf_map_release_all(&old);
    if (old.data_deleter != NULL) old.data_deleter(old.data);
    return;
  }
  /* A dense map of another maker stays dense (its deleter expects that). */
  for (uint64_t i = 0; i < m->slots; ++i) {
    uint8_t* meta = wf_dense_meta(m, i);
    if (*meta == WF_MAP_EMPTY || *meta == WF_MAP_PROTECTED) continue;
    wf_map_entry kv = wf_dense_item(m, i)->kv;
    *meta = WF_MAP_EMPTY;
    wf_any_release(&kv.key);
    wf_any_release(&kv.value);
  }
  m->size = 0;
  m->iter_head = m->iter_tail = WF_MAP_NO_INDEX;
}

wf_map_entry* wf_map_next(TVMFFIObject* map, int64_t* pos) {
  wf_map_obj* m = wf_map_obj_of(map);
  if (*pos < 0) return NULL;
  if (m->slots & WF_MAP_SMALL_TAG) {
    if ((uint64_t)*pos >= m->size) return NULL;
    return &((wf_map_entry*)m->data)[(*pos)++];
  }
  /* dense: pos is 0 at the start, else 1 + the slot to visit next */
  uint64_t i = *pos == 0 ? m->iter_head : (uint64_t)*pos - 1;
  if (i >= m->slots || *wf_dense_meta(m, i) >= WF_MAP_PROTECTED) {
    *pos = -1;
    return NULL;
  }
  wf_map_item* it = wf_dense_item(m, i);
  *pos = it->next < m->slots ? (int64_t)it->next + 1 : -1;
  return &it->kv;
}

int64_t wf_map_longest_chain(TVMFFIObject* map) {
  wf_map_obj* m = wf_map_obj_of(map);
  if (m->slots & WF_MAP_SMALL_TAG) return (int64_t)m->size;
  int64_t longest = 0;
  for (uint64_t i = 0; i < m->slots; ++i) {
    uint8_t meta = *wf_dense_meta(m, i);
    if (meta & 0x80u) continue;
    int64_t n = 1;
    for (uint64_t s = wf_dense_step(m, i, meta); s != WF_MAP_NO_INDEX;
         s = wf_dense_step(m, s, *wf_dense_meta(m, s))) {
      ++n;
    }
    if (n > longest) longest = n;
  }
  return longest;
}

TVMFFIObject* wf_map_copy(TVMFFIObject* map, int32_t type_index) {
  TVMFFIObject* out = wf_map_new(type_index, wf_map_size(map));
  if (out == NULL) return NULL;
  int64_t pos = 0;
  for (wf_map_entry* e; (e = wf_map_next(map, &pos)) != NULL;) {
    if (wf_map_set(out, &e->key, &e->value) != 0) {
      wf_obj_decref(out);
      return NULL;
    }
  }
  return out;
}

int wf_map_make_unique(TVMFFIObject** map) {
  if (wf_obj_strong_count(*map) == 1) return 0;
  TVMFFIObject* copy = wf_map_copy(*map, (*map)->type_index);
  if (copy == NULL) return -1;
  wf_obj_decref(*map);
  *map = copy;
  return 0;
}

/* ------------------------------------------------------ global functions */
static int wf_map_from_args(int32_t type_index, const TVMFFIAny* args, int32_t n,
                            TVMFFIAny* result) {
  if (n % 2 != 0) {
    return wf_err_raise("ValueError", "%s expects key-value pairs, got %d arguments",
                        type_index == kTVMFFIMap ? "ffi.Map" : "ffi.Dict", (int)n);
  }
  TVMFFIObject* map = wf_map_new(type_index, n / 2);
  if (map == NULL) return -1;
  /* Later duplicates replace earlier ones in place: the last one wins. */
  for (int32_t i = 0; i < n; i += 2) {
    if (wf_map_set(map, &args[i], &args[i + 1]) != 0) {
      wf_obj_decref(map);
      return -1;
    }
  }
  wf_any_set_object(result, map);
  return 0;
}

static int wf_map_ctor(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_map_from_args(kTVMFFIMap, args, n, result);
}

static int wf_dict_ctor(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_map_from_args(kTVMFFIDict, args, n, result);
}

typedef struct {
  WebFFISignature sig;
  int32_t map_type; /* kTVMFFIMap or kTVMFFIDict */
} wf_map_fn;

static int wf_map_args(const wf_map_fn* fn, const TVMFFIAny* args, int32_t n,
                       TVMFFIObject** map) {
  if (WebFFICheckNumArgs(&fn->sig, n) != 0) return -1;
  return WebFFIArgToObject(&fn->sig, args, 0, fn->map_type, (TVMFFIObjectHandle*)map);
}

static int wf_map_size_fn(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_any_set_int(result, wf_map_size(map));
  return 0;
}

static int wf_map_get_item(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_map_custom_reset();
  wf_map_entry* e = wf_map_find(map, &args[1]);
  if (wf_map_custom_error() != 0) return -1;
  if (e == NULL) return wf_err_raise("KeyError", "key is not in Map");
  return TVMFFIAnyViewToOwnedAny(&e->value, result);
}

static int wf_map_get_or_missing(void* self, const TVMFFIAny* args, int32_t n,
                                 TVMFFIAny* result) {
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_map_custom_reset();
  wf_map_entry* e = wf_map_find(map, &args[1]);
  if (wf_map_custom_error() != 0) return -1;
  if (e != NULL) return TVMFFIAnyViewToOwnedAny(&e->value, result);
  /* the missing-value sentinel (src/sentinels.c) */
  wf_obj_incref(wf_missing_object());
  wf_any_set_object(result, wf_missing_object());
  return 0;
}

static int wf_map_count(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_map_custom_reset();
  int found = wf_map_find(map, &args[1]) != NULL;
  if (wf_map_custom_error() != 0) return -1;
  wf_any_set_int(result, found);
  return 0;
}

static int wf_dict_set_item(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  return wf_map_set(map, &args[1], &args[2]);
}

static int wf_dict_erase(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_map_custom_reset();
  wf_map_erase(map, &args[1]);
  return wf_map_custom_error();
}

static int wf_dict_clear(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_map_clear(map);
  return 0;
}

/* f(0) = current key, f(1) = current value, f(2) = advance, false at the end.
 * It holds the map, so the entries it walks stay alive. */
typedef struct {
  TVMFFIObject* map;
  int64_t pos; /* wf_map_next position that yields the current entry */
} wf_map_iter;

static void wf_map_iter_free(void* self) {
  wf_map_iter* it = (wf_map_iter*)self;
  wf_obj_decref(it->map);
  free(it);
}

static wf_map_entry* wf_map_iter_current(const wf_map_iter* it) {
  int64_t pos = it->pos;
  return wf_map_next(it->map, &pos);
}

static int wf_map_iter_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char* const types[] = {"int"};
  static const WebFFISignature sig = {"ffi.MapForwardIterFunctor.<functor>", 1, types, "Any"};
  wf_map_iter* it = (wf_map_iter*)self;
  int64_t command;
  if (WebFFICheckNumArgs(&sig, n) != 0 || WebFFIArgToInt(&sig, args, 0, &command) != 0) return -1;
  if (command == 2) {
    int64_t pos = it->pos;
    if (wf_map_next(it->map, &pos) != NULL) it->pos = pos;
    wf_any_set_bool(result, wf_map_iter_current(it) != NULL);
    return 0;
  }
  wf_map_entry* e = wf_map_iter_current(it);
  if (e == NULL) return wf_err_raise("IndexError", "Map iterator is at the end");
  return TVMFFIAnyViewToOwnedAny(command == 0 ? &e->key : &e->value, result);
}

static int wf_map_iter_new(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_map_iter* it = (wf_map_iter*)calloc(1, sizeof(wf_map_iter));
  if (it == NULL) return wf_err_raise_oom(sizeof(wf_map_iter));
  wf_obj_incref(map);
  it->map = map;
  TVMFFIObject* f = wf_func_new(wf_map_iter_call, it, wf_map_iter_free);
  if (f == NULL) {
    wf_map_iter_free(it);
    return -1;
  }
  wf_any_set_object(result, f);
  return 0;
}

static const char* const wf_map_map_any[] = {"ffi.Map", "Any"};
static const char* const wf_map_dict_any[] = {"ffi.Dict", "Any", "Any"};

static const struct {
  wf_map_fn fn;
  TVMFFISafeCallType call;
} wf_map_globals[] = {
    {{{"ffi.MapSize", 1, wf_map_map_any, "int"}, kTVMFFIMap}, wf_map_size_fn},
    {{{"ffi.MapGetItem", 2, wf_map_map_any, "Any"}, kTVMFFIMap}, wf_map_get_item},
    {{{"ffi.MapGetItemOrMissing", 2, wf_map_map_any, "Any"}, kTVMFFIMap}, wf_map_get_or_missing},
    {{{"ffi.MapCount", 2, wf_map_map_any, "int"}, kTVMFFIMap}, wf_map_count},
    {{{"ffi.MapForwardIterFunctor", 1, wf_map_map_any, "ffi.Function"}, kTVMFFIMap},
     wf_map_iter_new},
    {{{"ffi.DictSize", 1, wf_map_dict_any, "int"}, kTVMFFIDict}, wf_map_size_fn},
    {{{"ffi.DictGetItem", 2, wf_map_dict_any, "Any"}, kTVMFFIDict}, wf_map_get_item},
    {{{"ffi.DictGetItemOrMissing", 2, wf_map_dict_any, "Any"}, kTVMFFIDict},
     wf_map_get_or_missing},
    {{{"ffi.DictCount", 2, wf_map_dict_any, "int"}, kTVMFFIDict}, wf_map_count},
    {{{"ffi.DictSetItem", 3, wf_map_dict_any, "None"}, kTVMFFIDict}, wf_dict_set_item},
    {{{"ffi.DictErase", 2, wf_map_dict_any, "None"}, kTVMFFIDict}, wf_dict_erase},
    {{{"ffi.DictClear", 1, wf_map_dict_any, "None"}, kTVMFFIDict}, wf_dict_clear},
    {{{"ffi.DictForwardIterFunctor", 1, wf_map_dict_any, "ffi.Function"}, kTVMFFIDict},
     wf_map_iter_new},
};

int wf_map_register(void) {
  if (wf_global_register("ffi.Map", wf_map_ctor, NULL) != 0) return -1;
  if (wf_global_register("ffi.Dict", wf_dict_ctor, NULL) != 0) return -1;
  for (size_t i = 0; i < sizeof(wf_map_globals) / sizeof(wf_map_globals[0]); ++i) {
    if (wf_global_register_with_self(wf_map_globals[i].fn.sig.name, wf_map_globals[i].call,
                                     (void*)&wf_map_globals[i].fn) != 0) {
      return -1;
    }
  }
  return 0;
}
