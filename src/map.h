/* Map (immutable, copy-on-write) and Dict (mutable, shared), laid out as
 * upstream tvm-ffi's C++ headers lay them out (src/map.c says how), so that
 * C++ code compiled against those headers and this core read and change
 * each other's maps. Both iterate in insertion order, also after erase
 * (a re-inserted key goes last); replacing a value keeps the key's place. */
#ifndef WEBFFI_SRC_MAP_H_
#define WEBFFI_SRC_MAP_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>

#include "object.h"

/* One key-value pair: upstream's KVType, 32 bytes. */
typedef struct {
  TVMFFIAny key;
  TVMFFIAny value;
} wf_map_entry;

/* A slot of the dense form: the pair and its insertion-order links
 * (slot indices, WF_MAP_NO_INDEX at either end). 48 bytes. */
typedef struct {
  wf_map_entry kv;
  uint64_t prev;
  uint64_t next;
} wf_map_item;

#define WF_MAP_BLOCK_CAP 16
/* 16 one-byte slot states, then their 16 items: 784 bytes. */
typedef struct {
  uint8_t meta[WF_MAP_BLOCK_CAP];
  wf_map_item item[WF_MAP_BLOCK_CAP];
} wf_map_block;

/*
 * The object. The first five members are every map's; the last three only
 * mean something in the dense form. The same C struct matches the C++
 * class on 64-bit targets (80 bytes) and wasm32 (72: fib_shift sits in the
 * base's tail padding, as the Itanium C++ ABI places it).
 */
typedef struct {
  TVMFFIObject header;
  void* data;       /* small: the pairs; dense: the blocks */
  uint64_t size;    /* live pairs */
  uint64_t slots;   /* slot count, WF_MAP_SMALL_TAG set in the small form */
  void (*data_deleter)(void*); /* frees data when it is a separate block */
  uint32_t fib_shift;          /* dense: slot of hash h is (h * 11400714819323198485) >> fib_shift */
  uint64_t iter_head;          /* dense: first and last slot in insertion order */
  uint64_t iter_tail;
} wf_map_obj;

#define WF_MAP_SMALL_TAG (UINT64_C(1) << 63)
#define WF_MAP_NO_INDEX UINT64_MAX

static inline wf_map_obj* wf_map_obj_of(TVMFFIObject* map) { return (wf_map_obj*)map; }
static inline int64_t wf_map_size(TVMFFIObject* map) {
  return (int64_t)wf_map_obj_of(map)->size;
}
static inline int wf_map_is_small(const TVMFFIObject* map) {
  return (((const wf_map_obj*)map)->slots & WF_MAP_SMALL_TAG) != 0;
}

/* An empty Map or Dict (type_index); NULL with MemoryError raised. */
TVMFFIObject* wf_map_new(int32_t type_index, int64_t capacity);

/* Room for n pairs in all (a builder that knows how many keys come, e.g.
 * a parser that has counted an object's members): a map that grows
 * there at once is rebuilt once, not at each step; the order and pairs
 * stay. 0, or -1 with MemoryError raised. */
int wf_map_reserve(TVMFFIObject* map, int64_t n);

/* The live entry for key, or NULL. The pointer stays valid until the map
 * next changes. */
wf_map_entry* wf_map_find(TVMFFIObject* map, const TVMFFIAny* key);
/* Inserts or replaces (copies of key and value; views become owned). */
int wf_map_set(TVMFFIObject* map, const TVMFFIAny* key, const TVMFFIAny* value);
/* Removes key; returns 1 if it was there. */
int wf_map_erase(TVMFFIObject* map, const TVMFFIAny* key);
void wf_map_clear(TVMFFIObject* map);

/* Iteration in insertion order: pos starts at 0; NULL at the end. A map
 * changed mid-walk may skip or repeat entries, never read outside itself. */
wf_map_entry* wf_map_next(TVMFFIObject* map, int64_t* pos);

/* A new map of type_index with the same entries (shallow). */
TVMFFIObject* wf_map_copy(TVMFFIObject* map, int32_t type_index);
/* Copy-on-write for Maps: makes *map exclusively owned by the caller. */
int wf_map_make_unique(TVMFFIObject** map);

/* Upstream's AnyHash and AnyEqual for keys: strings and bytes by content
 * (small, heap and view forms alike), objects whose type sets
 * `__any_hash__` / `__any_equal__` by those, other values by type and
 * payload. */
uint64_t wf_map_hash(const TVMFFIAny* key);
int wf_map_key_equal(const TVMFFIAny* a, const TVMFFIAny* b);
/* A type's own hash or equality, when it is a Function, can fail: after
 * wf_map_custom_reset(), wf_map_find / wf_map_erase / wf_map_hash /
 * wf_map_key_equal, wf_map_custom_error() is -1 (the error raised) when
 * one did. wf_map_set checks by itself. */
void wf_map_custom_reset(void);
int wf_map_custom_error(void);

/* The nesting recorded when the map was built (src/nesting.h); for a map
 * made outside this core, 1 when it has entries (its elements unknown). */
int32_t wf_map_nesting(TVMFFIObject* map);

/* Diagnostics for tests: the longest chain of slots a lookup walks. */
int64_t wf_map_longest_chain(TVMFFIObject* map);

/* Registers the ffi.Map* / ffi.Dict* global functions. */
int wf_map_register(void);

#endif /* WEBFFI_SRC_MAP_H_ */
