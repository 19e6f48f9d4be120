/* ffi.reflection.AccessStep and ffi.reflection.AccessPath: where in a value
 * something is (a mismatch, an error), with upstream's type keys, fields
 * and layouts (tvm/ffi/reflection/access_path.h). */
#ifndef WEBFFI_SRC_ACCESS_PATH_H_
#define WEBFFI_SRC_ACCESS_PATH_H_

#include <tvm/ffi/c_api.h>

/* Upstream's AccessKind. */
enum {
  WF_ACCESS_ATTR = 0,
  WF_ACCESS_ARRAY_ITEM = 1,
  WF_ACCESS_MAP_ITEM = 2,
  WF_ACCESS_ATTR_MISSING = 3,
  WF_ACCESS_ARRAY_ITEM_MISSING = 4,
  WF_ACCESS_MAP_ITEM_MISSING = 5,
};

typedef struct {
  TVMFFIObject header;
  int32_t kind;
  TVMFFIAny key; /* field name (str), index (int) or map key */
} wf_access_step;

typedef struct {
  TVMFFIObject header;
  TVMFFIObject* parent; /* NULL at the root */
  TVMFFIObject* step;   /* NULL at the root */
  int32_t depth;
} wf_access_path;

/* New references; NULL with the error raised. The key is copied. */
TVMFFIObject* wf_access_step_new(int32_t kind, const TVMFFIAny* key);
TVMFFIObject* wf_access_path_root(void);
/* path + step (both borrowed). */
TVMFFIObject* wf_access_path_extend(TVMFFIObject* path, TVMFFIObject* step);

int32_t wf_access_path_type_index(void);
int32_t wf_access_step_type_index(void);

/* Registers both types, their fields and methods. */
int wf_access_path_register(void);

#endif /* WEBFFI_SRC_ACCESS_PATH_H_ */
