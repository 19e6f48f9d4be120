/* Map and Dict storage and their ffi.* global functions. */
#include "map.h"

#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "hash.h"
#include "nesting.h"

#define WF_MAP_EMPTY (-1)
#define WF_MAP_HOLE (-2)
/* Slot values are int32 entry positions. */
#define WF_MAP_MAX_ENTRIES (INT64_C(1) << 30)
/* An insertion that lands this far from its home slot re-seeds the map:
 * with keyed hashes and an index at most half full, probes this long are
 * vanishingly rare unless keys were chosen to collide. */
#define WF_MAP_PROBE_LIMIT 64
#define WF_MAP_MAX_RESEEDS 4

static void wf_map_release_entries(wf_map_cell* cell) {
  for (int64_t i = 0; i < cell->used; ++i) {
    if (cell->entries[i].erased) continue;
    wf_any_release(&cell->entries[i].key);
    wf_any_release(&cell->entries[i].value);
  }
}

/* Small maps (most JSON objects) keep entries and index inside the object:
 * WF_MAP_INLINE entries right after the cell, then their index. */
#define WF_MAP_INLINE 4
#define WF_MAP_INLINE_BYTES (WF_MAP_INLINE * (sizeof(wf_map_entry) + 2 * sizeof(int32_t)))

static wf_map_entry* wf_map_inline_entries(wf_map_cell* cell) {
  return (wf_map_entry*)(cell + 1);
}

static void wf_map_reindex(wf_map_cell* cell);

static void wf_map_use_inline(wf_map_cell* cell) {
  cell->entries = wf_map_inline_entries(cell);
  cell->slots = (int32_t*)(cell->entries + WF_MAP_INLINE);
  cell->capacity = WF_MAP_INLINE;
  cell->num_slots = 2 * WF_MAP_INLINE;
  cell->size = cell->used = 0;
  cell->nesting = 0;
  cell->reseeds = 0;
  wf_map_reindex(cell);
}

static void wf_map_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_map_cell* cell = WF_OBJ_CELL(self, wf_map_cell);
    wf_map_release_entries(cell);
    /* the index lives in the same block */
    if (cell->entries != wf_map_inline_entries(cell)) free(cell->entries);
    memset(cell, 0, sizeof(*cell));
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

/* Rebuilds the index from the live entries, dropping holes from both. */
static void wf_map_reindex(wf_map_cell* cell) {
  int64_t live = 0;
  for (int64_t i = 0; i < cell->used; ++i) {
    if (!cell->entries[i].erased) cell->entries[live++] = cell->entries[i];
  }
  cell->used = live;
  for (int64_t s = 0; s < cell->num_slots; ++s) cell->slots[s] = WF_MAP_EMPTY;
  uint64_t mask = (uint64_t)cell->num_slots - 1;
  for (int64_t i = 0; i < live; ++i) {
    uint64_t s = cell->entries[i].hash & mask;
    while (cell->slots[s] != WF_MAP_EMPTY) s = (s + 1) & mask;
    cell->slots[s] = (int32_t)i;
  }
}

/* Makes room for one more entry: compacts when holes are many, else grows. */
static int wf_map_reserve(wf_map_cell* cell, int64_t need) {
  if (need <= cell->capacity) return 0;
  if (cell->size < cell->used / 2 && cell->size + 1 <= cell->capacity) {
    wf_map_reindex(cell);
    return 0;
  }
  if (need > WF_MAP_MAX_ENTRIES) return wf_err_raise_oom((size_t)-1);
  int64_t cap = cell->capacity ? cell->capacity : 4;
  while (cap < need) cap *= 2;
  if (cap > WF_MAP_MAX_ENTRIES) return wf_err_raise_oom((size_t)-1);
  /* Entries and index share one block: one allocation per growth. The old
   * index is rebuilt below, so realloc only needs to keep the entries. */
  size_t bytes = (size_t)cap * (sizeof(wf_map_entry) + 2 * sizeof(int32_t));
  int was_inline = cell->entries == wf_map_inline_entries(cell);
  wf_map_entry* entries = (wf_map_entry*)realloc(was_inline ? NULL : cell->entries, bytes);
  if (entries == NULL) return wf_err_raise_oom(bytes);
  if (was_inline) memcpy(entries, cell->entries, (size_t)cell->used * sizeof(wf_map_entry));
  cell->entries = entries;
  cell->slots = (int32_t*)(entries + cap);
  cell->num_slots = cap * 2;
  cell->capacity = cap;
  cell->reseeds = 0;
  wf_map_reindex(cell);
  return 0;
}

