/* What the core keeps in globals from one call to the next (the release
 * machinery's nesting, the repr hooks' depth, the init-once lock), saved
 * where JS may re-enter wasm, and put back when a JS exception (a stack
 * overflow) unwound wasm frames without a trap: the frames it skipped ran
 * no epilogue, so their increments would otherwise stay counted for ever. */
#ifndef WEBFFI_SRC_UNWIND_H_
#define WEBFFI_SRC_UNWIND_H_

#include <stdint.h>

typedef struct wf_unwind_mark {
  uint32_t stack_pointer; /* wasm: __stack_pointer where JS was entered; 0 natively */
  int32_t release_nesting;
  int32_t repr_depth;
  int32_t once_held;
  int32_t peer_depth;
} wf_unwind_mark;

/* The state now (stack_pointer left 0: only the wasm glue can read it). */
void wf_unwind_save(wf_unwind_mark* m);
/* Puts the state back to m; NULL: outside every call (nothing nested, the
 * lock free), which also runs the releases that were left waiting. */
void wf_unwind_restore(const wf_unwind_mark* m);

/* Per-module halves (object.c, repr.c, handle_once.c). */
int32_t wf_obj_release_nesting_now(void);
void wf_obj_release_unwind(int32_t nesting);
int32_t wf_repr_depth_now(void);
void wf_repr_depth_unwind(int32_t depth);
int32_t wf_once_held_now(void);
void wf_once_unwind(int32_t held);
/* (peer_budget.h) */
int32_t wf_peer_depth_now(void);
void wf_peer_depth_unwind(int32_t depth);

#endif /* WEBFFI_SRC_UNWIND_H_ */
