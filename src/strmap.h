/* A map from byte-string keys to pointers (registries), open addressing. */
#ifndef WEBFFI_SRC_STRMAP_H_
#define WEBFFI_SRC_STRMAP_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
  char* key; /* owned copy, NUL-terminated; NULL: empty slot */
  size_t key_len;
  uint64_t hash;
  void* value;
} wf_strmap_slot;

/* Linear probing; a removal shifts the rest of its probe run back into the
 * hole, so no marker is left behind: the table holds only live keys, and
 * register/remove churn neither lengthens probes nor grows the table. */
typedef struct {
  wf_strmap_slot* slots;
  size_t capacity; /* a power of two, or 0 */
  size_t used;     /* live keys */
} wf_strmap;

void* wf_strmap_get(const wf_strmap* m, const char* key, size_t key_len);
/* Inserts or replaces; returns -1 (MemoryError raised) when out of memory. */
int wf_strmap_put(wf_strmap* m, const char* key, size_t key_len, void* value);
/* Removes the key (its slot is free again at once); returns its value, or
 * NULL when absent. */
void* wf_strmap_remove(wf_strmap* m, const char* key, size_t key_len);

/* Frees every key (and value, through free_value when given); the map is
 * empty and reusable afterwards. */
void wf_strmap_clear(wf_strmap* m, void (*free_value)(void* value));

#endif /* WEBFFI_SRC_STRMAP_H_ */
