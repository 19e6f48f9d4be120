/* DataType and Device text forms. */
#include "../../src/buffer.h"
#include "../../src/device.h"
#include "harness.h"

static DLDataType parse(const char* s) {
  TVMFFIByteArray in = {s, strlen(s)};
  DLDataType d = {0, 0, 0};
  if (TVMFFIDataTypeFromString(&in, &d) != 0) {
    fprintf(stderr, "parsing %s failed\n", s);
    exit(1);
  }
  return d;
}

static void check_round_trip(const char* s, int code, int bits, int lanes) {
  DLDataType d = parse(s);
  CHECK_EQ_INT(d.code, code);
  CHECK_EQ_INT(d.bits, bits);
  CHECK_EQ_INT(d.lanes, lanes);
  TVMFFIAny out;
  CHECK(TVMFFIDataTypeToString(&d, &out) == 0);
  CHECK_EQ_STR(any_str(&out), s);
  if (out.type_index == kTVMFFIStr) TVMFFIObjectDecRef(out.v_obj);
}

void dtype_round_trips(void) {
  check_round_trip("int32", kDLInt, 32, 1);
  check_round_trip("uint8", kDLUInt, 8, 1);
  check_round_trip("float16", kDLFloat, 16, 1);
  check_round_trip("bfloat16", kDLBfloat, 16, 1);
  check_round_trip("float32x4", kDLFloat, 32, 4);
  check_round_trip("bool", kDLBool, 8, 1);
  check_round_trip("handle", kDLOpaqueHandle, 64, 1);
  check_round_trip("void", kDLOpaqueHandle, 0, 0);
  check_round_trip("float33", kDLFloat, 33, 1);
}

void dtype_missing_width_means_32(void) {
  DLDataType d = parse("int");
  CHECK_EQ_INT(d.code, kDLInt);
  CHECK_EQ_INT(d.bits, 32);
  d = parse("float");
  CHECK_EQ_INT(d.code, kDLFloat);
  CHECK_EQ_INT(d.bits, 32);
}

static void check_bad_dtype(const char* s, const char* message) {
  TVMFFIByteArray in = {s, strlen(s)};
  DLDataType d;
  CHECK(TVMFFIDataTypeFromString(&in, &d) == -1);
  CHECK_RAISED("ValueError", message);
}

void dtype_invalid_strings_are_value_errors(void) {
  check_bad_dtype("notadtype", "unknown dtype `notadtype`");
  check_bad_dtype("float32x0", "unknown dtype `float32x0`");
  check_bad_dtype("int256", "unknown dtype `int256`");
  check_bad_dtype("", "unknown dtype ``");
  check_bad_dtype("int32x", "unknown dtype `int32x`");
  check_bad_dtype("float-1", "unknown dtype `float-1`");
}

void device_parse_and_print(void) {
  DLDevice d;
  CHECK(wf_device_from_string("webgpu:0", 8, &d) == 0);
  CHECK_EQ_INT(d.device_type, kDLWebGPU);
  CHECK_EQ_INT(d.device_id, 0);
  CHECK(wf_device_from_string("cuda:3", 6, &d) == 0);
  CHECK_EQ_INT(d.device_type, kDLCUDA);
  CHECK_EQ_INT(d.device_id, 3);
  CHECK(wf_device_from_string("cpu", 3, &d) == 0);
  CHECK_EQ_INT(d.device_type, kDLCPU);
  wf_buf b = {0};
  wf_device_format((DLDevice){kDLWebGPU, 0}, &b);
  CHECK_EQ_STR(b.data, "webgpu:0");
  wf_buf_reset(&b);
  wf_device_format((DLDevice){kDLCUDAHost, 1}, &b);
  CHECK_EQ_STR(b.data, "cuda_host:1");
  wf_buf_free(&b);
}

void device_unknown_name_is_value_error(void) {
  DLDevice d;
  CHECK(wf_device_from_string("tpu", 3, &d) == -1);
  CHECK_RAISED("ValueError", "Unknown device: tpu");
  CHECK(wf_device_from_string("cpu:x", 5, &d) == -1);
  CHECK_RAISED("ValueError", "Unknown device: cpu:x");
}
