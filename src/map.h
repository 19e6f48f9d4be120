/* Map (immutable, copy-on-write) and Dict (mutable, shared): hash maps that
 * iterate in insertion order, also after erase (a re-inserted key goes last). */
#ifndef WEBFFI_SRC_MAP_H_
#define WEBFFI_SRC_MAP_H_

#include <tvm/ffi/c_api.h>

#include "object.h"

typedef struct {
  TVMFFIAny key;
  TVMFFIAny value;
  uint64_t hash;
  int64_t erased; /* 1: a hole left by erase, skipped by iteration */
} wf_map_entry;

/*
 * Entries sit in insertion order in one array; an open-addressing index of
 * entry positions finds them. The index has at least twice as many slots as
 * the entry array has room, so probes stay short and always end.
 */
typedef struct {
  wf_map_entry* entries;
  int64_t size;     /* live entries */
  int64_t used;     /* entries in use, holes included */
  int64_t capacity; /* room in entries */
  int32_t* slots;   /* entry position, or WF_MAP_EMPTY / WF_MAP_HOLE; after entries */
  int64_t num_slots;
  int32_t nesting; /* src/nesting.h */
  int32_t reseeds;  /* salt changes since the index last grew */
  uint64_t salt;    /* this map's hash salt (src/hash.h) */
} wf_map_cell;

static inline wf_map_cell* wf_map_cell_of(TVMFFIObject* map) {
  return WF_OBJ_CELL(map, wf_map_cell);
}
static inline int64_t wf_map_size(TVMFFIObject* map) { return wf_map_cell_of(map)->size; }

/* An empty Map or Dict (type_index); NULL with MemoryError raised. */
TVMFFIObject* wf_map_new(int32_t type_index, int64_t capacity);

/* The live entry for key, or NULL. */
wf_map_entry* wf_map_find(TVMFFIObject* map, const TVMFFIAny* key);
/* Inserts or replaces (copies of key and value; views become owned). */
int wf_map_set(TVMFFIObject* map, const TVMFFIAny* key, const TVMFFIAny* value);
/* Removes key; returns 1 if it was there. */
int wf_map_erase(TVMFFIObject* map, const TVMFFIAny* key);
void wf_map_clear(TVMFFIObject* map);

/* Iteration in insertion order: pos starts at 0; NULL at the end. */
wf_map_entry* wf_map_next(TVMFFIObject* map, int64_t* pos);

/* A new map of type_index with the same entries (shallow). */
TVMFFIObject* wf_map_copy(TVMFFIObject* map, int32_t type_index);
/* Copy-on-write for Maps: makes *map exclusively owned by the caller. */
int wf_map_make_unique(TVMFFIObject** map);

/* The longest distance from a key's home slot to where it sits: a
 * diagnostic for tests of collision resistance. */
int64_t wf_map_longest_probe(TVMFFIObject* map);

/* Registers the ffi.Map* / ffi.Dict* global functions. */
int wf_map_register(void);

#endif /* WEBFFI_SRC_MAP_H_ */
