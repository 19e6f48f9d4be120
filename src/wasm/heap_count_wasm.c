/*
 * The live heap, counted: every allocation function is wrapped
 * (CMakeLists.txt: -Wl,--wrap=malloc and the others; modules loaded at run
 * time get the wrapped ones, js/dylink.js), so the bytes in use are known at
 * every moment (wf_heap_live). While a peer's request runs, an allocation
 * that would take them past the peer budget's ceiling fails (peer_budget.h):
 * peers together can never take what is kept for the owner, however much
 * memory the owner grew and gave back before.
 */
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../peer_budget.h"

void* __real_malloc(size_t size);
void __real_free(void* ptr);
void* __real_calloc(size_t count, size_t size);
void* __real_realloc(void* ptr, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void** out, size_t alignment, size_t size);
void* __real_memalign(size_t alignment, size_t size);

/* The C library implements some of these with others (aligned_alloc with
 * memalign, ...), which the wrapping reaches too: only the outermost call
 * counts. */
static int wf_heap_inside;

static size_t wf_heap_size(void* p) { return p != NULL ? malloc_usable_size(p) : 0; }

void* __wrap_malloc(size_t size) {
  if (wf_heap_inside) return __real_malloc(size);
  if (!wf_peer_heap_allows(wf_heap_live, size)) return NULL;
  ++wf_heap_inside;
  void* p = __real_malloc(size);
  --wf_heap_inside;
  wf_heap_live += wf_heap_size(p);
  return p;
}

void __wrap_free(void* ptr) {
  if (wf_heap_inside || ptr == NULL) {
    __real_free(ptr);
    return;
  }
  size_t n = wf_heap_size(ptr);
  ++wf_heap_inside;
  __real_free(ptr);
  --wf_heap_inside;
  wf_heap_live -= n < wf_heap_live ? n : wf_heap_live;
}

void* __wrap_calloc(size_t count, size_t size) {
  if (wf_heap_inside) return __real_calloc(count, size);
  size_t total = count != 0 && size > SIZE_MAX / count ? SIZE_MAX : count * size;
  if (!wf_peer_heap_allows(wf_heap_live, total)) return NULL;
  ++wf_heap_inside;
  void* p = __real_calloc(count, size);
  --wf_heap_inside;
  wf_heap_live += wf_heap_size(p);
  return p;
}

void* __wrap_realloc(void* ptr, size_t size) {
  if (wf_heap_inside) return __real_realloc(ptr, size);
  size_t before = wf_heap_size(ptr);
  if (size > before && !wf_peer_heap_allows(wf_heap_live, size - before)) return NULL;
  ++wf_heap_inside;
  void* p = __real_realloc(ptr, size);
  --wf_heap_inside;
  if (p == NULL && size != 0) return NULL; /* ptr is untouched */
  uint64_t live = wf_heap_live - (before < wf_heap_live ? before : wf_heap_live);
  wf_heap_live = live + wf_heap_size(p);
  return p;
}

static void* wf_heap_aligned(void* (*real)(size_t, size_t), size_t alignment, size_t size) {
  if (wf_heap_inside) return real(alignment, size);
  if (!wf_peer_heap_allows(wf_heap_live, size)) return NULL;
  ++wf_heap_inside;
  void* p = real(alignment, size);
  --wf_heap_inside;
  wf_heap_live += wf_heap_size(p);
  return p;
}

void* __wrap_aligned_alloc(size_t alignment, size_t size) {
  return wf_heap_aligned(__real_aligned_alloc, alignment, size);
}

void* __wrap_memalign(size_t alignment, size_t size) {
  return wf_heap_aligned(__real_memalign, alignment, size);
}

int __wrap_posix_memalign(void** out, size_t alignment, size_t size) {
  if (wf_heap_inside) return __real_posix_memalign(out, alignment, size);
  if (!wf_peer_heap_allows(wf_heap_live, size)) return 12; /* ENOMEM */
  ++wf_heap_inside;
  int rc = __real_posix_memalign(out, alignment, size);
  --wf_heap_inside;
  if (rc == 0) wf_heap_live += wf_heap_size(*out);
  return rc;
}
