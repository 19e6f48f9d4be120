/* Open addressing over pointer pairs, kept at most half full. */
#include "memo.h"

#include <stdlib.h>

#include "error.h"
#include "hash.h"

WF_THREAD_LOCAL uint64_t wf_memo_lookups;

static size_t wf_memo_slot(const wf_memo* m, const void* a, const void* b) {
  uint64_t h = wf_hash_mix((uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)b);
  return (size_t)h & m->mask;
}

wf_memo_entry* wf_memo_find(wf_memo* m, const void* a, const void* b) {
  ++wf_memo_lookups;
  if (m->slots == NULL) return NULL;
  for (size_t s = wf_memo_slot(m, a, b);; s = (s + 1) & m->mask) {
    wf_memo_entry* e = &m->slots[s];
    if (e->a == NULL) return NULL;
    if (e->a == a && e->b == b) return e;
  }
}

static int wf_memo_grow(wf_memo* m) {
  size_t count = m->slots == NULL ? 64 : (m->mask + 1) * 2;
  if (count > SIZE_MAX / sizeof(wf_memo_entry)) return wf_err_raise_oom(SIZE_MAX);
  wf_memo_entry* slots = (wf_memo_entry*)calloc(count, sizeof(wf_memo_entry));
  if (slots == NULL) return wf_err_raise_oom(count * sizeof(wf_memo_entry));
  wf_memo old = *m;
  m->slots = slots;
  m->mask = count - 1;
  if (old.slots != NULL) {
    for (size_t i = 0; i <= old.mask; ++i) {
      if (old.slots[i].a == NULL) continue;
      size_t s = wf_memo_slot(m, old.slots[i].a, old.slots[i].b);
      while (m->slots[s].a != NULL) s = (s + 1) & m->mask;
      m->slots[s] = old.slots[i];
    }
    free(old.slots);
  }
  return 0;
}

wf_memo_entry* wf_memo_put(wf_memo* m, const void* a, const void* b) {
  if (m->slots == NULL || (m->size + 1) * 2 > m->mask + 1) {
    if (wf_memo_grow(m) != 0) return NULL;
  }
  size_t s = wf_memo_slot(m, a, b);
  while (m->slots[s].a != NULL) s = (s + 1) & m->mask;
  wf_memo_entry* e = &m->slots[s];
  e->a = a;
  e->b = b;
  e->value = 0;
  e->aux = 0;
  ++m->size;
  return e;
}

void wf_memo_free(wf_memo* m) {
  free(m->slots);
  m->slots = NULL;
  m->mask = m->size = 0;
}
