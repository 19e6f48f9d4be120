/* Putting the core's per-call state back after a JS exception unwound wasm
 * frames (see unwind.h); WebFFIUnwind is the host's entry (webffi.h). */
#include "unwind.h"

#include <stddef.h>
#include <webffi/webffi.h>

WF_THREAD_LOCAL wf_call_counters wf_counters;
WF_THREAD_LOCAL const wf_unwind_mark* wf_js_mark;

void wf_unwind_restore(const wf_unwind_mark* m) {
  static const wf_call_counters outside = {0, 0, 0, 0};
  const wf_call_counters* c = m != NULL ? &m->counters : &outside;
  wf_counters.repr_depth = c->repr_depth;
  wf_counters.peer_depth = c->peer_depth;
  wf_once_unwind(c->once_held);
  /* last: at the outermost level it runs the releases left waiting */
  wf_obj_release_unwind(c->release_nesting);
}

uint32_t WebFFIUnwind(int32_t depth) {
  const wf_unwind_mark* m = wf_js_mark;
  while (m != NULL && m->depth > depth) m = m->outer; /* callbacks an exception escaped */
  if (depth <= 0 || m == NULL || m->depth != depth) m = NULL;
  wf_js_mark = m;
  wf_unwind_restore(m);
  return m != NULL ? m->stack_pointer : 0;
}
