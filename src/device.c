/* Device type names, as printed and parsed upstream. */
#include "device.h"

#include <string.h>

#include "error.h"

static const struct {
  int32_t type;
  const char* name;
} wf_device_names[] = {
    {kDLCPU, "cpu"},         {kDLCUDA, "cuda"},          {kDLCUDAHost, "cuda_host"},
    {kDLOpenCL, "opencl"},   {kDLVulkan, "vulkan"},      {kDLMetal, "metal"},
    {kDLVPI, "vpi"},         {kDLROCM, "rocm"},          {kDLROCMHost, "rocm_host"},
    {kDLExtDev, "ext_dev"},  {kDLCUDAManaged, "cuda_managed"}, {kDLOneAPI, "oneapi"},
    {kDLWebGPU, "webgpu"},   {kDLHexagon, "hexagon"},    {kDLMAIA, "maia"},
    {kDLTrn, "trn"},
};
#define WF_DEVICE_COUNT (sizeof(wf_device_names) / sizeof(wf_device_names[0]))

const char* wf_device_type_name(int32_t device_type) {
  for (size_t i = 0; i < WF_DEVICE_COUNT; ++i) {
    if (wf_device_names[i].type == device_type) return wf_device_names[i].name;
  }
  return NULL;
}

int wf_device_from_string(const char* s, size_t n, DLDevice* out) {
  const char* colon = memchr(s, ':', n);
  size_t name_len = colon != NULL ? (size_t)(colon - s) : n;
  int64_t id = 0;
  if (colon != NULL) {
    const char* p = colon + 1;
    size_t digits = n - name_len - 1;
    if (digits == 0 || digits > 9) goto unknown;
    for (size_t i = 0; i < digits; ++i) {
      if (p[i] < '0' || p[i] > '9') goto unknown;
      id = id * 10 + (p[i] - '0');
    }
  }
  for (size_t i = 0; i < WF_DEVICE_COUNT; ++i) {
    const char* name = wf_device_names[i].name;
    if (strlen(name) == name_len && memcmp(name, s, name_len) == 0) {
      out->device_type = (DLDeviceType)wf_device_names[i].type;
      out->device_id = (int32_t)id;
      return 0;
    }
  }
unknown:
  return wf_err_raise("ValueError", "Unknown device: %.*s", (int)n, s);
}

void wf_device_format(DLDevice d, wf_buf* out) {
  const char* name = wf_device_type_name((int32_t)d.device_type);
  if (name != NULL) {
    wf_buf_printf(out, "%s:%d", name, (int)d.device_id);
  } else {
    /* as upstream names a type it does not know */
    wf_buf_printf(out, "unknown:%d", (int)d.device_id);
  }
}

void wf_device_for_each_name(void (*fn)(int32_t device_type, const char* name, void* ctx),
                             void* ctx) {
  for (size_t i = 0; i < WF_DEVICE_COUNT; ++i) fn(wf_device_names[i].type, wf_device_names[i].name, ctx);
}
