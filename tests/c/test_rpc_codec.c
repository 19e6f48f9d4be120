/* The TVM RPC packet codec against TVM's own recorded bytes, and against
 * malformed input. */
#include <string.h>

#include "harness.h"
#include "test_rpc_capture.h"

static uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

void rpc_codec_capture_round_trips_byte_for_byte(void) {
  capture c;
  capture_load(&c);
  int client = 0, server = 0;
  for (size_t i = 0; i < c.count; ++i) {
    const capture_line* l = &c.lines[i];
    wf_rpc_buf out = {0};
    if (i < 2) { /* the handshake: magic or code, key length, key */
      int32_t code;
      const char* key;
      size_t key_len;
      CHECK(wf_rpc_handshake_decode(l->bytes, l->size, &code, &key, &key_len) == 0);
      CHECK_EQ_INT(code, WEBFFI_RPC_MAGIC);
      CHECK(wf_rpc_handshake_encode(&out, code, key, key_len) == 0);
    } else {
      CHECK(l->size >= 12);
      CHECK_EQ_INT(le64(l->bytes), l->size - 8);
      wf_rpc_packet p;
      if (wf_rpc_packet_decode(l->bytes + 8, l->size - 8, &p) != 0) {
        fprintf(stderr, "capture line %zu does not decode\n", i + 1);
        exit(1);
      }
      CHECK(wf_rpc_packet_encode(&out, &p) == 0);
      wf_rpc_packet_clear(&p);
    }
    if (out.size != l->size || memcmp(out.data, l->bytes, l->size) != 0) {
      fprintf(stderr, "capture line %zu re-encodes differently\n", i + 1);
      exit(1);
    }
    wf_rpc_buf_free(&out);
    if (i >= 2 && l->to_server) ++client;
    if (i >= 2 && !l->to_server) ++server;
  }
  /* the transcript's count: packets after the handshake */
  CHECK_EQ_INT(client, 23);
  CHECK_EQ_INT(server, 22);
  capture_free(&c);
}

static void decode_line(const capture* c, size_t line, wf_rpc_packet* p) {
  const capture_line* l = &c->lines[line - 1];
  CHECK(wf_rpc_packet_decode(l->bytes + 8, l->size - 8, p) == 0);
}

void rpc_codec_capture_values(void) {
  capture c;
  capture_load(&c);
  wf_rpc_packet p;
  decode_line(&c, 3, &p); /* kInitServer "0.8.0", no constructor */
  CHECK_EQ_INT(p.code, kWebFFIRPCInitServer);
  CHECK_EQ_INT(p.version.size, 5);
  CHECK(memcmp(p.version.data, "0.8.0", 5) == 0);
  CHECK_EQ_INT(p.num_args, 0);
  wf_rpc_packet_clear(&p);
  decode_line(&c, 7, &p); /* kGetGlobalFunc "ffi.Array" */
  CHECK_EQ_INT(p.code, kWebFFIRPCGetGlobalFunc);
  CHECK_EQ_INT(p.args[0].type_index, kTVMFFIRawStr);
  CHECK_EQ_STR(p.args[0].v_c_str, "ffi.Array");
  wf_rpc_packet_clear(&p);
  decode_line(&c, 11, &p); /* kCallFunc(Array, 1, 2, 3) */
  CHECK_EQ_INT(p.code, kWebFFIRPCCallFunc);
  CHECK(p.handle == 0x55fad091cf10ull);
  CHECK_EQ_INT(p.num_args, 3);
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ_INT(p.args[i].type_index, kTVMFFIInt);
    CHECK_EQ_INT(p.args[i].v_int64, i + 1);
  }
  wf_rpc_packet_clear(&p);
  decode_line(&c, 12, &p); /* [Int 71 (ffi.Array), OpaquePtr] */
  CHECK_EQ_INT(p.num_args, 2);
  CHECK_EQ_INT(p.args[0].v_int64, kTVMFFIArray);
  CHECK_EQ_INT(p.args[1].type_index, kTVMFFIOpaquePtr);
  CHECK(p.args[1].v_uint64 == 0x7fc850000f10ull);
  wf_rpc_packet_clear(&p);
  decode_line(&c, 13, &p); /* an RPCObjectRef argument */
  CHECK_EQ_INT(p.args[0].type_index, WF_RPC_OBJECT_REF_INDEX);
  const wf_rpc_object* o = (const wf_rpc_object*)p.args[0].v_ptr;
  CHECK_EQ_INT(o->type_index, WF_RPC_OBJECT_REF_INDEX);
  CHECK(o->handle == 0x7fc850000f10ull);
  wf_rpc_packet_clear(&p);
  decode_line(&c, 18, &p); /* kException, message only */
  CHECK_EQ_INT(p.code, kWebFFIRPCException);
  CHECK_EQ_STR(p.args[0].v_c_str, "Index 100 out of bounds 3");
  wf_rpc_packet_clear(&p);
  decode_line(&c, 19, &p); /* kDevAllocDataWithScope(float32[4] on cpu, None) */
  CHECK_EQ_INT(p.args[0].type_index, kTVMFFIDLTensorPtr);
  const wf_rpc_tensor* t = (const wf_rpc_tensor*)p.args[0].v_ptr;
  CHECK_EQ_INT(t->t.device.device_type, kDLCPU);
  CHECK_EQ_INT(t->t.ndim, 1);
  CHECK_EQ_INT(t->t.shape[0], 4);
  CHECK_EQ_INT(t->t.dtype.code, kDLFloat);
  CHECK_EQ_INT(t->t.dtype.bits, 32);
  CHECK_EQ_INT(p.args[1].type_index, kTVMFFINone);
  wf_rpc_packet_clear(&p);
  decode_line(&c, 25, &p); /* kCopyToRemote: tensor, nbytes, data */
  CHECK_EQ_INT(p.code, kWebFFIRPCCopyToRemote);
  CHECK(p.tensor.data == 0x7fc850008600ull);
  CHECK_EQ_INT(p.nbytes, 16);
  float f[4];
  memcpy(f, p.data.data, 16);
  CHECK(f[0] == 1.5f && f[3] == 4.5f);
  wf_rpc_packet_clear(&p);
  decode_line(&c, 32, &p); /* kCopyAck: the raw data */
  CHECK_EQ_INT(p.code, kWebFFIRPCCopyAck);
  CHECK_EQ_INT(p.data.size, 16);
  wf_rpc_packet_clear(&p);
  capture_free(&c);
}

