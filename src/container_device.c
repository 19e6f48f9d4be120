/* ffi.ContainerFindFirstNonCPUDevice(value): the device of the first
 * tensor not on the CPU inside nested Arrays, Lists, Maps and Dicts (map
 * values only), or cpu:0. Bounded: nesting stops at WF_MAX_NESTING and each
 * container is searched once however many paths reach it. */
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "global_registry.h"
#include "map.h"
#include "memo.h"
#include "nesting.h"
#include "runtime_init.h"
#include "seq.h"
#include "tensor.h"

/* 1 found, 0 not, -1 too deep. */
static int wf_find_device(wf_memo* seen, const TVMFFIAny* v, int depth, DLDevice* out) {
  int32_t t = v->type_index;
  if (t == kTVMFFITensor) {
    const DLTensor* dl = wf_tensor_dl(v->v_obj);
    if (dl->device.device_type == kDLCPU) return 0;
    *out = dl->device;
    return 1;
  }
  if (t != kTVMFFIArray && t != kTVMFFIList && t != kTVMFFIMap && t != kTVMFFIDict) return 0;
  if (wf_memo_find(seen, v->v_obj, NULL) != NULL) return 0; /* searched, or being searched */
  if (depth >= WF_MAX_NESTING) {
    return wf_err_raise("ValueError",
                        "ffi.ContainerFindFirstNonCPUDevice: nesting deeper than %d levels",
                        WF_MAX_NESTING);
  }
  if (wf_memo_put(seen, v->v_obj, NULL) == NULL) return -1;
  if (t == kTVMFFIArray || t == kTVMFFIList) {
    for (int64_t i = 0; i < wf_seq_size(v->v_obj); ++i) {
      int rc = wf_find_device(seen, &wf_seq_data(v->v_obj)[i], depth + 1, out);
      if (rc != 0) return rc;
    }
    return 0;
  }
  int64_t pos = 0;
  for (wf_map_entry* e; (e = wf_map_next(v->v_obj, &pos)) != NULL;) {
    int rc = wf_find_device(seen, &e->value, depth + 1, out);
    if (rc != 0) return rc;
  }
  return 0;
}

static const char* const wf_find_types[] = {"Any"};
static const WebFFISignature wf_find_sig = {"ffi.ContainerFindFirstNonCPUDevice", 1, wf_find_types,
                                            "Device"};

static int wf_container_find_device(void* self, const TVMFFIAny* args, int32_t n,
                                    TVMFFIAny* result) {
  (void)self;
  if (WebFFICheckNumArgs(&wf_find_sig, n) != 0) return -1;
  DLDevice d = {kDLCPU, 0};
  wf_memo seen = {0};
  int rc = wf_find_device(&seen, &args[0], 0, &d);
  wf_memo_free(&seen);
  if (rc < 0) return -1;
  wf_any_set_none(result);
  result->type_index = kTVMFFIDevice;
  result->v_device = d;
  return 0;
}

int wf_container_device_register(void) {
  return wf_global_register("ffi.ContainerFindFirstNonCPUDevice", wf_container_find_device, NULL);
}
