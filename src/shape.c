/* Shape objects and ffi.Shape. */
#include "shape.h"

#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "global_registry.h"

TVMFFIObject* wf_shape_new(const int64_t* data, size_t n) {
  size_t head = sizeof(TVMFFIObject) + sizeof(TVMFFIShapeCell);
  head = (head + 7) & ~(size_t)7;
  if (n > (SIZE_MAX - head) / sizeof(int64_t)) {
    wf_err_raise_oom((uint64_t)n > (UINT64_MAX - head) / sizeof(int64_t)
                         ? UINT64_MAX
                         : head + (uint64_t)n * sizeof(int64_t));
    return NULL;
  }
  TVMFFIObject* shape = wf_obj_alloc(head + n * sizeof(int64_t), 8, kTVMFFIShape,
                                     wf_obj_plain_deleter);
  if (shape == NULL) return NULL;
  int64_t* dims = (int64_t*)((char*)shape + head);
  if (n) memcpy(dims, data, n * sizeof(int64_t));
  wf_shape_cell(shape)->data = dims;
  wf_shape_cell(shape)->size = n;
  return shape;
}

static int wf_shape_ctor(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int64_t small[8] = {0};
  int64_t* dims = n <= 8 ? small : (int64_t*)malloc((size_t)n * sizeof(int64_t));
  if (dims == NULL) return wf_err_raise_oom((size_t)n * sizeof(int64_t));
  int rc = 0;
  for (int32_t i = 0; i < n && rc == 0; ++i) rc = WebFFIArgToInt(NULL, args, i, &dims[i]);
  TVMFFIObject* shape = rc == 0 ? wf_shape_new(dims, (size_t)n) : NULL;
  if (dims != small) free(dims);
  if (shape == NULL) return -1;
  wf_any_set_object(result, shape);
  return 0;
}

int wf_shape_register(void) { return wf_global_register("ffi.Shape", wf_shape_ctor, NULL); }
