/* String-keyed hash map used by the type and function registries. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hash.h"

static wf_strmap_slot* wf_strmap_find(const wf_strmap* m, const char* key, size_t len,
                                      uint64_t hash) {
  if (m->capacity == 0) return NULL;
  size_t mask = m->capacity - 1;
  for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
    wf_strmap_slot* s = &m->slots[i];
    if (s->key == NULL) return NULL;
    if (s->hash == hash && s->key_len == len && memcmp(s->key, key, len) == 0) {
      return s;
    }
  }
}

void* wf_strmap_get(const wf_strmap* m, const char* key, size_t key_len) {
  wf_strmap_slot* s = wf_strmap_find(m, key, key_len, wf_hash_bytes(key, key_len));
  return s != NULL ? s->value : NULL;
}

static int wf_strmap_grow(wf_strmap* m) {
  size_t cap = m->capacity ? m->capacity * 2 : 16;
  wf_strmap_slot* slots = (wf_strmap_slot*)calloc(cap, sizeof(wf_strmap_slot));
  if (slots == NULL) return wf_err_raise_oom(cap * sizeof(wf_strmap_slot));
  size_t used = 0;
  for (size_t i = 0; i < m->capacity; ++i) {
    wf_strmap_slot* s = &m->slots[i];
    if (s->key == NULL) continue;
    size_t j = (size_t)s->hash & (cap - 1);
    while (slots[j].key != NULL) j = (j + 1) & (cap - 1);
    slots[j] = *s;
    ++used;
  }
  free(m->slots);
  m->slots = slots;
  m->capacity = cap;
  m->used = used;
  return 0;
}

int wf_strmap_put(wf_strmap* m, const char* key, size_t key_len, void* value) {
  uint64_t hash = wf_hash_bytes(key, key_len);
  wf_strmap_slot* s = wf_strmap_find(m, key, key_len, hash);
  if (s != NULL) {
    s->value = value;
    return 0;
  }
  if ((m->used + 1) * 4 > m->capacity * 3 && wf_strmap_grow(m) != 0) return -1;
  char* copy = (char*)malloc(key_len + 1);
  if (copy == NULL) return wf_err_raise_oom(key_len + 1);
  memcpy(copy, key, key_len);
  copy[key_len] = '\0';
  size_t mask = m->capacity - 1;
  size_t i = (size_t)hash & mask;
  while (m->slots[i].key != NULL) i = (i + 1) & mask;
  m->slots[i] = (wf_strmap_slot){copy, key_len, hash, value};
  ++m->used;
  return 0;
}

void* wf_strmap_remove(wf_strmap* m, const char* key, size_t key_len) {
  wf_strmap_slot* s = wf_strmap_find(m, key, key_len, wf_hash_bytes(key, key_len));
  if (s == NULL) return NULL;
  void* value = s->value;
  free(s->key);
  /* Backward shift: each later key of the run whose home is not between the
   * hole and itself moves into the hole, so every probe still finds it. */
  size_t mask = m->capacity - 1;
  size_t hole = (size_t)(s - m->slots);
  for (size_t j = (hole + 1) & mask; m->slots[j].key != NULL; j = (j + 1) & mask) {
    size_t home = (size_t)m->slots[j].hash & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      m->slots[hole] = m->slots[j];
      hole = j;
    }
  }
  m->slots[hole] = (wf_strmap_slot){NULL, 0, 0, NULL};
  --m->used;
  return value;
}

void wf_strmap_clear(wf_strmap* m, void (*free_value)(void* value)) {
  for (size_t i = 0; i < m->capacity; ++i) {
    wf_strmap_slot* s = &m->slots[i];
    if (s->key == NULL) continue;
    if (free_value != NULL) free_value(s->value);
    free(s->key);
  }
  free(m->slots);
  m->slots = NULL;
  m->capacity = m->used = 0;
}
