/* Putting the core's per-call state back after a JS exception unwound wasm
 * frames (see unwind.h); WebFFIUnwind is the host's entry (webffi.h). */
#include "unwind.h"

#include <stddef.h>
#include <webffi/webffi.h>

void wf_unwind_save(wf_unwind_mark* m) {
  m->stack_pointer = 0;
  m->release_nesting = wf_obj_release_nesting_now();
  m->repr_depth = wf_repr_depth_now();
  m->once_held = wf_once_held_now();
  m->peer_depth = wf_peer_depth_now();
}

void wf_unwind_restore(const wf_unwind_mark* m) {
  wf_repr_depth_unwind(m != NULL ? m->repr_depth : 0);
  wf_once_unwind(m != NULL ? m->once_held : 0);
  wf_peer_depth_unwind(m != NULL ? m->peer_depth : 0);
  /* last: at the outermost level it runs the releases left waiting */
  wf_obj_release_unwind(m != NULL ? m->release_nesting : 0);
}

uint32_t WebFFIUnwind(const void* mark) {
  const wf_unwind_mark* m = (const wf_unwind_mark*)mark;
  wf_unwind_restore(m);
  return m != NULL ? m->stack_pointer : 0;
}
