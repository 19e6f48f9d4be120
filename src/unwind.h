/* What the core keeps in globals from one call to the next (the release
 * machinery's nesting, the repr hooks' depth, the init-once lock, the peer
 * budget's nesting), saved where JS may re-enter wasm, and put back when a
 * JS exception (a stack overflow) unwound wasm frames without a trap: the
 * frames it skipped ran no epilogue, so their increments would otherwise
 * stay counted for ever. */
#ifndef WEBFFI_SRC_UNWIND_H_
#define WEBFFI_SRC_UNWIND_H_

#include <stdint.h>

#include "platform.h"

/* The counters, in one place so a mark is a copy (the modules name their
 * field through a macro: object.c, repr.c, handle_once.c, peer_budget.c). */
typedef struct {
  int32_t release_nesting;
  int32_t repr_depth;
  int32_t once_held;
  int32_t peer_depth;
} wf_call_counters;

extern WF_THREAD_LOCAL wf_call_counters wf_counters;

/* A running JS callback's mark (src/wasm/js_function.c keeps a chain of
 * them, innermost first). */
typedef struct wf_unwind_mark {
  uint32_t stack_pointer; /* wasm: __stack_pointer where JS was entered */
  wf_call_counters counters;
  const struct wf_unwind_mark* outer;
  int32_t depth; /* 1 for the outermost callback */
} wf_unwind_mark;

/* The innermost running callback's mark (NULL: none). After an exception
 * escaped callbacks it may name ones that are gone: WebFFIUnwind looks the
 * live one up by depth, and makes it the innermost again. */
extern WF_THREAD_LOCAL const wf_unwind_mark* wf_js_mark;

static inline int wf_counters_differ(const wf_call_counters* a, const wf_call_counters* b) {
  return a->release_nesting != b->release_nesting || a->repr_depth != b->repr_depth ||
         a->once_held != b->once_held || a->peer_depth != b->peer_depth;
}

/* Puts the counters back to m; NULL: outside every call (nothing nested,
 * the lock free), which also runs the releases that were left waiting. */
void wf_unwind_restore(const wf_unwind_mark* m);

/* The modules' halves of a restore. */
void wf_obj_release_unwind(int32_t nesting);
void wf_once_unwind(int32_t held);

#endif /* WEBFFI_SRC_UNWIND_H_ */
