/* The runtime-wide budget of peers (peer_budget.h); WebFFIPeer* are the
 * host's entries (webffi.h). */
#include "peer_budget.h"

#include <webffi/webffi.h>

#include "platform.h"
#include "unwind.h"

#define wf_peer_depth (wf_counters.peer_depth) /* unwind.h */
static uint64_t wf_peer_memory = WF_PEER_MEMORY_DEFAULT;
static uint64_t wf_peer_device = WF_PEER_DEVICE_DEFAULT;
static uint64_t wf_peer_device_in_use;
static uint32_t wf_peer_timer = WF_PEER_TIMER_MS_DEFAULT;
static uint64_t wf_peer_refused; /* the ceiling of the last refused growth */
static uint32_t wf_peer_precharged; /* allocations whose caller charged them (nesting) */
uint64_t wf_heap_live;

/* A refusal is told by the request that met it, never by a later one. */
void wf_peer_enter(void) {
  if (wf_peer_depth++ == 0) wf_peer_refused = 0;
}
void wf_peer_leave(void) {
  if (wf_peer_depth > 0 && --wf_peer_depth == 0) {
    wf_peer_refused = 0;
    wf_peer_precharged = 0; /* an allocation unwound by a stack overflow leaves no mark behind */
  }
}

int wf_peer_heap_allows(uint64_t live, uint64_t size) {
  if (wf_peer_depth == 0 || (live <= wf_peer_memory && size <= wf_peer_memory - live)) return 1;
  wf_peer_refused = wf_peer_memory;
  return 0;
}

uint64_t wf_peer_take_refusal(void) {
  uint64_t c = wf_peer_refused;
  wf_peer_refused = 0;
  return c;
}

int wf_peer_device_take(uint64_t nbytes) {
  if (nbytes > wf_peer_device || wf_peer_device_in_use > wf_peer_device - nbytes) return 0;
  wf_peer_device_in_use += nbytes;
  return 1;
}

void wf_peer_device_give(uint64_t nbytes) {
  wf_peer_device_in_use -= nbytes < wf_peer_device_in_use ? nbytes : wf_peer_device_in_use;
}

void wf_peer_device_precharged_begin(void) { wf_peer_precharged++; }
void wf_peer_device_precharged_end(void) {
  if (wf_peer_precharged > 0) wf_peer_precharged--;
}

int32_t WebFFIPeerDeviceTake(uint64_t nbytes) {
  if (wf_peer_depth == 0 || wf_peer_precharged > 0) return 0;
  return wf_peer_device_take(nbytes) ? 1 : -1;
}

void WebFFIPeerDeviceGive(uint64_t nbytes) { wf_peer_device_give(nbytes); }

uint64_t wf_peer_device_budget(void) { return wf_peer_device; }
uint64_t wf_peer_device_held(void) { return wf_peer_device_in_use; }
uint32_t wf_peer_timer_ms(void) { return wf_peer_timer; }

void WebFFIPeerEnter(void) { wf_peer_enter(); }
void WebFFIPeerLeave(void) { wf_peer_leave(); }

void WebFFIPeerBudgetSet(uint64_t memory_bytes, uint64_t device_bytes, uint32_t timer_ms) {
  if (memory_bytes != 0) wf_peer_memory = memory_bytes;
  if (device_bytes != 0) wf_peer_device = device_bytes;
  if (timer_ms != 0) wf_peer_timer = timer_ms;
}

uint64_t WebFFIPeerBudgetGet(int32_t what) {
  switch (what) {
    case 0: return wf_peer_memory;
    case 1: return wf_peer_device;
    case 2: return wf_peer_device_in_use;
    case 3: return wf_peer_timer;
    case 4: return (uint64_t)wf_peer_depth;
    case 5: return wf_heap_live;
    default: return 0;
  }
}
