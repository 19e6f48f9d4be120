/* What peers (TVM RPC clients, worker-session peers) may take of the one
 * runtime they all share, whatever each one's own limits say: the live heap
 * may not pass a ceiling while a peer's request runs (the rest is kept for
 * the owner), device memory the RPC endpoints hand out is counted
 * together, and a timer (runtime.RPCTimeEvaluator) runs for a bounded time.
 * The owner's own calls are not limited. */
#ifndef WEBFFI_SRC_PEER_BUDGET_H_
#define WEBFFI_SRC_PEER_BUDGET_H_

#include <stddef.h>
#include <stdint.h>

/* Defaults: peers may take the heap to 1.5 GiB in use (of the 2 GiB a
 * wasm32 build reaches), hold 1 GiB of device memory together, time for 2 s
 * at once. */
#define WF_PEER_MEMORY_DEFAULT ((uint64_t)1536 << 20)
#define WF_PEER_DEVICE_DEFAULT ((uint64_t)1 << 30)
#define WF_PEER_TIMER_MS_DEFAULT 2000

/* Requests of a peer run between these (they nest). */
void wf_peer_enter(void);
void wf_peer_leave(void);

/* Whether `size` more heap bytes may be taken when `live` are in use:
 * always outside a peer's request; within one, while live + size stays
 * within the ceiling (a refusal is remembered for the MemoryError's text,
 * wf_peer_take_refusal). Wasm builds count the live heap
 * (src/wasm/heap_count_wasm.c); native ones have no ceiling. */
int wf_peer_heap_allows(uint64_t live, uint64_t size);
/* The live heap in bytes (counted by the wasm builds; 0 natively). */
extern uint64_t wf_heap_live;
/* The ceiling when the last refusal happened (0: none since), then forgets it. */
uint64_t wf_peer_take_refusal(void);

/* Device memory handed to peers: take fails (0) past the budget. */
int wf_peer_device_take(uint64_t nbytes);
/* Between these, device memory being allocated was charged already by its
 * caller (the RPC endpoint's kDevAllocData): WebFFIPeerDeviceTake, which
 * the device backends call for every allocation, does not charge it again. */
void wf_peer_device_precharged_begin(void);
void wf_peer_device_precharged_end(void);
void wf_peer_device_give(uint64_t nbytes);
uint64_t wf_peer_device_budget(void);
uint64_t wf_peer_device_held(void);

/* How long one timer evaluation may run synchronously, in ms. */
uint32_t wf_peer_timer_ms(void);

#endif /* WEBFFI_SRC_PEER_BUDGET_H_ */
