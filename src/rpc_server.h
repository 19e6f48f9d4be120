/* The functions TVM's client calls on a server by name (tvm.rpc.server.*,
 * runtime.RPCTimeEvaluator): an in-memory work directory per endpoint, and
 * the loaders and timers over it. */
#ifndef WEBFFI_SRC_RPC_SERVER_H_
#define WEBFFI_SRC_RPC_SERVER_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* What the server functions of one endpoint may reach, shared (refcounted)
 * by the functions handed out, since a function may outlive its endpoint. */
typedef struct wf_rpc_policy wf_rpc_policy;

/* A policy over a copy of the allow list; enable_upload gates the work
 * directory functions; max_bytes bounds the files kept (0: 256 MiB).
 * NULL with MemoryError raised. */
wf_rpc_policy* wf_rpc_policy_new(const char* const* allow_list, int32_t allow_count,
                                 int (*allow)(void* ctx, const char* name, size_t size),
                                 void* allow_ctx, int enable_upload, uint64_t max_bytes,
                                 uint64_t max_packet);
/* The endpoint is gone: the allow callback is no longer called. */
void wf_rpc_policy_detach(wf_rpc_policy* p);
void wf_rpc_policy_release(wf_rpc_policy* p);
/* Whether the global name is exposed. */
int wf_rpc_policy_allows(const wf_rpc_policy* p, const char* name, size_t size);

/* The server function called `name`, as a new Function reference in *out,
 * or *out NULL when the name is not a server function (or not enabled).
 * 0, or -1 with an error raised. */
int wf_rpc_server_function(wf_rpc_policy* p, const char* name, size_t size, TVMFFIObject** out);

/* A timer made by runtime.RPCTimeEvaluator (its settings), for an endpoint
 * that runs it step by step when the device waits asynchronously. */
typedef struct {
  TVMFFIObject* pf;
  TVMFFIObject* preproc; /* may be NULL */
  DLDevice dev;
  int64_t number, repeat, min_repeat_ms, limit_zero;
} wf_rpc_timer;

/* The timer behind f, or NULL when f is not one. */
const wf_rpc_timer* wf_rpc_timer_of(TVMFFIObject* f);
/* Calls f with args and drops the result. 0 or -1. */
int wf_rpc_call_discard(TVMFFIObject* f, const TVMFFIAny* args, int32_t n);
int64_t wf_rpc_now_ns(void);
/* Raises an RPCError once a timer has run spent_ns synchronously past the
 * runtime's timer budget (peer_budget.h); 0 while within it. */
int wf_rpc_timer_over(int64_t spent_ns);

#endif /* WEBFFI_SRC_RPC_SERVER_H_ */
