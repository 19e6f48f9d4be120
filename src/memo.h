/* Memo tables for traversals of object graphs: a node (or a pair of nodes)
 * reached again through another path is looked up instead of walked again,
 * so shared structure costs linear time, not one walk per path. */
#ifndef WEBFFI_SRC_MEMO_H_
#define WEBFFI_SRC_MEMO_H_

#include <stddef.h>
#include <stdint.h>

#include "platform.h"

typedef struct {
  const void* a; /* NULL: an empty slot */
  const void* b;
  uint64_t value;
  int64_t aux;
} wf_memo_entry;

/* Keys are pointers (never NULL for a), so the hash needs no secret. */
typedef struct {
  wf_memo_entry* slots;
  size_t mask; /* slots - 1; 0 before the first insertion */
  size_t size;
} wf_memo;

/* Lookups made by every memo, in total: tests check that traversals of
 * shared graphs stay linear by counting them. */
extern WF_THREAD_LOCAL uint64_t wf_memo_lookups;

/* The entry for (a, b), or NULL. Pointers stay valid until the next put. */
wf_memo_entry* wf_memo_find(wf_memo* m, const void* a, const void* b);
/* Adds (a, b) (which must be absent); NULL with MemoryError raised. */
wf_memo_entry* wf_memo_put(wf_memo* m, const void* a, const void* b);
void wf_memo_free(wf_memo* m);

#endif /* WEBFFI_SRC_MEMO_H_ */
