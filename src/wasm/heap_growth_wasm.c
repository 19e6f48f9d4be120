/*
 * Geometric growth of wasm memory. Both C libraries grow memory by exactly
 * the deficit (Emscripten's standalone emscripten_resize_heap, wasi-libc's
 * sbrk), so a heap filled by many allocations grows a page run at a time:
 * 1,484 memory.grow calls for 146 MB, each of which may move the whole
 * buffer. Each growth here adds at least half the current memory (at most
 * 256 MiB at once), or exactly what is needed when that much is not
 * available. The link wraps the growth function (CMakeLists.txt:
 * -Wl,--wrap=emscripten_resize_heap or -Wl,--wrap=sbrk).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>


#define WF_PAGE ((size_t)65536)
#define WF_GROWTH_STEP_MAX ((size_t)256 << 20)

static uint32_t wf_heap_growths;  /* times memory grew (wf_heap_growth_count) */
/* Successful growths, read by the JS glue of the threaded core: a shared
 * memory's buffer is never detached, so its views cannot tell that memory
 * grew (WebFFIHeapGrowthCounter). */
static uint32_t wf_heap_grown;
static int wf_heap_exact;         /* testing: the libraries' own policy, to compare */

/* The memory size (bytes) to ask for when `need` bytes do not fit. */
static size_t wf_heap_target(size_t current, size_t need) {
  size_t step = current / 2;
  if (step > WF_GROWTH_STEP_MAX) step = WF_GROWTH_STEP_MAX;
  size_t want = current + step > current ? current + step : need;
  if (want < need) want = need;
  return want;
}

#ifdef __EMSCRIPTEN__
int __real_emscripten_resize_heap(size_t size);

int __wrap_emscripten_resize_heap(size_t size) {
  size_t current = __builtin_wasm_memory_size(0) * WF_PAGE;
  ++wf_heap_growths;
  size_t want = wf_heap_exact ? size : wf_heap_target(current, size);
  int grown = (want > size && __real_emscripten_resize_heap(want)) || __real_emscripten_resize_heap(size);
  if (grown) __atomic_fetch_add(&wf_heap_grown, 1, __ATOMIC_SEQ_CST);
  return grown;
}
#else
/* wasi-libc's malloc takes memory with sbrk, whose break is the end of
 * memory; here the break is kept apart, so memory may run ahead of it. */
static uintptr_t wf_heap_break;

void* __wrap_sbrk(intptr_t increment) {
  uintptr_t end = (uintptr_t)__builtin_wasm_memory_size(0) * WF_PAGE;
  if (wf_heap_break == 0) wf_heap_break = end;
  if (increment == 0) return (void*)wf_heap_break;
  if (increment < 0 || (uintptr_t)increment > UINTPTR_MAX - wf_heap_break) {
    errno = ENOMEM;
    return (void*)-1;
  }
  uintptr_t next = wf_heap_break + (uintptr_t)increment;
  if (next > end) {
    size_t need = (next - end + WF_PAGE - 1) / WF_PAGE;
    size_t pages = need;
    if (!wf_heap_exact) {
      size_t want = wf_heap_target(end, next);
      pages = (want - end + WF_PAGE - 1) / WF_PAGE;
    }
    ++wf_heap_growths;
    if (__builtin_wasm_memory_grow(0, pages) == SIZE_MAX &&
        (pages == need || __builtin_wasm_memory_grow(0, need) == SIZE_MAX)) {
      errno = ENOMEM;
      return (void*)-1;
    }
  }
  void* old = (void*)wf_heap_break;
  wf_heap_break = next;
  return old;
}
#endif

/* The address of the count of successful growths (a 32-bit word). */
__attribute__((visibility("default"), used)) uint32_t* WebFFIHeapGrowthCounter(void) {
  return &wf_heap_grown;
}

/* How often memory has grown so far; exact >= 0 also switches to growth by
 * the exact deficit (1) or back to geometric growth (0), so both policies
 * can be measured in one build. Read by the fixtures' testing.heap_growth
 * (src/testing/heap_growth.c), linked only into test programs. */
uint32_t wf_heap_growth_count(int exact) {
  if (exact >= 0) wf_heap_exact = exact;
  return wf_heap_growths;
}