/* Expects decoding to fail with a ValueError whose message contains `part`. */
static void expect_reject(const uint8_t* body, size_t size, const char* part) {
  wf_rpc_packet p;
  CHECK(wf_rpc_packet_decode(body, size, &p) == -1);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  TVMFFIErrorCell* cell = (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  CHECK_EQ_STR(cell->kind.data, "ValueError");
  if (strstr(cell->message.data, part) == NULL) {
    fprintf(stderr, "message \"%s\" lacks \"%s\"\n", cell->message.data, part);
    exit(1);
  }
  TVMFFIObjectDecRef(err);
}

void rpc_codec_every_truncation_is_value_error(void) {
  capture c;
  capture_load(&c);
  int checked = 0;
  for (size_t i = 2; i < c.count; ++i) {
    const uint8_t* body = c.lines[i].bytes + 8;
    size_t size = c.lines[i].size - 8;
    if (body[0] == kWebFFIRPCCopyAck) continue; /* its body is "the rest" */
    for (size_t cut = 0; cut < size; ++cut) {
      expect_reject(body, cut, cut < 4 ? "truncated" : "");
      ++checked;
    }
    /* and one byte too many */
    uint8_t* longer = (uint8_t*)malloc(size + 1);
    CHECK(longer != NULL);
    memcpy(longer, body, size);
    longer[size] = 0;
    expect_reject(longer, size + 1, "trailing");
    free(longer);
  }
  CHECK(checked > 500);
  capture_free(&c);
}

void rpc_codec_rejects_hostile_fields(void) {
  /* unknown code */
  uint8_t unknown[] = {99, 0, 0, 0};
  expect_reject(unknown, sizeof(unknown), "unknown code 99");
  uint8_t none_code[] = {0, 0, 0, 0};
  expect_reject(none_code, sizeof(none_code), "unknown code 0");
  /* a string claiming 2^63 bytes */
  uint8_t huge_str[] = {9, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 'a'};
  expect_reject(huge_str, sizeof(huge_str), "a string needs 9223372036854775808 bytes, 1 are left");
  /* an argument count far beyond the bytes */
  uint8_t many[] = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0};
  expect_reject(many, sizeof(many), "argument count 2147483647 is impossible");
  uint8_t negative[] = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  expect_reject(negative, sizeof(negative), "argument count -1");
  /* type index 13 (not carried), and a legacy type code layout */
  uint8_t bad_type[] = {4, 0, 0, 0, 1, 0, 0, 0, 13, 0, 0, 0};
  expect_reject(bad_type, sizeof(bad_type), "type index 13");
  /* an object whose inner index is a Tensor */
  uint8_t bad_obj[] = {4, 0, 0, 0, 1, 0, 0, 0, 70, 0, 0, 0, 70, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  expect_reject(bad_obj, sizeof(bad_obj), "only RPCObjectRef");
  /* a tensor of ndim 1000, and of negative ndim */
  uint8_t ndim[] = {7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
                    0xe8, 3, 0, 0, 2, 32, 1, 0};
  expect_reject(ndim, sizeof(ndim), "ndim 1000");
  ndim[20] = 0xff, ndim[21] = 0xff, ndim[22] = 0xff, ndim[23] = 0xff;
  expect_reject(ndim, sizeof(ndim), "ndim -1");
  /* a copy whose byte count exceeds the packet */
  uint8_t copy[] = {7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    2, 32, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                    0xff, 0xff};
  expect_reject(copy, sizeof(copy), "the copied data needs 18446744073709551615 bytes");
  /* a raw string holding a NUL */
  uint8_t nul[] = {9, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'a', 0};
  expect_reject(nul, sizeof(nul), "NUL byte");
  /* handshake: a key longer than the bytes */
  int32_t code;
  const char* key;
  size_t key_len;
  uint8_t hs[] = {0x71, 0xf2, 0x0f, 0, 100, 0, 0, 0, 'c'};
  CHECK(wf_rpc_handshake_decode(hs, sizeof(hs), &code, &key, &key_len) == -1);
  CHECK_RAISED("ValueError", "RPC handshake packet is truncated: the key needs 100 bytes, 1 are left");
}

void rpc_codec_every_value_kind_round_trips(void) {
  int64_t shape[2] = {2, 3};
  wf_rpc_tensor t = {0x1234, {NULL, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 8}};
  TVMFFIByteArray bytes = {"a\0b", 3};
  wf_rpc_object ref = {WF_RPC_OBJECT_REF_INDEX, 0x99, {NULL, 0}};
  wf_rpc_object str = {kTVMFFIStr, 0, {"hello world", 11}};
  TVMFFIAny v[12];
  memset(v, 0, sizeof(v));
  v[0].type_index = kTVMFFINone;
  v[1] = any_int(-5);
  v[2] = any_bool(1);
  v[3] = any_float(2.5);
  v[4].type_index = kTVMFFIOpaquePtr, v[4].v_uint64 = 0xfeedface12345678ull;
  v[5].type_index = kTVMFFIDataType, v[5].v_dtype.code = kDLInt, v[5].v_dtype.bits = 8,
  v[5].v_dtype.lanes = 4;
  v[6].type_index = kTVMFFIDevice, v[6].v_device.device_type = (DLDeviceType)15,
  v[6].v_device.device_id = 1;
  v[7].type_index = kTVMFFIDLTensorPtr, v[7].v_ptr = &t;
  v[8] = any_cstr("name");
  v[9].type_index = kTVMFFIByteArrayPtr, v[9].v_ptr = &bytes;
  v[10].type_index = WF_RPC_OBJECT_REF_INDEX, v[10].v_ptr = &ref;
  v[11].type_index = kTVMFFISmallStr, v[11].v_ptr = &str;
  wf_rpc_buf b = {0};
  encode_request(&b, kWebFFIRPCReturn, v, 12);
  wf_rpc_packet p;
  CHECK(wf_rpc_packet_decode(b.data + 8, b.size - 8, &p) == 0);
  CHECK_EQ_INT(p.num_args, 12);
  for (int i = 0; i < 12; ++i) CHECK_EQ_INT(p.args[i].type_index, v[i].type_index);
  CHECK_EQ_INT(p.args[1].v_int64, -5);
  CHECK(p.args[3].v_float64 == 2.5);
  CHECK(p.args[4].v_uint64 == 0xfeedface12345678ull);
  CHECK_EQ_INT(p.args[5].v_dtype.lanes, 4);
  CHECK_EQ_INT(p.args[6].v_device.device_type, 15);
  const wf_rpc_tensor* pt = (const wf_rpc_tensor*)p.args[7].v_ptr;
  CHECK(pt->data == 0x1234 && pt->t.ndim == 2 && pt->t.shape[1] == 3 && pt->t.byte_offset == 8);
  CHECK_EQ_STR(p.args[8].v_c_str, "name");
  const TVMFFIByteArray* pb = (const TVMFFIByteArray*)p.args[9].v_ptr;
  CHECK(pb->size == 3 && memcmp(pb->data, "a\0b", 3) == 0);
  CHECK(((const wf_rpc_object*)p.args[10].v_ptr)->handle == 0x99);
  const wf_rpc_object* ps = (const wf_rpc_object*)p.args[11].v_ptr;
  CHECK(ps->type_index == kTVMFFIStr && ps->bytes.size == 11);
  wf_rpc_buf again = {0};
  CHECK(wf_rpc_packet_encode(&again, &p) == 0);
  CHECK(again.size == b.size && memcmp(again.data, b.data, b.size) == 0);
  wf_rpc_packet_clear(&p);
  wf_rpc_buf_free(&again);
  wf_rpc_buf_free(&b);
  /* values the wire cannot carry */
  TVMFFIAny bad = {0};
  bad.type_index = kTVMFFIObjectRValueRef;
  CHECK(wf_rpc_args_encode(&b, &bad, 1) == -1);
  CHECK_RAISED("ValueError", "RPC: type index 10 cannot be sent");
  wf_rpc_buf_free(&b);
}
