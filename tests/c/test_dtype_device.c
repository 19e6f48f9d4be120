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
  CHECK_EQ_INT(d.lanes, (uint16_t)lanes);
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
  check_round_trip("", kDLOpaqueHandle, 0, 0);
  check_round_trip("float33", kDLFloat, 33, 1);
}

/* Parses `text` and checks the result and its canonical spelling. */
static void check_parse(const char* text, int code, int bits, int lanes, const char* canonical) {
  DLDataType d = parse(text);
  CHECK_EQ_INT(d.code, code);
  CHECK_EQ_INT(d.bits, bits);
  CHECK_EQ_INT(d.lanes, (uint16_t)lanes);
  TVMFFIAny out;
  CHECK(TVMFFIDataTypeToString(&d, &out) == 0);
  CHECK_EQ_STR(any_str(&out), canonical);
  if (out.type_index == kTVMFFIStr) TVMFFIObjectDecRef(out.v_obj);
}

void dtype_small_floats_round_trip(void) {
  check_round_trip("float8_e3m4", kDLFloat8_e3m4, 8, 1);
  check_round_trip("float8_e4m3", kDLFloat8_e4m3, 8, 1);
  check_round_trip("float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8, 1);
  check_round_trip("float8_e4m3fn", kDLFloat8_e4m3fn, 8, 1);
  check_round_trip("float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8, 1);
  check_round_trip("float8_e5m2", kDLFloat8_e5m2, 8, 1);
  check_round_trip("float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8, 1);
  check_round_trip("float8_e8m0fnu", kDLFloat8_e8m0fnu, 8, 1);
  check_round_trip("float6_e2m3fn", kDLFloat6_e2m3fn, 6, 1);
  check_round_trip("float6_e3m2fn", kDLFloat6_e3m2fn, 6, 1);
  check_round_trip("float4_e2m1fn", kDLFloat4_e2m1fn, 4, 1);
  check_round_trip("float8_e4m3fnx4", kDLFloat8_e4m3fn, 8, 4);
  check_round_trip("float4_e2m1fnx2", kDLFloat4_e2m1fn, 4, 2);
  check_parse("float4_e2m1fn_x2", kDLFloat4_e2m1fn, 4, 2, "float4_e2m1fnx2");
  /* float8 without an underscore is a float of 8 bits */
  check_round_trip("float8", kDLFloat, 8, 1);
}

void dtype_aliases_parse_to_full_names(void) {
  check_parse("i32", kDLInt, 32, 1, "int32");
  check_parse("i8x4", kDLInt, 8, 4, "int8x4");
  check_parse("u8", kDLUInt, 8, 1, "uint8");
  check_parse("f32", kDLFloat, 32, 1, "float32");
  check_parse("f16x2", kDLFloat, 16, 2, "float16x2");
  check_parse("bf16", kDLBfloat, 16, 1, "bfloat16");
  check_parse("fp8_e4m3fn", kDLFloat8_e4m3fn, 8, 1, "float8_e4m3fn");
  check_parse("f8_e5m2", kDLFloat8_e5m2, 8, 1, "float8_e5m2");
  check_parse("fp6_e3m2fn", kDLFloat6_e3m2fn, 6, 1, "float6_e3m2fn");
  check_parse("f6_e2m3fn", kDLFloat6_e2m3fn, 6, 1, "float6_e2m3fn");
  check_parse("fp4_e2m1fn", kDLFloat4_e2m1fn, 4, 1, "float4_e2m1fn");
  check_parse("f4_e2m1fn", kDLFloat4_e2m1fn, 4, 1, "float4_e2m1fn");
  check_parse("int32x1", kDLInt, 32, 1, "int32");
  check_parse("void", kDLOpaqueHandle, 0, 0, "");
  check_parse("handle32", kDLOpaqueHandle, 32, 1, "handle");
}

void dtype_scalable_vectors_and_bool_lanes(void) {
  check_round_trip("int32xvscalex4", kDLInt, 32, -4);
  check_round_trip("float16xvscalex8", kDLFloat, 16, -8);
  check_parse("i8xvscalex16", kDLInt, 8, -16, "int8xvscalex16");
  check_round_trip("boolx4", kDLBool, 8, 4);
  check_round_trip("bool1", kDLBool, 1, 1);
  check_round_trip("bool1x8", kDLBool, 1, 8);
  check_parse("bool8x4", kDLBool, 8, 4, "boolx4");
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
  {
    DLDataType unknown = {18, 8, 1};
    TVMFFIAny out;
    CHECK(TVMFFIDataTypeToString(&unknown, &out) == -1);
    CHECK_RAISED("ValueError", "unknown dtype code 18 (bits 8, lanes 1)");
  }
  check_bad_dtype("float32x0", "unknown dtype `float32x0`");
  check_bad_dtype("int256", "unknown dtype `int256`");
  check_bad_dtype("int0", "unknown dtype `int0`"); /* a width of 0 is no width */
  check_bad_dtype("float0", "unknown dtype `float0`");
  check_bad_dtype("uint00x4", "unknown dtype `uint00x4`");
  check_bad_dtype("i", "unknown dtype `i`");
  check_bad_dtype("float8_e4m3fnq", "unknown dtype `float8_e4m3fnq`");
  check_bad_dtype("float8_e9m9", "unknown dtype `float8_e9m9`");
  check_bad_dtype("fp8_e4m3fnxvscalex4", "unknown dtype `fp8_e4m3fnxvscalex4`");
  check_bad_dtype("int32xvscalex0", "unknown dtype `int32xvscalex0`");
  check_bad_dtype("int32xvscale", "unknown dtype `int32xvscale`");
  check_bad_dtype("float32x65536", "unknown dtype `float32x65536`");
  check_bad_dtype("int32x4y", "unknown dtype `int32x4y`");
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
