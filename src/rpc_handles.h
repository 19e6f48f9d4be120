/* The handles an RPC peer holds: ids it sees, entries only we dereference.
 * An id carries its slot and the slot's generation, so a freed or reused
 * slot never answers to an old id, and 0 is never an id. */
#ifndef WEBFFI_SRC_RPC_HANDLES_H_
#define WEBFFI_SRC_RPC_HANDLES_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

typedef enum {
  WF_RPC_HANDLE_FREE = 0,
  WF_RPC_HANDLE_OBJECT = 1, /* a function or object: we hold a reference */
  WF_RPC_HANDLE_DATA = 2    /* device memory: allocated for the peer, or a
                               view into the tensor object `owner` */
} wf_rpc_handle_kind;

typedef struct {
  uint32_t generation;
  uint8_t kind;
  int32_t next_free;
  TVMFFIObject* obj;   /* OBJECT: the object; DATA: the owning tensor or NULL */
  void* data;          /* DATA: what the device API returned */
  DLDevice device;     /* DATA */
  uint64_t nbytes;     /* DATA */
  uint64_t linked;     /* OBJECT: a DATA id freed with it (a tensor's data) */
  uint8_t counted;     /* DATA: allocated for the peer, counted against its limit */
} wf_rpc_handle;

typedef struct {
  wf_rpc_handle* slots;
  uint32_t count;
  uint32_t capacity;
  int32_t free_head;
  uint32_t live;
  uint32_t max_live;
} wf_rpc_handles;

void wf_rpc_handles_init(wf_rpc_handles* h, uint32_t max_live);
/* Releases every entry (objects decref'd, data freed through its device API). */
void wf_rpc_handles_clear(wf_rpc_handles* h);
/* A new id for obj (a reference is taken), or 0 with an error raised. */
uint64_t wf_rpc_handles_add_object(wf_rpc_handles* h, TVMFFIObject* obj);
/* A new id for device memory; `owner` (may be NULL) is a tensor whose
 * reference keeps the memory alive, else the memory is ours to free. */
uint64_t wf_rpc_handles_add_data(wf_rpc_handles* h, DLDevice dev, void* data, uint64_t nbytes,
                                 TVMFFIObject* owner);
/* The entry for id when it is of `kind`, or NULL with ValueError raised. */
wf_rpc_handle* wf_rpc_handles_get(wf_rpc_handles* h, uint64_t id, wf_rpc_handle_kind kind);
/* Drops an entry (and the entry linked to it). 0, or -1 with ValueError
 * raised (unknown id). */
int wf_rpc_handles_free(wf_rpc_handles* h, uint64_t id, wf_rpc_handle_kind kind);

#endif /* WEBFFI_SRC_RPC_HANDLES_H_ */
