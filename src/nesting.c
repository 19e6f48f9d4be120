/* Nesting recorded by the built-in containers. */
#include "nesting.h"

#include "error.h"
#include "map.h"
#include "seq.h"

int32_t wf_nesting_of(const TVMFFIAny* v) {
  switch (v->type_index) {
    case kTVMFFIArray:
    case kTVMFFIList: return *wf_seq_nesting(v->v_obj);
    case kTVMFFIMap:
    case kTVMFFIDict: return wf_map_nesting(v->v_obj);
    default: return 0;
  }
}

int wf_nesting_take_container(int32_t* nesting, const TVMFFIAny* child, const char* what) {
  int32_t below = wf_nesting_of(child);
  if (below >= WF_MAX_NESTING) {
    return wf_err_raise("ValueError", "%s: nesting deeper than %d levels", what, WF_MAX_NESTING);
  }
  if (below + 1 > *nesting) *nesting = below + 1;
  return 0;
}
