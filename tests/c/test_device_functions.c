/* A device backend made of Function objects, as the JS backends register. */
#include <webffi/device_api.h>

#include "harness.h"

static int allocs, frees, copies;

static int backend_alloc(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  CHECK_EQ_INT(n, 3);
  CHECK_EQ_INT(args[0].type_index, kTVMFFIDevice);
  CHECK_EQ_INT(args[0].v_device.device_type, kDLExtDev);
  ++allocs;
  void* data = calloc(1, (size_t)args[1].v_int64 + 1);
  *result = any_int((int64_t)(uintptr_t)data);
  return 0;
}

static int backend_free(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)n;
  (void)result;
  ++frees;
  free(args[1].v_ptr);
  return 0;
}

static int backend_copy(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  CHECK_EQ_INT(n, 8);
  ++copies;
  memcpy((char*)args[3].v_ptr + args[4].v_int64, (const char*)args[0].v_ptr + args[1].v_int64,
         (size_t)args[6].v_int64);
  return 0;
}

static int backend_sync(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  (void)result;
  return 0;
}

static int backend_alloc_zero(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  *result = any_int(0);
  return 0;
}

static TVMFFIObjectHandle make_fn(TVMFFISafeCallType fn) {
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, fn, NULL, &f) == 0);
  return f;
}

static void set_backend(TVMFFISafeCallType alloc) {
  TVMFFIObjectHandle fns[4] = {make_fn(alloc), make_fn(backend_free), make_fn(backend_copy),
                               make_fn(backend_sync)};
  TVMFFIAny args[5] = {any_int(kDLExtDev), any_obj(fns[0]), any_obj(fns[1]), any_obj(fns[2]),
                       any_obj(fns[3])},
            result;
  CHECK(call_global("webffi.SetDeviceAPI", args, 5, &result) == 0);
  for (int i = 0; i < 4; ++i) TVMFFIObjectDecRef(fns[i]);
}

static TVMFFIObjectHandle alloc_on(int32_t device_type, int64_t* shape) {
  DLTensor proto = {NULL, {(DLDeviceType)device_type, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == 0);
  return t;
}

void device_functions_backend_serves_tensors(void) {
  set_backend(backend_alloc);
  int64_t shape[1] = {3};
  TVMFFIObjectHandle host = alloc_on(kDLCPU, shape), dev = alloc_on(kDLExtDev, shape),
                     back = alloc_on(kDLCPU, shape);
  CHECK_EQ_INT(allocs, 1);
  float* in = (float*)((DLTensor*)((char*)host + sizeof(TVMFFIObject)))->data;
  in[0] = 1.5f, in[1] = -2.0f, in[2] = 8.0f;
  CHECK(WebFFITensorCopy(host, dev) == 0);
  CHECK(WebFFITensorCopy(dev, back) == 0);
  CHECK_EQ_INT(copies, 2);
  CHECK(memcmp(((DLTensor*)((char*)back + sizeof(TVMFFIObject)))->data, in, 12) == 0);
  TVMFFIObjectDecRef(dev);
  CHECK_EQ_INT(frees, 1);
  TVMFFIObjectDecRef(host);
  TVMFFIObjectDecRef(back);

  TVMFFIAny remove = any_int(kDLExtDev), result;
  CHECK(call_global("webffi.SetDeviceAPI", &remove, 1, &result) == 0);
  DLTensor proto = {NULL, {kDLExtDev, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == -1);
  CHECK_RAISED("ValueError", "No backend is registered for device type ext_dev (12)");
}

void device_functions_bad_handles_and_types(void) {
  set_backend(backend_alloc_zero);
  int64_t shape[1] = {3};
  DLTensor proto = {NULL, {kDLExtDev, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == -1);
  CHECK_RAISED("TypeError", "A device backend's alloc must return a non-zero int handle");
  TVMFFIAny remove = any_int(kDLExtDev), result;
  CHECK(call_global("webffi.SetDeviceAPI", &remove, 1, &result) == 0);
  TVMFFIAny cpu = any_int(kDLCPU);
  CHECK(call_global("webffi.SetDeviceAPI", &cpu, 1, &result) == -1);
  CHECK_RAISED("ValueError", "Invalid device type 1 for a device backend");
}
