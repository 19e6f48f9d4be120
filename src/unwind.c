/* Putting the core's per-call state back after a JS exception unwound wasm
 * frames (see unwind.h); WebFFIUnwind is the host's entry (webffi.h). */
#include "unwind.h"

#include <stddef.h>
#include <webffi/webffi.h>

WF_THREAD_LOCAL wf_call_counters wf_counters;

void wf_unwind_restore(const wf_unwind_mark* m) {
  static const wf_call_counters outside = {0, 0, 0, 0};
  const wf_call_counters* c = m != NULL ? &m->counters : &outside;
  wf_counters.repr_depth = c->repr_depth;
  wf_counters.peer_depth = c->peer_depth;
  wf_once_unwind(c->once_held);
  /* last: at the outermost level it runs the releases left waiting */
  wf_obj_release_unwind(c->release_nesting);
}

uint32_t WebFFIUnwind(const void* mark) {
  const wf_unwind_mark* m = (const wf_unwind_mark*)mark;
  wf_unwind_restore(m);
  return m != NULL ? m->stack_pointer : 0;
}
