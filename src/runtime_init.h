/* One-time registration of the runtime's own global functions. */
#ifndef WEBFFI_SRC_RUNTIME_INIT_H_
#define WEBFFI_SRC_RUNTIME_INIT_H_

/* Runs every module's registration once, on first use of the global
 * registry; later calls return at once. Returns 0 or -1 (error raised). */
int wf_runtime_init(void);

/* Each module that owns global functions registers them here. */
int wf_global_register_builtins(void);
/* Platform-specific globals (src/wasm/, src/native/). */
int wf_platform_register(void);
int wf_seq_register(void);
int wf_map_register(void);
int wf_shape_register(void);
int wf_reflect_register(void);
int wf_structural_register(void);
int wf_repr_register(void);
int wf_deepcopy_register(void);
int wf_json_register(void);
int wf_json_graph_register(void);
int wf_module_register_builtins(void);
int wf_device_api_register_builtins(void);
int wf_rpc_register(void);
/* What upstream's core registers besides (one file each). */
int wf_type_attr_columns_register(void);
int wf_access_path_register(void);
int wf_structural_equal_register(void);
int wf_structural_hash_register(void);
int wf_structural_key_register(void);
int wf_recursive_compare_register(void);
int wf_enum_register(void);
int wf_sentinels_register(void);
int wf_make_object_register(void);
int wf_auto_init_register(void);
int wf_function_extern_register(void);
int wf_container_device_register(void);
int wf_module_functions_register(void);
int wf_structural_visit_register(void);
int wf_visit_error_context_register(void);

#endif /* WEBFFI_SRC_RUNTIME_INIT_H_ */