/* A new salt, and every entry hashed and placed again under it. */
static void wf_map_reseed(wf_map_cell* cell) {
  ++cell->reseeds;
  cell->salt = wf_hash_keyed_word(cell->salt + 1, 0x5eedu, (uint64_t)(uintptr_t)cell);
  for (int64_t i = 0; i < cell->used; ++i) {
    if (!cell->entries[i].erased) {
      cell->entries[i].hash = wf_any_hash_salted(&cell->entries[i].key, cell->salt);
    }
  }
  wf_map_reindex(cell);
}

TVMFFIObject* wf_map_new(int32_t type_index, int64_t capacity) {
  TVMFFIObject* map = wf_obj_alloc(sizeof(TVMFFIObject) + sizeof(wf_map_cell) + WF_MAP_INLINE_BYTES,
                                   8, type_index, wf_map_deleter);
  if (map == NULL) return NULL;
  wf_map_use_inline(wf_map_cell_of(map));
  if (capacity > WF_MAP_INLINE && wf_map_reserve(wf_map_cell_of(map), capacity) != 0) {
    wf_obj_decref(map);
    return NULL;
  }
  return map;
}

/* The slot holding key, or the empty slot where it would go. */
static int64_t wf_map_probe(const wf_map_cell* cell, const TVMFFIAny* key, uint64_t hash) {
  uint64_t mask = (uint64_t)cell->num_slots - 1;
  for (uint64_t s = hash & mask;; s = (s + 1) & mask) {
    int32_t e = cell->slots[s];
    if (e == WF_MAP_EMPTY) return (int64_t)s;
    if (e >= 0 && cell->entries[e].hash == hash && wf_any_equal(&cell->entries[e].key, key)) {
      return (int64_t)s;
    }
  }
}

wf_map_entry* wf_map_find(TVMFFIObject* map, const TVMFFIAny* key) {
  wf_map_cell* cell = wf_map_cell_of(map);
  if (cell->size == 0) return NULL;
  int32_t e = cell->slots[wf_map_probe(cell, key, wf_any_hash_salted(key, cell->salt))];
  return e >= 0 ? &cell->entries[e] : NULL;
}

int wf_map_set(TVMFFIObject* map, const TVMFFIAny* key, const TVMFFIAny* value) {
  wf_map_cell* cell = wf_map_cell_of(map);
  const char* name = map->type_index == kTVMFFIDict ? "ffi.Dict" : "ffi.Map";
  int32_t nesting = cell->nesting;
  if (wf_nesting_take(&nesting, key, name) != 0 || wf_nesting_take(&nesting, value, name) != 0) {
    return -1;
  }
  cell->nesting = nesting;
  TVMFFIAny owned_value;
  if (TVMFFIAnyViewToOwnedAny(value, &owned_value) != 0) return -1;
  /* One hash for the lookup and the insertion: growing keeps the salt. */
  uint64_t hash = wf_any_hash_salted(key, cell->salt);
  wf_map_entry* found = NULL;
  if (cell->size > 0) {
    int32_t e = cell->slots[wf_map_probe(cell, key, hash)];
    if (e >= 0) found = &cell->entries[e];
  }
  if (found != NULL) {
    /* Release after storing: the old value may be what keeps key alive. */
    TVMFFIAny old = found->value;
    found->value = owned_value;
    wf_any_release(&old);
    return 0;
  }
  TVMFFIAny owned_key;
  if (TVMFFIAnyViewToOwnedAny(key, &owned_key) != 0) {
    wf_any_release(&owned_value);
    return -1;
  }
  if (wf_map_reserve(cell, cell->used + 1) != 0) {
    wf_any_release(&owned_key);
    wf_any_release(&owned_value);
    return -1;
  }
  int64_t s = wf_map_probe(cell, &owned_key, hash);
  cell->slots[s] = (int32_t)cell->used;
  cell->entries[cell->used++] = (wf_map_entry){owned_key, owned_value, hash, 0};
  ++cell->size;
  uint64_t distance = ((uint64_t)s - hash) & ((uint64_t)cell->num_slots - 1);
  if (distance > WF_MAP_PROBE_LIMIT && cell->reseeds < WF_MAP_MAX_RESEEDS) wf_map_reseed(cell);
  return 0;
}

