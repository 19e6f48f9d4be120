/* Lazily registers the runtime's global functions (no constructors needed,
 * so native, Emscripten and wasi-libc builds behave the same). */
#include "runtime_init.h"

static int (*const wf_runtime_modules[])(void) = {
    wf_global_register_builtins,
    wf_seq_register,
    wf_map_register,
    wf_shape_register,
    wf_reflect_register,
    wf_structural_register,
    wf_type_attr_columns_register,
    wf_access_path_register,
    wf_structural_equal_register,
    wf_structural_hash_register,
    wf_structural_key_register,
    wf_recursive_compare_register,
    wf_enum_register,
    wf_sentinels_register,
    wf_make_object_register,
    wf_auto_init_register,
    wf_function_extern_register,
    wf_container_device_register,
    wf_structural_visit_register,
    wf_visit_error_context_register,
    wf_repr_register,
    wf_deepcopy_register,
    wf_json_register,
    wf_json_graph_register,
    wf_platform_register,
    wf_module_register_builtins,
    wf_module_functions_register,
    wf_device_api_register_builtins,
    wf_rpc_register,
};

static enum { WF_INIT_NOT_STARTED, WF_INIT_RUNNING, WF_INIT_DONE } wf_runtime_state;

int wf_runtime_init(void) {
  /* RUNNING: a module is registering right now and may call back in. */
  if (wf_runtime_state != WF_INIT_NOT_STARTED) return 0;
  wf_runtime_state = WF_INIT_RUNNING;
  for (unsigned i = 0; i < sizeof(wf_runtime_modules) / sizeof(wf_runtime_modules[0]); ++i) {
    if (wf_runtime_modules[i]() != 0) {
      wf_runtime_state = WF_INIT_NOT_STARTED;
      return -1;
    }
  }
  wf_runtime_state = WF_INIT_DONE;
  return 0;
}
