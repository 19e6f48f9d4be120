/*
 * The live heap, counted: every allocation function goes through here, so
 * the bytes in use are known at every moment (wf_heap_live). While a peer's
 * request runs, an allocation that would take them past the peer budget's
 * ceiling fails (peer_budget.h): peers together can never take what is kept
 * for the owner, however much memory the owner grew and gave back before.
 *
 * With Emscripten, whose allocator functions are weak aliases of dlmalloc's
 * (reachable as __libc_* and emscripten_builtin_*), these definitions
 * replace them, so the runtime exports the counted ones under their own
 * names to the modules loaded at run time. wasi-libc's are strong: there
 * the link wraps them (CMakeLists.txt: -Wl,--wrap=malloc, ...).
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../peer_budget.h"
#include "../platform.h"

#ifdef __EMSCRIPTEN__
void* __libc_malloc(size_t size);
void __libc_free(void* ptr);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* emscripten_builtin_memalign(size_t alignment, size_t size);
#define WF_REAL_MALLOC __libc_malloc
#define WF_REAL_FREE __libc_free
#define WF_REAL_CALLOC __libc_calloc
#define WF_REAL_REALLOC __libc_realloc
#define WF_REAL_MEMALIGN emscripten_builtin_memalign
#define WF_ALLOC(name) name
#else
void* __real_malloc(size_t size);
void __real_free(void* ptr);
void* __real_calloc(size_t count, size_t size);
void* __real_realloc(void* ptr, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size); /* wasi-libc has no memalign */
#define WF_REAL_MALLOC __real_malloc
#define WF_REAL_FREE __real_free
#define WF_REAL_CALLOC __real_calloc
#define WF_REAL_REALLOC __real_realloc
#define WF_REAL_MEMALIGN __real_aligned_alloc
#define WF_ALLOC(name) __wrap_##name
#endif

/* The C library implements some of these with others (aligned_alloc with
 * memalign, ...), which come here too: only the outermost call counts. Per
 * thread: on the threaded core another thread's outer call counts too. */
static WF_THREAD_LOCAL int wf_heap_inside;

/* The count changes atomically: every thread allocates from one heap. */
static void wf_heap_add(size_t n) { __atomic_add_fetch(&wf_heap_live, (uint64_t)n, __ATOMIC_RELAXED); }

static void wf_heap_sub(size_t n) {
  uint64_t live = __atomic_load_n(&wf_heap_live, __ATOMIC_RELAXED);
  uint64_t next;
  do {
    next = live - (n < live ? n : live);
  } while (!__atomic_compare_exchange_n(&wf_heap_live, &live, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

static size_t wf_heap_size(void* p) { return p != NULL ? malloc_usable_size(p) : 0; }

void* WF_ALLOC(malloc)(size_t size) {
  if (wf_heap_inside) return WF_REAL_MALLOC(size);
  if (!wf_peer_heap_allows(__atomic_load_n(&wf_heap_live, __ATOMIC_RELAXED), size)) return NULL;
  ++wf_heap_inside;
  void* p = WF_REAL_MALLOC(size);
  --wf_heap_inside;
  wf_heap_add(wf_heap_size(p));
  return p;
}

void WF_ALLOC(free)(void* ptr) {
  if (wf_heap_inside || ptr == NULL) {
    WF_REAL_FREE(ptr);
    return;
  }
  size_t n = wf_heap_size(ptr);
  ++wf_heap_inside;
  WF_REAL_FREE(ptr);
  --wf_heap_inside;
  wf_heap_sub(n);
}

void* WF_ALLOC(calloc)(size_t count, size_t size) {
  if (wf_heap_inside) return WF_REAL_CALLOC(count, size);
  size_t total = count != 0 && size > SIZE_MAX / count ? SIZE_MAX : count * size;
  if (!wf_peer_heap_allows(__atomic_load_n(&wf_heap_live, __ATOMIC_RELAXED), total)) return NULL;
  ++wf_heap_inside;
  void* p = WF_REAL_CALLOC(count, size);
  --wf_heap_inside;
  wf_heap_add(wf_heap_size(p));
  return p;
}

void* WF_ALLOC(realloc)(void* ptr, size_t size) {
  if (wf_heap_inside) return WF_REAL_REALLOC(ptr, size);
  size_t before = wf_heap_size(ptr);
  if (size > before && !wf_peer_heap_allows(__atomic_load_n(&wf_heap_live, __ATOMIC_RELAXED), size - before)) return NULL;
  ++wf_heap_inside;
  void* p = WF_REAL_REALLOC(ptr, size);
  --wf_heap_inside;
  if (p == NULL && size != 0) return NULL; /* ptr is untouched */
  wf_heap_sub(before);
  wf_heap_add(wf_heap_size(p));
  return p;
}

void* WF_ALLOC(memalign)(size_t alignment, size_t size) {
  if (wf_heap_inside) return WF_REAL_MEMALIGN(alignment, size);
  if (!wf_peer_heap_allows(__atomic_load_n(&wf_heap_live, __ATOMIC_RELAXED), size)) return NULL;
  ++wf_heap_inside;
  void* p = WF_REAL_MEMALIGN(alignment, size);
  --wf_heap_inside;
  wf_heap_add(wf_heap_size(p));
  return p;
}

int WF_ALLOC(posix_memalign)(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = WF_ALLOC(memalign)(alignment, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

void* WF_ALLOC(aligned_alloc)(size_t alignment, size_t size) {
  return WF_ALLOC(memalign)(alignment, size);
}