int wf_map_erase(TVMFFIObject* map, const TVMFFIAny* key) {
  wf_map_cell* cell = wf_map_cell_of(map);
  if (cell->size == 0) return 0;
  int64_t s = wf_map_probe(cell, key, wf_any_hash_salted(key, cell->salt));
  int32_t e = cell->slots[s];
  if (e < 0) return 0;
  /* A hole keeps probe chains intact; the entry stays as a hole until the
   * next compaction so positions held by iterators remain meaningful. */
  cell->slots[s] = WF_MAP_HOLE;
  wf_map_entry old = cell->entries[e];
  cell->entries[e].erased = 1;
  if (--cell->size == 0) cell->nesting = 0;
  wf_any_release(&old.key);
  wf_any_release(&old.value);
  return 1;
}

void wf_map_clear(TVMFFIObject* map) {
  wf_map_cell* cell = wf_map_cell_of(map);
  /* Detach the entries first: releasing one may run code that uses this map.
   * Inline entries are about to be reused, so they move to the stack. */
  wf_map_entry inline_copy[WF_MAP_INLINE];
  wf_map_cell old = *cell;
  if (old.entries == wf_map_inline_entries(cell)) {
    memcpy(inline_copy, old.entries, (size_t)old.used * sizeof(wf_map_entry));
    old.entries = inline_copy;
  }
  wf_map_use_inline(cell);
  wf_map_release_entries(&old);
  if (old.entries != inline_copy) free(old.entries);
}

wf_map_entry* wf_map_next(TVMFFIObject* map, int64_t* pos) {
  wf_map_cell* cell = wf_map_cell_of(map);
  while (*pos < cell->used) {
    wf_map_entry* e = &cell->entries[(*pos)++];
    if (!e->erased) return e;
  }
  return NULL;
}

int64_t wf_map_longest_probe(TVMFFIObject* map) {
  wf_map_cell* cell = wf_map_cell_of(map);
  uint64_t mask = (uint64_t)cell->num_slots - 1;
  int64_t longest = 0;
  for (int64_t s = 0; s < cell->num_slots; ++s) {
    int32_t e = cell->slots[s];
    if (e < 0) continue;
    int64_t d = (int64_t)(((uint64_t)s - cell->entries[e].hash) & mask);
    if (d > longest) longest = d;
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
  wf_map_entry* e = wf_map_find(map, &args[1]);
  if (e == NULL) return wf_err_raise("KeyError", "key is not in Map");
  return TVMFFIAnyViewToOwnedAny(&e->value, result);
}

/* The sentinel MapGetItemOrMissing returns for an absent key: one object
 * that lives for the whole run (its count never reaches zero). */
static TVMFFIObject wf_map_missing = {1, kTVMFFIObject, 0, {.deleter = NULL}};

static int wf_map_get_or_missing(void* self, const TVMFFIAny* args, int32_t n,
                                 TVMFFIAny* result) {
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_map_entry* e = wf_map_find(map, &args[1]);
  if (e != NULL) return TVMFFIAnyViewToOwnedAny(&e->value, result);
  wf_obj_incref(&wf_map_missing);
  wf_any_set_object(result, &wf_map_missing);
  return 0;
}

static int wf_map_count(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* map;
  if (wf_map_args((const wf_map_fn*)self, args, n, &map) != 0) return -1;
  wf_any_set_int(result, wf_map_find(map, &args[1]) != NULL);
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
  wf_map_erase(map, &args[1]);
  return 0;
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
  int64_t pos; /* position of the current entry */
} wf_map_iter;

static void wf_map_iter_free(void* self) {
  wf_map_iter* it = (wf_map_iter*)self;
  wf_obj_decref(it->map);
  free(it);
}

/* Moves pos to the first live entry at or after it; 0 at the end. */
static int wf_map_iter_settle(wf_map_iter* it) {
  int64_t pos = it->pos;
  wf_map_entry* e = wf_map_next(it->map, &pos);
  if (e == NULL) {
    it->pos = wf_map_cell_of(it->map)->used;
    return 0;
  }
  it->pos = pos - 1;
  return 1;
}

static int wf_map_iter_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char* const types[] = {"int"};
  static const WebFFISignature sig = {"ffi.MapForwardIterFunctor.<functor>", 1, types, "Any"};
  wf_map_iter* it = (wf_map_iter*)self;
  int64_t command;
  if (WebFFICheckNumArgs(&sig, n) != 0 || WebFFIArgToInt(&sig, args, 0, &command) != 0) return -1;
  if (command == 2) {
    if (wf_map_iter_settle(it)) ++it->pos;
    wf_any_set_bool(result, wf_map_iter_settle(it));
    return 0;
  }
  if (!wf_map_iter_settle(it)) {
    return wf_err_raise("IndexError", "Map iterator is at the end");
  }
  wf_map_entry* e = &wf_map_cell_of(it->map)->entries[it->pos];
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
