/* The type attribute columns upstream's core creates at start, so code that
 * looks one up finds it (empty) before any type sets it. */
#include "reflect_def.h"
#include "runtime_init.h"

int wf_type_attr_columns_register(void) {
  static const char* const columns[] = {
      "__any_hash__",   "__any_equal__",        "__ffi_shallow_copy__", "__ffi_repr__",
      "__ffi_hash__",   "__ffi_eq__",           "__ffi_compare__",      "__ffi_new__",
      "__ffi_init__",   "__ffi_convert__",      "__data_to_json__",     "__data_from_json__",
      "__s_equal__",    "__s_hash__",           "__s_visit__",          "__ffi_enum__",
  };
  for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); ++i) {
    if (wf_def_attr_column(columns[i]) != 0) return -1;
  }
  return 0;
}
