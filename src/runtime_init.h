/* One-time registration of the runtime's own global functions. */
#ifndef WEBFFI_SRC_RUNTIME_INIT_H_
#define WEBFFI_SRC_RUNTIME_INIT_H_

/* Runs every module's registration once, on first use of the global
 * registry; later calls return at once. Returns 0 or -1 (error raised). */
int wf_runtime_init(void);

/* Each module that owns global functions registers them here. */
int wf_global_register_builtins(void);
int wf_testing_register(void);
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
int wf_testing_types_register(void);
int wf_module_register_builtins(void);
int wf_device_api_register_builtins(void);
int wf_rpc_register(void);

#endif /* WEBFFI_SRC_RUNTIME_INIT_H_ */
