/* The RPC handle table: see rpc_handles.h. */
#include "rpc_handles.h"

#include <stdlib.h>
#include <string.h>

#include <webffi/device_api.h>

#include "device_api.h"
#include "error.h"

/* An id: high 32 bits the slot's generation
 * (never 0), low 32 bits slot + 1. */
static uint64_t wf_rpc_id(const wf_rpc_handles* h, uint32_t slot) {
  return ((uint64_t)h->slots[slot].generation << 32) | (uint64_t)(slot + 1);
}

void wf_rpc_handles_init(wf_rpc_handles* h, uint32_t max_live) {
  memset(h, 0, sizeof(*h));
  h->free_head = -1;
  h->max_live = max_live ? max_live : 65536;
}

static void wf_rpc_release(wf_rpc_handle* e) {
  if (e->kind == WF_RPC_HANDLE_OBJECT) {
    TVMFFIObjectDecRef(e->obj);
  } else if (e->kind == WF_RPC_HANDLE_DATA) {
    if (e->obj != NULL) {
      TVMFFIObjectDecRef(e->obj);
    } else {
      const WebFFIDeviceAPI* api = wf_device_api_find(e->device.device_type);
      if (api != NULL && api->free != NULL) api->free(api->ctx, e->device, e->data);
    }
  }
  e->obj = NULL;
  e->data = NULL;
  e->linked = 0;
  e->kind = WF_RPC_HANDLE_FREE;
}

void wf_rpc_handles_clear(wf_rpc_handles* h) {
  for (uint32_t i = 0; i < h->count; ++i) wf_rpc_release(&h->slots[i]);
  free(h->slots);
  uint32_t max_live = h->max_live;
  wf_rpc_handles_init(h, max_live);
}

static int32_t wf_rpc_take_slot(wf_rpc_handles* h) {
  if (h->live >= h->max_live) {
    wf_err_raise("ValueError", "RPC: the peer holds %u handles, the most allowed; free some",
                 (unsigned)h->live);
    return -1;
  }
  int32_t slot = h->free_head;
  if (slot >= 0) {
    h->free_head = h->slots[slot].next_free;
  } else {
    if (h->count == h->capacity) {
      uint32_t cap = h->capacity ? h->capacity * 2 : 16;
      wf_rpc_handle* grown = (wf_rpc_handle*)realloc(h->slots, (size_t)cap * sizeof(*grown));
      if (grown == NULL) {
        wf_err_raise_oom((size_t)cap * sizeof(*grown));
        return -1;
      }
      h->slots = grown;
      h->capacity = cap;
    }
    slot = (int32_t)h->count++;
    memset(&h->slots[slot], 0, sizeof(wf_rpc_handle));
  }
  wf_rpc_handle* e = &h->slots[slot];
  /* a new generation per use, never 0, so stale ids miss */
  e->generation = e->generation + 1 == 0 ? 1 : e->generation + 1;
  e->next_free = -1;
  h->live++;
  return slot;
}

uint64_t wf_rpc_handles_add_object(wf_rpc_handles* h, TVMFFIObject* obj) {
  if (obj == NULL) {
    wf_err_raise("ValueError", "RPC: no object to hand out");
    return 0;
  }
  int32_t slot = wf_rpc_take_slot(h);
  if (slot < 0) return 0;
  TVMFFIObjectIncRef(obj);
  h->slots[slot].kind = WF_RPC_HANDLE_OBJECT;
  h->slots[slot].obj = obj;
  return wf_rpc_id(h, (uint32_t)slot);
}

uint64_t wf_rpc_handles_add_data(wf_rpc_handles* h, DLDevice dev, void* data, uint64_t nbytes,
                                 TVMFFIObject* owner) {
  int32_t slot = wf_rpc_take_slot(h);
  if (slot < 0) return 0;
  wf_rpc_handle* e = &h->slots[slot];
  if (owner != NULL) TVMFFIObjectIncRef(owner);
  e->kind = WF_RPC_HANDLE_DATA;
  e->obj = owner;
  e->data = data;
  e->device = dev;
  e->nbytes = nbytes;
  return wf_rpc_id(h, (uint32_t)slot);
}

static wf_rpc_handle* wf_rpc_find(wf_rpc_handles* h, uint64_t id) {
  uint64_t slot1 = id & 0xffffffffu;
  uint32_t gen = (uint32_t)(id >> 32);
  if (slot1 == 0 || slot1 > h->count || h->slots[slot1 - 1].generation != gen ||
      h->slots[slot1 - 1].kind == WF_RPC_HANDLE_FREE) {
    return NULL;
  }
  return &h->slots[slot1 - 1];
}

wf_rpc_handle* wf_rpc_handles_get(wf_rpc_handles* h, uint64_t id, wf_rpc_handle_kind kind) {
  const char* what = kind == WF_RPC_HANDLE_DATA ? "data" : "object";
  wf_rpc_handle* e = wf_rpc_find(h, id);
  if (e == NULL) {
    wf_err_raise("ValueError", "RPC: 0x%llx is not a live %s handle of this session",
                 (unsigned long long)id, what);
    return NULL;
  }
  if (e->kind != kind) {
    wf_err_raise("ValueError", "RPC: handle 0x%llx is not %s handle", (unsigned long long)id,
                 kind == WF_RPC_HANDLE_DATA ? "a data" : "an object");
    return NULL;
  }
  return e;
}

static void wf_rpc_drop(wf_rpc_handles* h, wf_rpc_handle* e, uint64_t id) {
  wf_rpc_release(e);
  int32_t slot = (int32_t)((id & 0xffffffffu) - 1);
  e->next_free = h->free_head;
  h->free_head = slot;
  h->live--;
}

int wf_rpc_handles_free(wf_rpc_handles* h, uint64_t id, wf_rpc_handle_kind kind) {
  wf_rpc_handle* e = wf_rpc_handles_get(h, id, kind);
  if (e == NULL) return -1;
  uint64_t linked = e->linked;
  wf_rpc_drop(h, e, id);
  /* the linked entry may already be gone (freed by the peer itself) */
  wf_rpc_handle* l = linked != 0 ? wf_rpc_find(h, linked) : NULL;
  if (l != NULL) wf_rpc_drop(h, l, linked);
  return 0;
}
