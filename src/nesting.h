/* How deep values may nest. Deeper input is a ValueError, never a stack
 * overflow: wasm stacks are small (64 KiB by default with wasm-ld). */
#ifndef WEBFFI_SRC_NESTING_H_
#define WEBFFI_SRC_NESTING_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* Container-to-element steps on the longest path down from a value: the
 * JSON readers and container construction refuse more, and the recursive
 * operations (equality, hashing, repr, copies, JSON) stop there too. */
#define WF_MAX_NESTING 256

/*
 * Arrays, Lists, Maps and Dicts record their nesting when built: 1 when
 * empty, else one more than their deepest element's (other values count
 * 0), so the check costs O(1) per element: the containers on the longest
 * path down, as JSON and JS values are counted. A List or Dict changed after it was put in
 * another container does not update its parents (that would need parent
 * links), so the recorded figure is a bound for values built bottom-up, and
 * every recursive operation still counts its own depth.
 */
int32_t wf_nesting_of(const TVMFFIAny* v);

/* Raises `what: nesting deeper than 256 levels` (a ValueError) unless a
 * container of nesting *nesting can take child; else raises it to cover
 * child. Fails before anything changes. */
int wf_nesting_take_container(int32_t* nesting, const TVMFFIAny* child, const char* what);
static inline int wf_nesting_take(int32_t* nesting, const TVMFFIAny* child, const char* what) {
  int32_t t = child->type_index;
  if (t == kTVMFFIArray || t == kTVMFFIMap || t == kTVMFFIList || t == kTVMFFIDict) {
    return wf_nesting_take_container(nesting, child, what);
  }
  if (*nesting < 1) *nesting = 1;
  return 0;
}

#endif /* WEBFFI_SRC_NESTING_H_ */
