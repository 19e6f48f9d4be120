/* Nesting recorded by the built-in containers. */
#include "nesting.h"

#include "error.h"
#include "map.h"
#include "seq.h"

int32_t wf_nesting_of(const TVMFFIAny* v) {
  int32_t n;
  switch (v->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList: n = *wf_seq_nesting(v->v_obj); break;
    case kTVMFFIMap:
    case kTVMFFIDict: n = wf_map_nesting(v->v_obj); break;
    default: return 0;
  }
  return n > 1 ? n : 1; /* a container is a level, empty or not */
}

int wf_nesting_take_container(int32_t* nesting, const TVMFFIAny* child, const char* what) {
  int32_t below = wf_nesting_of(child);
  if (below >= WF_MAX_NESTING) {
    return wf_err_raise("ValueError", "%s: nesting deeper than %d levels", what, WF_MAX_NESTING);
  }
  if (below + 1 > *nesting) *nesting = below + 1;
  return 0;
}
