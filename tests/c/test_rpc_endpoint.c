/* The TVM RPC server endpoint: TVM's recorded client replayed against it,
 * hostile input, deferred replies and the device syscalls. */
#include <string.h>

#include <tvm/ffi/extra/c_env_api.h>
#include <webffi/device_api.h>
#include <webffi/typed_call.h>
#include <webffi/webffi.h>

#include "harness.h"
#include "test_rpc_capture.h"

/* ------------------------------------------------------------ helpers */
static const char* const kAllow[] = {"ffi.Array*"};

static WebFFIRPCEndpoint* create(sink* s, WebFFIRPCEndpointConfig* cfg) {
  memset(s, 0, sizeof(*s));
  cfg->key = "webffi";
  cfg->send = sink_send;
  cfg->send_ctx = s;
  if (cfg->allow_list == NULL && cfg->allow == NULL) {
    cfg->allow_list = kAllow;
    cfg->allow_count = 1;
  }
  WebFFIRPCEndpoint* ep = WebFFIRPCEndpointCreate(cfg);
  CHECK(ep != NULL);
  return ep;
}

static void feed_ok(WebFFIRPCEndpoint* ep, const wf_rpc_buf* b) {
  int rc = WebFFIRPCEndpointFeed(ep, b->data, b->size);
  if (rc != WEBFFI_RPC_OPEN) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    fprintf(stderr, "Feed returned %d: %s\n", rc,
            err ? ((TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject)))->message.data : "");
    exit(1);
  }
}

static void handshake(WebFFIRPCEndpoint* ep, sink* s, const char* key) {
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_handshake_encode(&b, WEBFFI_RPC_MAGIC, key, strlen(key)) == 0);
  feed_ok(ep, &b);
  wf_rpc_buf_free(&b);
  static const uint8_t ok[] = {0x71, 0xf2, 0x0f, 0, 13, 0, 0, 0, 's', 'e', 'r', 'v', 'e', 'r', ':',
                               'w', 'e', 'b', 'f', 'f', 'i'};
  CHECK(s->bytes.size == sizeof(ok) && memcmp(s->bytes.data, ok, sizeof(ok)) == 0);
  s->bytes.size = 0;
}

static void init_server(WebFFIRPCEndpoint* ep, sink* s, const char* version) {
  wf_rpc_packet p;
  memset(&p, 0, sizeof(p));
  p.code = kWebFFIRPCInitServer;
  p.version.data = version;
  p.version.size = strlen(version);
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_packet_encode(&b, &p) == 0);
  feed_ok(ep, &b);
  wf_rpc_buf_free(&b);
  sink_pop_packet(s, &p);
  CHECK_EQ_INT(p.code, kWebFFIRPCReturn);
  CHECK_EQ_INT(p.args[0].type_index, kTVMFFINone);
  wf_rpc_packet_clear(&p);
}

static WebFFIRPCEndpoint* open_session(sink* s, WebFFIRPCEndpointConfig* cfg) {
  WebFFIRPCEndpoint* ep = create(s, cfg);
  handshake(ep, s, "client:webffi");
  init_server(ep, s, "0.8.0");
  return ep;
}

/* Sends one request and decodes the one reply. */
static void request(WebFFIRPCEndpoint* ep, sink* s, wf_rpc_packet* req, wf_rpc_packet* reply) {
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_packet_encode(&b, req) == 0);
  feed_ok(ep, &b);
  wf_rpc_buf_free(&b);
  sink_pop_packet(s, reply);
  CHECK_EQ_INT(s->bytes.size, 0);
}

static void syscall(WebFFIRPCEndpoint* ep, sink* s, int32_t code, TVMFFIAny* args, int32_t n,
                    wf_rpc_packet* reply) {
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  req.code = code;
  req.args = args;
  req.num_args = n;
  request(ep, s, &req, reply);
}

static uint64_t get_global(WebFFIRPCEndpoint* ep, sink* s, const char* name) {
  TVMFFIAny a = any_cstr(name);
  wf_rpc_packet r;
  syscall(ep, s, kWebFFIRPCGetGlobalFunc, &a, 1, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCReturn);
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFIOpaquePtr);
  uint64_t h = r.args[0].v_uint64;
  wf_rpc_packet_clear(&r);
  return h;
}

static void call(WebFFIRPCEndpoint* ep, sink* s, uint64_t f, TVMFFIAny* args, int32_t n,
                 wf_rpc_packet* reply) {
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  req.code = kWebFFIRPCCallFunc;
  req.handle = f;
  req.args = args;
  req.num_args = n;
  request(ep, s, &req, reply);
}

static void expect_exception(wf_rpc_packet* r, const char* part) {
  CHECK_EQ_INT(r->code, kWebFFIRPCException);
  CHECK_EQ_INT(r->num_args, 1);
  CHECK_EQ_INT(r->args[0].type_index, kTVMFFIRawStr);
  if (strstr(r->args[0].v_c_str, part) == NULL) {
    fprintf(stderr, "exception \"%s\" lacks \"%s\"\n", r->args[0].v_c_str, part);
    exit(1);
  }
  wf_rpc_packet_clear(r);
}

static void expect_none(wf_rpc_packet* r) {
  CHECK_EQ_INT(r->code, kWebFFIRPCReturn);
  CHECK_EQ_INT(r->num_args, 1);
  CHECK_EQ_INT(r->args[0].type_index, kTVMFFINone);
  wf_rpc_packet_clear(r);
}

/* Moves the raised error out; checks kind and a part of the message. */
static void expect_raised_part(const char* kind, const char* part) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  TVMFFIErrorCell* cell = (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  CHECK_EQ_STR(cell->kind.data, kind);
  if (strstr(cell->message.data, part) == NULL) {
    fprintf(stderr, "raised \"%s\" lacks \"%s\"\n", cell->message.data, part);
    exit(1);
  }
  TVMFFIObjectDecRef(err);
}

static TVMFFIAny any_handle(uint64_t h) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIOpaquePtr;
  a.v_uint64 = h;
  return a;
}

static TVMFFIAny any_device(int type, int id) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIDevice;
  a.v_device.device_type = (DLDeviceType)type;
  a.v_device.device_id = id;
  return a;
}

/* The runtime still answers after whatever the peer did. */
static void runtime_still_works(void) {
  TVMFFIAny args[2] = {any_int(7), any_int(8)}, arr = any_none(), size = any_none();
  CHECK(call_global("ffi.Array", args, 2, &arr) == 0);
  CHECK(call_global("ffi.ArraySize", &arr, 1, &size) == 0);
  CHECK_EQ_INT(size.v_int64, 2);
  release(&arr);
}

/* -------------------------------------------------------------- replay */
typedef struct {
  uint64_t recorded[64];
  uint64_t ours[64];
  int n;
} handle_map;

static uint64_t map_handle(const handle_map* m, uint64_t recorded) {
  if (recorded == 0) return 0;
  for (int i = 0; i < m->n; ++i) {
    if (m->recorded[i] == recorded) return m->ours[i];
  }
  fprintf(stderr, "recorded handle 0x%llx was never returned\n", (unsigned long long)recorded);
  exit(1);
}

static void remap_request(const handle_map* m, wf_rpc_packet* p) {
  if (p->code == kWebFFIRPCCallFunc) p->handle = map_handle(m, p->handle);
  if (p->code == kWebFFIRPCCopyToRemote || p->code == kWebFFIRPCCopyFromRemote) {
    p->tensor.data = map_handle(m, p->tensor.data);
  }
  for (int32_t i = 0; i < p->num_args; ++i) {
    TVMFFIAny* a = &p->args[i];
    if (a->type_index == kTVMFFIOpaquePtr) {
      a->v_uint64 = map_handle(m, a->v_uint64);
    } else if (a->type_index == kTVMFFIDLTensorPtr) {
      wf_rpc_tensor* t = (wf_rpc_tensor*)a->v_ptr;
      t->data = map_handle(m, t->data);
    } else if (a->type_index == WF_RPC_OBJECT_REF_INDEX) {
      wf_rpc_object* o = (wf_rpc_object*)a->v_ptr;
      o->handle = map_handle(m, o->handle);
    }
  }
}

/* Same code, same argument type indices, same values where deterministic;
 * handles returned are learned into the map. */
static void compare_reply(size_t line, const wf_rpc_packet* want, const wf_rpc_packet* got,
                          handle_map* m, int served_here) {
  if (served_here) {
    /* a server function TVM's tvm_rpc lacks (handle 0 there): ours has it */
    CHECK(want->code == kWebFFIRPCReturn && got->code == kWebFFIRPCReturn);
    CHECK(want->args[0].v_uint64 == 0 && got->args[0].type_index == kTVMFFIOpaquePtr &&
          got->args[0].v_uint64 != 0);
    return;
  }
  if (want->code != got->code || want->num_args != got->num_args) {
    fprintf(stderr, "line %zu: reply %s/%d, recorded %s/%d\n", line, wf_rpc_code_name(got->code),
            (int)got->num_args, wf_rpc_code_name(want->code), (int)want->num_args);
    exit(1);
  }
  if (want->code == kWebFFIRPCCopyAck) {
    CHECK(want->data.size == got->data.size &&
          memcmp(want->data.data, got->data.data, want->data.size) == 0);
  }
  for (int32_t i = 0; i < want->num_args; ++i) {
    const TVMFFIAny* w = &want->args[i];
    const TVMFFIAny* g = &got->args[i];
    if (w->type_index != g->type_index) {
      fprintf(stderr, "line %zu: argument %d has type index %d, recorded %d\n", line, (int)i,
              (int)g->type_index, (int)w->type_index);
      exit(1);
    }
    switch (w->type_index) {
      case kTVMFFIInt:
      case kTVMFFIBool:
      case kTVMFFIFloat:
        CHECK(w->v_int64 == g->v_int64);
        break;
      case kTVMFFIOpaquePtr:
        CHECK((w->v_uint64 == 0) == (g->v_uint64 == 0));
        if (w->v_uint64 != 0) {
          CHECK(m->n < 64);
          m->recorded[m->n] = w->v_uint64;
          m->ours[m->n++] = g->v_uint64;
        }
        break;
      case kTVMFFIRawStr: {
        /* ours leads with the error kind ("IndexError: ...") */
        size_t wl = strlen(w->v_c_str), gl = strlen(g->v_c_str);
        CHECK(gl >= wl && strcmp(g->v_c_str + gl - wl, w->v_c_str) == 0);
        break;
      }
      default:
        break;
    }
  }
}

static void replay(int one_byte_at_a_time) {
  capture c;
  capture_load(&c);
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  WebFFIRPCEndpoint* ep = create(&s, &cfg);
  handle_map m = {{0}, {0}, 0};
  int replies = 0, served_here = 0, kept = 0;
  for (size_t i = 0; i < c.count; ++i) {
    const capture_line* l = &c.lines[i];
    if (!l->to_server) continue;
    wf_rpc_buf b = {0};
    wf_rpc_packet p;
    if (i == 0) {
      CHECK(wf_rpc_buf_put(&b, l->bytes, l->size) == 0);
    } else {
      CHECK(wf_rpc_packet_decode(l->bytes + 8, l->size - 8, &p) == 0);
      served_here = p.code == kWebFFIRPCGetGlobalFunc &&
                    strcmp(p.args[0].v_c_str, "tvm.rpc.server.GetCRTMaxPacketSize") == 0;
      kept += served_here;
      remap_request(&m, &p);
      CHECK(wf_rpc_packet_encode(&b, &p) == 0);
      wf_rpc_packet_clear(&p);
    }
    int rc = WEBFFI_RPC_OPEN;
    if (one_byte_at_a_time) {
      for (size_t k = 0; k < b.size && rc == WEBFFI_RPC_OPEN; ++k) {
        /* nothing is answered before the last byte */
        CHECK_EQ_INT(s.bytes.size, 0);
        rc = WebFFIRPCEndpointFeed(ep, b.data + k, 1);
      }
    } else {
      rc = WebFFIRPCEndpointFeed(ep, b.data, b.size);
    }
    wf_rpc_buf_free(&b);
    if (i + 1 == c.count) { /* kShutdown: no answer, the session ends */
      CHECK_EQ_INT(rc, WEBFFI_RPC_CLOSED);
      CHECK_EQ_INT(s.bytes.size, 0);
      break;
    }
    CHECK_EQ_INT(rc, WEBFFI_RPC_OPEN);
    const capture_line* want = &c.lines[i + 1];
    CHECK(!want->to_server);
    if (i == 0) {
      CHECK(s.bytes.size == want->size && memcmp(s.bytes.data, want->bytes, want->size) == 0);
      s.bytes.size = 0;
    } else {
      wf_rpc_packet got, rec;
      sink_pop_packet(&s, &got);
      CHECK_EQ_INT(s.bytes.size, 0);
      CHECK(wf_rpc_packet_decode(want->bytes + 8, want->size - 8, &rec) == 0);
      compare_reply(i + 2, &rec, &got, &m, served_here);
      wf_rpc_packet_clear(&rec);
      wf_rpc_packet_clear(&got);
    }
    ++replies;
  }
  CHECK_EQ_INT(replies, 23); /* the handshake answer and 22 packets */
  /* the client freed everything it was given, but the max packet size
   * function (TVM's client keeps it for the session) */
  CHECK_EQ_INT(kept, 2);
  CHECK_EQ_INT(WebFFIRPCEndpointHandleCount(ep), kept);
  /* a closed session refuses more bytes */
  uint8_t byte = 0;
  CHECK(WebFFIRPCEndpointFeed(ep, &byte, 1) == -1);
  CHECK_RAISED("ValueError", "WebFFIRPCEndpointFeed: the RPC session is closed");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
  capture_free(&c);
}

void rpc_endpoint_replays_tvm_client_capture(void) { replay(0); }
void rpc_endpoint_replays_capture_one_byte_at_a_time(void) { replay(1); }

/* ------------------------------------------------------------- hostile */
void rpc_endpoint_bad_handles_are_exceptions(void) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  wf_rpc_packet r;
  /* a handle that was never given */
  call(ep, &s, 0xdeadbeefull, NULL, 0, &r);
  expect_exception(&r, "ValueError: RPC: 0xdeadbeef is not a live object handle");
  /* kCallFunc on a freed handle */
  uint64_t size_fn = get_global(ep, &s, "ffi.ArraySize");
  CHECK(size_fn != 0);
  TVMFFIAny h = any_handle(size_fn);
  syscall(ep, &s, kWebFFIRPCFreeHandle, &h, 1, &r);
  expect_none(&r);
  call(ep, &s, size_fn, NULL, 0, &r);
  expect_exception(&r, "is not a live object handle");
  /* freeing twice */
  syscall(ep, &s, kWebFFIRPCFreeHandle, &h, 1, &r);
  expect_exception(&r, "is not a live object handle");
  /* a reused slot does not answer to the old id */
  uint64_t again = get_global(ep, &s, "ffi.ArraySize");
  CHECK(again != 0 && again != size_fn);
  call(ep, &s, size_fn, NULL, 0, &r);
  expect_exception(&r, "is not a live object handle");
  /* a data handle is not a function, an RPCObjectRef must be live */
  TVMFFIAny alloc[4] = {any_device(kDLCPU, 0), any_int(16), any_int(8), {0}};
  alloc[3].type_index = kTVMFFIDataType;
  alloc[3].v_dtype.code = kDLFloat, alloc[3].v_dtype.bits = 32, alloc[3].v_dtype.lanes = 1;
  syscall(ep, &s, kWebFFIRPCDevAllocData, alloc, 4, &r);
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFIOpaquePtr);
  uint64_t data = r.args[0].v_uint64;
  wf_rpc_packet_clear(&r);
  /* the session's device memory is bounded */
  alloc[1] = any_int((int64_t)1 << 62);
  syscall(ep, &s, kWebFFIRPCDevAllocData, alloc, 4, &r);
  expect_exception(&r, "MemoryError: RPC: allocating 4611686018427387904 bytes would pass the "
                       "session's limit of 1073741824 bytes (16 held)");
  call(ep, &s, data, NULL, 0, &r);
  expect_exception(&r, "is not an object handle");
  wf_rpc_object ref = {WF_RPC_OBJECT_REF_INDEX, 0x1234567, {NULL, 0}};
  TVMFFIAny refarg = {0};
  refarg.type_index = WF_RPC_OBJECT_REF_INDEX;
  refarg.v_ptr = &ref;
  call(ep, &s, again, &refarg, 1, &r);
  expect_exception(&r, "0x1234567 is not a live object handle");
  /* the function's own error arrives with its kind */
  call(ep, &s, again, NULL, 0, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCException);
  wf_rpc_packet_clear(&r);
  /* a copy past the end of the allocation */
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  int64_t shape[1] = {4};
  req.code = kWebFFIRPCCopyToRemote;
  req.tensor.data = data;
  req.tensor.t.device.device_type = kDLCPU;
  req.tensor.t.ndim = 1;
  req.tensor.t.shape = shape;
  req.tensor.t.dtype.code = kDLFloat, req.tensor.t.dtype.bits = 32, req.tensor.t.dtype.lanes = 1;
  req.tensor.t.byte_offset = 8;
  uint8_t payload[16] = {0};
  req.nbytes = 16;
  req.data.data = (const char*)payload;
  req.data.size = 16;
  request(ep, &s, &req, &r);
  expect_exception(&r, "16 bytes at offset 8 overrun the 16 bytes of data handle");
  req.tensor.t.byte_offset = UINT64_MAX - 4;
  request(ep, &s, &req, &r);
  expect_exception(&r, "overrun");
  req.code = kWebFFIRPCCopyFromRemote;
  req.nbytes = UINT64_MAX;
  req.tensor.t.byte_offset = 0;
  request(ep, &s, &req, &r);
  expect_exception(&r, "overrun");
  /* a missing name and a name not exposed both read as handle 0 */
  CHECK(get_global(ep, &s, "no.such.func") == 0);
  CHECK(get_global(ep, &s, "testing.echo") == 0);
  /* wrong argument kinds to syscalls */
  TVMFFIAny one = any_int(1);
  syscall(ep, &s, kWebFFIRPCFreeHandle, &one, 1, &r);
  expect_exception(&r, "TypeError: RPC kFreeHandle: argument 0 must be a handle");
  syscall(ep, &s, kWebFFIRPCDevFreeData, &one, 1, &r);
  expect_exception(&r, "kDevFreeData takes 2 arguments, got 1");
  TVMFFIAny nodev[2] = {any_device(99, 0), any_int(0)};
  syscall(ep, &s, kWebFFIRPCDevGetAttr, nodev, 2, &r);
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFIInt);
  CHECK_EQ_INT(r.args[0].v_int64, 0); /* kExist: no such device */
  wf_rpc_packet_clear(&r);
  TVMFFIAny sync_bad[2] = {any_device(kDLCPU, 0), any_handle(77)};
  syscall(ep, &s, kWebFFIRPCDevStreamSync, sync_bad, 2, &r);
  expect_exception(&r, "unknown stream 0x4d");
  CHECK(WebFFIRPCEndpointHandleCount(ep) == 2);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
  runtime_still_works();
}

/* Feeds raw bytes to a fresh session; expects Feed to return -1 with a
 * ValueError containing `part`, and whether a kException was sent first. */
static void expect_close(const uint8_t* bytes, size_t size, const char* part, int told) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  CHECK(WebFFIRPCEndpointFeed(ep, bytes, size) == -1);
  expect_raised_part("ValueError", part);
  if (told) {
    wf_rpc_packet r;
    sink_pop_packet(&s, &r);
    expect_exception(&r, part);
  }
  CHECK_EQ_INT(s.bytes.size, 0);
  CHECK(WebFFIRPCEndpointFeed(ep, bytes, 1) == -1);
  expect_raised_part("ValueError", "the RPC session is closed");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}

void rpc_endpoint_protocol_breaks_close_the_session(void) {
  /* a length of 2^63, of 1 TiB, and below the code's 4 bytes */
  uint8_t huge[] = {0, 0, 0, 0, 0, 0, 0, 0x80, 3, 0, 0, 0};
  expect_close(huge, sizeof(huge), "RPC packet length 9223372036854775808 is outside [4, 67108864]",
               0);
  uint8_t tib[] = {0, 0, 0, 0, 0, 1, 0, 0};
  expect_close(tib, sizeof(tib), "is outside", 0);
  uint8_t tiny[] = {2, 0, 0, 0, 0, 0, 0, 0, 1, 0};
  expect_close(tiny, sizeof(tiny), "RPC packet length 2 is outside", 0);
  /* unknown codes */
  uint8_t unknown[] = {4, 0, 0, 0, 0, 0, 0, 0, 77, 0, 0, 0};
  expect_close(unknown, sizeof(unknown), "RPC packet has unknown code 77", 1);
  uint8_t negative[] = {4, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  expect_close(negative, sizeof(negative), "unknown code -1", 1);
  /* a truncated body: a name of 100 bytes in a packet of 24 */
  uint8_t trunc[] = {24, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0,
                     100, 0, 0, 0, 0, 0, 0, 0, 'f', 'f', 'i', '.'};
  expect_close(trunc, sizeof(trunc), "kGetGlobalFunc packet is truncated: a string needs 100", 1);
  /* a code only a server sends */
  uint8_t ret[] = {8, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};
  expect_close(ret, sizeof(ret), "the client sent kReturn", 1);
  runtime_still_works();
}

void rpc_endpoint_handshake_and_version_are_checked(void) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  /* not TVM RPC at all */
  WebFFIRPCEndpoint* ep = create(&s, &cfg);
  const uint8_t http[] = "GET / HTTP/1.1\r\n";
  CHECK(WebFFIRPCEndpointFeed(ep, http, sizeof(http) - 1) == -1);
  expect_raised_part("ValueError", "is not TVM RPC's magic 0xff271");
  CHECK_EQ_INT(s.bytes.size, 0);
  WebFFIRPCEndpointDestroy(ep);
  /* another key: the mismatch code, then closed */
  ep = create(&s, &cfg);
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_handshake_encode(&b, WEBFFI_RPC_MAGIC, "client:other", 12) == 0);
  CHECK(WebFFIRPCEndpointFeed(ep, b.data, b.size) == -1);
  expect_raised_part("ValueError", "the client's key 'client:other' does not match 'client:webffi'");
  CHECK_EQ_INT(s.bytes.size, 4);
  CHECK_EQ_INT(s.bytes.data[0] | (s.bytes.data[1] << 8) | (s.bytes.data[2] << 16),
               WEBFFI_RPC_MISMATCH);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&b);
  wf_rpc_buf_free(&s.bytes);
  /* a key with options after a space is accepted */
  ep = create(&s, &cfg);
  handshake(ep, &s, "client:webffi -timeout=10");
  /* a request before kInitServer is refused, the session goes on */
  wf_rpc_packet r;
  TVMFFIAny name = any_cstr("ffi.Array");
  syscall(ep, &s, kWebFFIRPCGetGlobalFunc, &name, 1, &r);
  expect_exception(&r, "RPC kGetGlobalFunc before kInitServer");
  /* another protocol version: told, then closed */
  wf_rpc_packet p;
  memset(&p, 0, sizeof(p));
  p.code = kWebFFIRPCInitServer;
  p.version.data = "0.7.0";
  p.version.size = 5;
  CHECK(wf_rpc_packet_encode(&b, &p) == 0);
  CHECK(WebFFIRPCEndpointFeed(ep, b.data, b.size) == -1);
  expect_raised_part("ValueError", "the client speaks protocol version '0.7.0', this server only '0.8.0'");
  sink_pop_packet(&s, &r);
  expect_exception(&r, "protocol version '0.7.0'");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&b);
  wf_rpc_buf_free(&s.bytes);
  /* a session constructor is refused without a construct hook; a second kInitServer too */
  ep = create(&s, &cfg);
  handshake(ep, &s, "client:webffi");
  TVMFFIAny ctor = any_cstr("rpc.PopenSession");
  p.version.data = "0.8.0";
  p.args = &ctor;
  p.num_args = 1;
  request(ep, &s, &p, &r);
  expect_exception(&r, "does not serve the session constructor rpc.PopenSession");
  /* rpc.LocalSession is the endpoint's own session */
  TVMFFIAny local = any_cstr("rpc.LocalSession");
  p.args = &local;
  request(ep, &s, &p, &r);
  expect_none(&r);
  p.num_args = 0;
  request(ep, &s, &p, &r);
  expect_exception(&r, "already initialised");
  /* a send that fails closes the session with the transport's error */
  s.fail = 1;
  CHECK(wf_rpc_packet_encode(&b, &p) == 0);
  CHECK(WebFFIRPCEndpointFeed(ep, b.data, b.size) == -1);
  CHECK_RAISED("OSError", "connection reset");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&b);
  wf_rpc_buf_free(&s.bytes);
  /* configuration errors */
  WebFFIRPCEndpointConfig none = {0};
  CHECK(WebFFIRPCEndpointCreate(&none) == NULL);
  CHECK_RAISED("ValueError", "WebFFIRPCEndpointCreate: a key and a send callback are required");
  runtime_still_works();
}

/* ---------------------------------------------------- chained sessions */
typedef struct {
  uint64_t token;
  int calls;
  int32_t n;
  char first[64];
  int fail;
  wf_rpc_buf forwarded;
  int packets;
} chain_hook;

static int hook_construct(void* ctx, WebFFIRPCEndpoint* ep, const TVMFFIAny* args, int32_t n,
                          uint64_t token) {
  (void)ep;
  chain_hook* h = (chain_hook*)ctx;
  h->calls++;
  h->token = token;
  h->n = n;
  snprintf(h->first, sizeof(h->first), "%s", args[0].v_c_str);
  if (h->fail) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "no next hop");
    return -1;
  }
  return WEBFFI_RPC_PENDING;
}

static int hook_forward(void* ctx, const uint8_t* data, size_t size) {
  chain_hook* h = (chain_hook*)ctx;
  h->packets++;
  return wf_rpc_buf_put(&h->forwarded, data, size);
}

void rpc_endpoint_chained_sessions_forward_packets(void) {
  sink s;
  chain_hook h;
  memset(&h, 0, sizeof(h));
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.construct = hook_construct;
  cfg.construct_ctx = &h;
  cfg.forward = hook_forward;
  cfg.forward_ctx = &h;
  WebFFIRPCEndpoint* ep = create(&s, &cfg);
  handshake(ep, &s, "client:webffi");
  wf_rpc_packet p, r;
  memset(&p, 0, sizeof(p));
  p.code = kWebFFIRPCInitServer;
  p.version.data = "0.8.0";
  p.version.size = 5;
  /* arguments other than numbers and strings are refused before the hook */
  TVMFFIAny bad[2] = {any_cstr("rpc.Connect"), any_device(1, 0)};
  p.args = bad;
  p.num_args = 2;
  request(ep, &s, &p, &r);
  expect_exception(&r, "session constructor arguments are numbers and strings");
  CHECK_EQ_INT(h.calls, 0);
  /* a constructor that fails: answered, the session stays uninitialised */
  TVMFFIAny ctor[5] = {any_cstr("rpc.Connect"), any_cstr("127.0.0.1"), {0}, any_cstr("b"), {0}};
  ctor[2].type_index = kTVMFFIInt;
  ctor[2].v_int64 = 9090;
  ctor[4].type_index = kTVMFFIBool;
  ctor[4].v_int64 = 0;
  p.args = ctor;
  p.num_args = 5;
  h.fail = 1;
  request(ep, &s, &p, &r);
  expect_exception(&r, "no next hop");
  CHECK_EQ_INT(h.calls, 1);
  CHECK_EQ_INT(h.n, 5);
  /* one that defers: nothing is answered, and what follows is queued */
  h.fail = 0;
  TVMFFIAny name = any_cstr("far.function");
  wf_rpc_packet g;
  memset(&g, 0, sizeof(g));
  g.code = kWebFFIRPCGetGlobalFunc;
  g.args = &name;
  g.num_args = 1;
  wf_rpc_buf both = {0}; /* the init and a request after it, in one chunk */
  wf_rpc_buf one = {0};  /* the request alone */
  CHECK(wf_rpc_packet_encode(&both, &p) == 0);
  CHECK(wf_rpc_packet_encode(&both, &g) == 0);
  CHECK(wf_rpc_packet_encode(&one, &g) == 0);
  feed_ok(ep, &both);
  CHECK_EQ_INT(h.calls, 2);
  CHECK_EQ_INT(s.bytes.size, 0);
  CHECK(WebFFIRPCEndpointIsPending(ep));
  CHECK_EQ_INT(h.packets, 0);
  /* the session is ready: kReturn, then the queued packet goes out whole */
  CHECK(WebFFIRPCEndpointComplete(ep, h.token, 0) == WEBFFI_RPC_OPEN);
  sink_pop_packet(&s, &r);
  expect_none(&r);
  CHECK_EQ_INT(h.packets, 1);
  CHECK(h.forwarded.size == one.size && memcmp(h.forwarded.data, one.data, one.size) == 0);
  /* a packet in two pieces is forwarded once it is whole; nothing is answered here */
  h.forwarded.size = 0;
  CHECK(WebFFIRPCEndpointFeed(ep, one.data, 5) == WEBFFI_RPC_OPEN);
  CHECK_EQ_INT(h.packets, 1);
  CHECK(WebFFIRPCEndpointFeed(ep, one.data + 5, one.size - 5) == WEBFFI_RPC_OPEN);
  CHECK_EQ_INT(h.packets, 2);
  CHECK(h.forwarded.size == one.size && memcmp(h.forwarded.data, one.data, one.size) == 0);
  CHECK_EQ_INT(s.bytes.size, 0);
  /* kShutdown is forwarded, then the session is over */
  wf_rpc_packet down;
  memset(&down, 0, sizeof(down));
  down.code = kWebFFIRPCShutdown;
  one.size = 0;
  CHECK(wf_rpc_packet_encode(&one, &down) == 0);
  CHECK(WebFFIRPCEndpointFeed(ep, one.data, one.size) == WEBFFI_RPC_CLOSED);
  CHECK_EQ_INT(h.packets, 3);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&both);
  wf_rpc_buf_free(&one);
  wf_rpc_buf_free(&h.forwarded);
  wf_rpc_buf_free(&s.bytes);
  runtime_still_works();
}

/* ----------------------------------------------------------- deferral */
typedef struct {
  uint64_t token;
  int calls;
  int pending;
} sync_hook;

static int hook_sync(void* ctx, WebFFIRPCEndpoint* ep, DLDevice dev, uint64_t stream,
                     uint64_t token) {
  (void)ep;
  sync_hook* h = (sync_hook*)ctx;
  CHECK_EQ_INT(dev.device_type, kDLCPU);
  CHECK(stream == 0);
  h->calls++;
  h->token = token;
  return h->pending ? WEBFFI_RPC_PENDING : 0;
}

void rpc_endpoint_defers_stream_sync_until_complete(void) {
  sink s;
  sync_hook hook = {0, 0, 1};
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.stream_sync = hook_sync;
  cfg.stream_sync_ctx = &hook;
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  /* a sync, then a lookup, in one chunk */
  TVMFFIAny sync[2] = {any_device(kDLCPU, 0), any_handle(0)};
  TVMFFIAny name = any_cstr("ffi.Array");
  wf_rpc_buf b = {0};
  encode_request(&b, kWebFFIRPCDevStreamSync, sync, 2);
  encode_request(&b, kWebFFIRPCGetGlobalFunc, &name, 1);
  feed_ok(ep, &b);
  CHECK_EQ_INT(hook.calls, 1);
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 1);
  CHECK_EQ_INT(s.bytes.size, 0); /* nothing answered, the lookup queued */
  /* more bytes while pending are queued too */
  feed_ok(ep, &b);
  CHECK_EQ_INT(s.bytes.size, 0);
  /* a wrong token is refused and changes nothing */
  CHECK(WebFFIRPCEndpointComplete(ep, hook.token + 5, 0) == -1);
  CHECK_RAISED("ValueError", "WebFFIRPCEndpointComplete: no pending reply has token 6");
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 1);
  /* completing answers the sync, then serves the lookup, then the second
   * sync defers again */
  CHECK_EQ_INT(WebFFIRPCEndpointComplete(ep, hook.token, 0), WEBFFI_RPC_OPEN);
  wf_rpc_packet r;
  sink_pop_packet(&s, &r);
  expect_none(&r);
  sink_pop_packet(&s, &r);
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFIOpaquePtr);
  CHECK(r.args[0].v_uint64 != 0);
  wf_rpc_packet_clear(&r);
  CHECK_EQ_INT(s.bytes.size, 0);
  CHECK_EQ_INT(hook.calls, 2);
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 1);
  /* a failed wait is answered as kException with the device's error */
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "GPU device lost");
  CHECK_EQ_INT(WebFFIRPCEndpointComplete(ep, hook.token, -1), WEBFFI_RPC_OPEN);
  sink_pop_packet(&s, &r);
  expect_exception(&r, "RuntimeError: GPU device lost");
  sink_pop_packet(&s, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCReturn);
  wf_rpc_packet_clear(&r);
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 0);
  /* a hook that finishes at once answers at once */
  hook.pending = 0;
  syscall(ep, &s, kWebFFIRPCDevStreamSync, sync, 2, &r);
  expect_none(&r);
  wf_rpc_buf_free(&b);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}

/* ------------------------------------------------------------- devices */
void rpc_endpoint_cpu_memory_syscalls(void) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  wf_rpc_packet r;
  TVMFFIAny dev[2] = {any_device(kDLCPU, 0), any_int(0)};
  syscall(ep, &s, kWebFFIRPCDevGetAttr, dev, 2, &r); /* kExist */
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFIInt);
  CHECK_EQ_INT(r.args[0].v_int64, 1);
  wf_rpc_packet_clear(&r);
  syscall(ep, &s, kWebFFIRPCDevSetDevice, dev, 1, &r);
  expect_none(&r);
  syscall(ep, &s, kWebFFIRPCDevCreateStream, dev, 1, &r);
  CHECK(r.args[0].type_index == kTVMFFIOpaquePtr && r.args[0].v_uint64 == 0);
  wf_rpc_packet_clear(&r);
  TVMFFIAny stream[2] = {any_device(kDLCPU, 0), any_handle(0)};
  syscall(ep, &s, kWebFFIRPCDevSetStream, stream, 2, &r);
  expect_none(&r);
  /* two int32[3] tensors; copy in, copy among, copy out */
  int64_t shape[1] = {3};
  wf_rpc_tensor proto = {0, {NULL, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, NULL, 0}};
  TVMFFIAny alloc[2] = {{0}, any_none()};
  alloc[0].type_index = kTVMFFIDLTensorPtr;
  alloc[0].v_ptr = &proto;
  uint64_t h[2];
  for (int i = 0; i < 2; ++i) {
    syscall(ep, &s, kWebFFIRPCDevAllocDataWithScope, alloc, 2, &r);
    CHECK_EQ_INT(r.args[0].type_index, kTVMFFIOpaquePtr);
    h[i] = r.args[0].v_uint64;
    wf_rpc_packet_clear(&r);
  }
  int32_t in[3] = {7, -8, 9};
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  req.code = kWebFFIRPCCopyToRemote;
  req.tensor = proto;
  req.tensor.data = h[0];
  req.nbytes = sizeof(in);
  req.data.data = (const char*)in;
  req.data.size = sizeof(in);
  request(ep, &s, &req, &r);
  expect_none(&r);
  wf_rpc_tensor from = proto, to = proto;
  from.data = h[0];
  to.data = h[1];
  TVMFFIAny among[3] = {{0}, {0}, any_handle(0)};
  among[0].type_index = among[1].type_index = kTVMFFIDLTensorPtr;
  among[0].v_ptr = &from;
  among[1].v_ptr = &to;
  syscall(ep, &s, kWebFFIRPCCopyAmongRemote, among, 3, &r);
  expect_none(&r);
  req.code = kWebFFIRPCCopyFromRemote;
  req.tensor.data = h[1];
  req.tensor.t.byte_offset = 4; /* the last two elements */
  req.nbytes = 8;
  request(ep, &s, &req, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCCopyAck);
  CHECK_EQ_INT(r.data.size, 8);
  int32_t out[2];
  memcpy(out, r.data.data, 8);
  CHECK(out[0] == -8 && out[1] == 9);
  wf_rpc_packet_clear(&r);
  /* freeing data on the wrong device, then rightly, then again */
  TVMFFIAny fr[2] = {any_device(15, 0), any_handle(h[0])};
  syscall(ep, &s, kWebFFIRPCDevFreeData, fr, 2, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCException);
  wf_rpc_packet_clear(&r);
  fr[0] = any_device(kDLCPU, 0);
  syscall(ep, &s, kWebFFIRPCDevFreeData, fr, 2, &r);
  expect_none(&r);
  syscall(ep, &s, kWebFFIRPCDevFreeData, fr, 2, &r);
  expect_exception(&r, "is not a live data handle");
  CHECK_EQ_INT(WebFFIRPCEndpointHandleCount(ep), 1);
  /* Destroy frees what the peer still holds (ASan checks the leak) */
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}

/* --------------------------------------------------- values and tensors */
static int allow_testing(void* ctx, const char* name, size_t size) {
  (void)ctx;
  return size > 8 && memcmp(name, "testing.", 8) == 0;
}

static int make_tensor(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  int64_t shape[1] = {2};
  DLTensor proto = {NULL, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, NULL, 0};
  TVMFFIObjectHandle t = NULL;
  if (TVMFFIEnvTensorAlloc(&proto, &t) != 0) return -1;
  DLTensor* dl = (DLTensor*)((char*)t + sizeof(TVMFFIObject));
  ((int32_t*)dl->data)[0] = 5;
  ((int32_t*)dl->data)[1] = 6;
  result->type_index = kTVMFFITensor;
  result->v_obj = (TVMFFIObject*)t;
  return 0;
}

static int sum_int32(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  DLTensor* t = NULL;
  if (n != 1 || WebFFIArgToDLTensor(NULL, args, 0, &t) != 0) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "expects a tensor");
    return -1;
  }
  const int32_t* d = (const int32_t*)((const char*)t->data + t->byte_offset);
  int64_t sum = 0;
  for (int64_t i = 0; i < t->shape[0]; ++i) sum += d[i];
  result->type_index = kTVMFFIInt;
  result->v_int64 = sum;
  return 0;
}

static void set_global(const char* name, TVMFFISafeCallType fn) {
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, fn, NULL, &f) == 0);
  TVMFFIByteArray n = {name, strlen(name)};
  CHECK(TVMFFIFunctionSetGlobal(&n, f, 1) == 0);
  TVMFFIObjectDecRef(f);
}

static void echo_expect(WebFFIRPCEndpoint* ep, sink* s, uint64_t echo, TVMFFIAny arg,
                        int32_t result_index, int32_t wire_index, wf_rpc_packet* r) {
  call(ep, s, echo, &arg, 1, r);
  CHECK_EQ_INT(r->code, kWebFFIRPCReturn);
  CHECK_EQ_INT(r->num_args, 2);
  CHECK_EQ_INT(r->args[0].type_index, kTVMFFIInt);
  CHECK_EQ_INT(r->args[0].v_int64, result_index);
  CHECK_EQ_INT(r->args[1].type_index, wire_index);
}

void rpc_endpoint_returns_values_strings_and_tensors(void) {
  set_global("testing.rpc_make_tensor", make_tensor);
  set_global("testing.rpc_sum_int32", sum_int32);
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.allow = allow_testing;
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  /* the predicate exposes testing.*, and nothing else */
  CHECK(get_global(ep, &s, "ffi.Array") == 0);
  uint64_t echo = get_global(ep, &s, "testing.echo");
  CHECK(echo != 0);
  wf_rpc_packet r;
  echo_expect(ep, &s, echo, any_float(2.5), kTVMFFIFloat, kTVMFFIFloat, &r);
  CHECK(r.args[1].v_float64 == 2.5);
  wf_rpc_packet_clear(&r);
  echo_expect(ep, &s, echo, any_bool(1), kTVMFFIBool, kTVMFFIBool, &r);
  wf_rpc_packet_clear(&r);
  echo_expect(ep, &s, echo, any_none(), kTVMFFINone, kTVMFFINone, &r);
  wf_rpc_packet_clear(&r);
  /* strings come back as C strings, under the result's own type index */
  echo_expect(ep, &s, echo, any_cstr("hi"), kTVMFFISmallStr, kTVMFFIRawStr, &r);
  CHECK_EQ_STR(r.args[1].v_c_str, "hi");
  wf_rpc_packet_clear(&r);
  wf_rpc_object str = {kTVMFFIStr, 0, {"a longer string", 15}};
  TVMFFIAny obj = {0};
  obj.type_index = kTVMFFIStr;
  obj.v_ptr = &str;
  echo_expect(ep, &s, echo, obj, kTVMFFIStr, kTVMFFIRawStr, &r);
  CHECK_EQ_STR(r.args[1].v_c_str, "a longer string");
  wf_rpc_packet_clear(&r);
  wf_rpc_object bytes = {kTVMFFIBytes, 0, {"b\0ytes..x", 9}};
  obj.type_index = kTVMFFIBytes;
  obj.v_ptr = &bytes;
  echo_expect(ep, &s, echo, obj, kTVMFFIBytes, kTVMFFIByteArrayPtr, &r);
  const TVMFFIByteArray* b = (const TVMFFIByteArray*)r.args[1].v_ptr;
  CHECK(b->size == 9 && memcmp(b->data, "b\0ytes..x", 9) == 0);
  wf_rpc_packet_clear(&r);
  /* a remote function passed back as an argument is an object: a handle */
  TVMFFIAny fn = {0};
  fn.type_index = kTVMFFIFunction;
  fn.v_uint64 = echo;
  echo_expect(ep, &s, echo, fn, kTVMFFIFunction, kTVMFFIOpaquePtr, &r);
  uint64_t echo2 = r.args[1].v_uint64;
  CHECK(echo2 != 0 && echo2 != echo);
  wf_rpc_packet_clear(&r);
  fn.v_uint64 = 0x77;
  call(ep, &s, echo, &fn, 1, &r);
  expect_exception(&r, "0x77 is not a live object handle");
  /* a tensor: [Int 70, DLTensorPtr over a data handle, OpaquePtr] */
  uint64_t mk = get_global(ep, &s, "testing.rpc_make_tensor");
  CHECK(mk != 0);
  int64_t before = WebFFIRPCEndpointHandleCount(ep);
  call(ep, &s, mk, NULL, 0, &r);
  CHECK_EQ_INT(r.num_args, 3);
  CHECK_EQ_INT(r.args[0].v_int64, kTVMFFITensor);
  CHECK_EQ_INT(r.args[1].type_index, kTVMFFIDLTensorPtr);
  CHECK_EQ_INT(r.args[2].type_index, kTVMFFIOpaquePtr);
  wf_rpc_tensor t = *(const wf_rpc_tensor*)r.args[1].v_ptr;
  int64_t shape[1];
  CHECK_EQ_INT(t.t.ndim, 1);
  shape[0] = t.t.shape[0];
  t.t.shape = shape;
  CHECK_EQ_INT(shape[0], 2);
  uint64_t tensor_id = r.args[2].v_uint64;
  wf_rpc_packet_clear(&r);
  CHECK_EQ_INT(WebFFIRPCEndpointHandleCount(ep), before + 2);
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  req.code = kWebFFIRPCCopyFromRemote;
  req.tensor = t;
  req.nbytes = 8;
  request(ep, &s, &req, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCCopyAck);
  int32_t got[2];
  memcpy(got, r.data.data, 8);
  CHECK(got[0] == 5 && got[1] == 6);
  wf_rpc_packet_clear(&r);
  /* the tensor passed back as a DLTensorPtr argument, whole, in part, and
   * past its end */
  uint64_t sum = get_global(ep, &s, "testing.rpc_sum_int32");
  TVMFFIAny targ = {0};
  targ.type_index = kTVMFFIDLTensorPtr;
  targ.v_ptr = &t;
  call(ep, &s, sum, &targ, 1, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCReturn);
  CHECK_EQ_INT(r.args[1].v_int64, 11);
  wf_rpc_packet_clear(&r);
  shape[0] = 1;
  t.t.byte_offset = 4;
  call(ep, &s, sum, &targ, 1, &r);
  CHECK_EQ_INT(r.args[1].v_int64, 6);
  wf_rpc_packet_clear(&r);
  shape[0] = 2;
  call(ep, &s, sum, &targ, 1, &r);
  expect_exception(&r, "8 bytes at offset 4 overrun the 8 bytes of data handle");
  shape[0] = 2;
  t.t.byte_offset = 0;
  /* a tensor argument reaches the callee as an ffi.Tensor view that holds
   * the memory: returned, it is a tensor result of its own */
  call(ep, &s, echo, &targ, 1, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCReturn);
  CHECK_EQ_INT(r.num_args, 3);
  CHECK_EQ_INT(r.args[0].v_int64, kTVMFFITensor);
  TVMFFIAny view_handle = any_handle(r.args[2].v_uint64);
  wf_rpc_packet_clear(&r);
  syscall(ep, &s, kWebFFIRPCFreeHandle, &view_handle, 1, &r);
  expect_none(&r);
  /* freeing the tensor frees its data handle too */
  TVMFFIAny h = any_handle(tensor_id);
  syscall(ep, &s, kWebFFIRPCFreeHandle, &h, 1, &r);
  expect_none(&r);
  CHECK_EQ_INT(WebFFIRPCEndpointHandleCount(ep), before + 1); /* + testing.rpc_sum_int32 */
  request(ep, &s, &req, &r);
  expect_exception(&r, "is not a live data handle");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}

void rpc_endpoint_handle_and_packet_limits(void) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.max_handles = 3;
  cfg.max_packet_bytes = 64;
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  for (int i = 0; i < 3; ++i) CHECK(get_global(ep, &s, "ffi.Array") != 0);
  TVMFFIAny name = any_cstr("ffi.Array");
  wf_rpc_packet r;
  syscall(ep, &s, kWebFFIRPCGetGlobalFunc, &name, 1, &r);
  expect_exception(&r, "the peer holds 3 handles, the most allowed; free some");
  /* a packet over the configured limit closes the session */
  TVMFFIAny big = any_cstr("a name far longer than the sixty-four bytes this session accepts");
  wf_rpc_buf b = {0};
  encode_request(&b, kWebFFIRPCGetGlobalFunc, &big, 1);
  CHECK(WebFFIRPCEndpointFeed(ep, b.data, b.size) == -1);
  expect_raised_part("ValueError", "RPC packet length 84 is outside [4, 64]");
  wf_rpc_buf_free(&b);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
  runtime_still_works();
}

/* ------------------------------------------------------ server functions */
static TVMFFIAny any_bytes(TVMFFIByteArray* b) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIByteArrayPtr;
  a.v_ptr = b;
  return a;
}

void rpc_server_work_directory_functions(void) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  /* off by default: the names read as missing */
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  CHECK(get_global(ep, &s, "tvm.rpc.server.upload") == 0);
  CHECK(get_global(ep, &s, "tvm.rpc.server.load_module") == 0);
  CHECK(get_global(ep, &s, "tvm.rpc.server.ModuleGetFunction") != 0);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);

  WebFFIRPCEndpointConfig on = {0};
  on.enable_upload = 1;
  on.max_upload_bytes = 16;
  ep = open_session(&s, &on);
  uint64_t up = get_global(ep, &s, "tvm.rpc.server.upload");
  uint64_t down = get_global(ep, &s, "tvm.rpc.server.download");
  uint64_t ls = get_global(ep, &s, "tvm.rpc.server.listdir");
  uint64_t rm = get_global(ep, &s, "tvm.rpc.server.remove");
  uint64_t load = get_global(ep, &s, "tvm.rpc.server.load_module");
  CHECK(up && down && ls && rm && load);
  TVMFFIByteArray data = {"hello", 5};
  TVMFFIAny args[2] = {any_cstr("a.txt"), any_bytes(&data)};
  wf_rpc_packet r;
  call(ep, &s, up, args, 2, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCReturn);
  wf_rpc_packet_clear(&r);
  args[0] = any_cstr("/b.bin"); /* TVM's absolute paths name the same flat files */
  call(ep, &s, up, args, 2, &r);
  wf_rpc_packet_clear(&r);
  TVMFFIAny dot = any_cstr(".");
  call(ep, &s, ls, &dot, 1, &r);
  CHECK_EQ_INT(r.args[1].type_index, kTVMFFIRawStr);
  CHECK_EQ_STR(r.args[1].v_c_str, "a.txt,b.bin,");
  wf_rpc_packet_clear(&r);
  TVMFFIAny name = any_cstr("a.txt");
  call(ep, &s, down, &name, 1, &r);
  CHECK_EQ_INT(r.args[1].type_index, kTVMFFIByteArrayPtr);
  const TVMFFIByteArray* got = (const TVMFFIByteArray*)r.args[1].v_ptr;
  CHECK(got->size == 5 && memcmp(got->data, "hello", 5) == 0);
  wf_rpc_packet_clear(&r);
  /* the work directory's limit: 16 bytes, 10 held */
  TVMFFIByteArray big = {"0123456789", 10};
  TVMFFIAny over[2] = {any_cstr("c"), any_bytes(&big)};
  call(ep, &s, up, over, 2, &r);
  expect_exception(&r, "MemoryError: tvm.rpc.server.upload: 10 bytes would pass the work directory's limit of 16 bytes");
  call(ep, &s, rm, &name, 1, &r);
  wf_rpc_packet_clear(&r);
  call(ep, &s, down, &name, 1, &r);
  expect_exception(&r, "ValueError: tvm.rpc.server.download: no file 'a.txt'");
  call(ep, &s, up, over, 2, &r); /* fits now that a.txt is gone */
  CHECK_EQ_INT(r.code, kWebFFIRPCReturn);
  wf_rpc_packet_clear(&r);
  /* natively there is no wasm module loader: load_module says so */
  TVMFFIAny c = any_cstr("c");
  call(ep, &s, load, &c, 1, &r);
  expect_exception(&r, "ffi.Module.load_from_bytes.wasm is not registered");
  TVMFFIAny nul = any_cstr("");
  call(ep, &s, up, (TVMFFIAny[]){nul, any_bytes(&data)}, 2, &r);
  expect_exception(&r, "a file name is 1 to 1024 bytes");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}

void rpc_server_time_evaluator_and_packet_size(void) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.max_packet_bytes = 1 << 20;
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  wf_rpc_packet r;
  uint64_t size = get_global(ep, &s, "tvm.rpc.server.GetCRTMaxPacketSize");
  call(ep, &s, size, NULL, 0, &r);
  CHECK_EQ_INT(r.args[1].v_int64, 1 << 20);
  wf_rpc_packet_clear(&r);
  uint64_t te = get_global(ep, &s, "runtime.RPCTimeEvaluator");
  CHECK(te != 0);
  /* (None, name, device_type, device_id, number, repeat, min_repeat_ms,
   *  limit_zero_time_iterations, cooldown_ms, repeats_to_cooldown,
   *  cache_flush_bytes, f_preproc_name) */
  TVMFFIAny a[12] = {any_none(), any_cstr("ffi.Array"), any_int(kDLCPU), any_int(0), any_int(3),
                     any_int(4), any_int(0), any_int(10), any_int(0), any_int(1), any_int(0),
                     any_cstr("")};
  call(ep, &s, te, a, 12, &r);
  CHECK_EQ_INT(r.args[0].v_int64, kTVMFFIFunction);
  uint64_t timer = r.args[1].v_uint64;
  wf_rpc_packet_clear(&r);
  TVMFFIAny targs[2] = {any_int(1), any_int(2)};
  call(ep, &s, timer, targs, 2, &r);
  CHECK_EQ_INT(r.args[0].v_int64, kTVMFFIBytes);
  const TVMFFIByteArray* times = (const TVMFFIByteArray*)r.args[1].v_ptr;
  CHECK_EQ_INT(times->size, 4 * sizeof(double));
  for (int i = 0; i < 4; ++i) {
    double t;
    memcpy(&t, times->data + i * sizeof(double), sizeof(double));
    CHECK(t >= 0 && t < 1);
  }
  wf_rpc_packet_clear(&r);
  /* an unexposed global cannot be timed (the allow list is ffi.Array*) */
  a[1] = any_cstr("testing.echo");
  call(ep, &s, te, a, 12, &r);
  expect_exception(&r, "cannot find function 'testing.echo'");
  a[1] = any_cstr("ffi.Array");
  a[5] = any_int(0);
  call(ep, &s, te, a, 12, &r);
  expect_exception(&r, "number and repeat must be positive");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}

/* A device of a type of its own whose memory is read asynchronously. */
typedef struct {
  int calls;
  uint64_t token;
  uint64_t nbytes;
} copy_hook;

static int hook_copy(void* ctx, WebFFIRPCEndpoint* ep, DLDevice dev, void* data, uint64_t offset,
                     uint64_t nbytes, uint64_t token) {
  (void)ep;
  (void)dev;
  (void)data;
  (void)offset;
  copy_hook* h = (copy_hook*)ctx;
  h->calls++;
  h->token = token;
  h->nbytes = nbytes;
  return WEBFFI_RPC_PENDING;
}

static int hook_attr(void* ctx, DLDevice dev, int32_t kind, TVMFFIAny* out) {
  (void)ctx;
  (void)dev;
  if (kind == 1) {
    out->type_index = kTVMFFIInt;
    out->v_int64 = 256;
    return 1;
  }
  if (kind == 5) {
    out->type_index = kTVMFFIRawStr;
    out->v_c_str = "Test GPU";
    return 1;
  }
  return 0;
}

static void* fake_alloc(void* ctx, DLDevice dev, size_t nbytes, size_t alignment) {
  (void)ctx;
  (void)dev;
  (void)alignment;
  return calloc(1, nbytes);
}
static void fake_free(void* ctx, DLDevice dev, void* data) {
  (void)ctx;
  (void)dev;
  free(data);
}
static int fake_copy(void* ctx, const void* from, size_t from_offset, DLDevice from_dev, void* to,
                     size_t to_offset, DLDevice to_dev, size_t nbytes, TVMFFIStreamHandle stream) {
  (void)ctx;
  (void)from_dev;
  (void)to_dev;
  (void)stream;
  memcpy((char*)to + to_offset, (const char*)from + from_offset, nbytes);
  return 0;
}
static int fake_sync(void* ctx, DLDevice dev, TVMFFIStreamHandle stream) {
  (void)ctx;
  (void)dev;
  (void)stream;
  return 0;
}

void rpc_endpoint_defers_device_reads_and_answers_attributes(void) {
  const int type = 15;
  WebFFIDeviceAPI api = {fake_alloc, fake_free, fake_copy, fake_sync, NULL};
  CHECK(WebFFIDeviceAPISet(type, &api) == 0);
  sink s;
  copy_hook hook = {0, 0, 0};
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.copy_from = hook_copy;
  cfg.copy_from_ctx = &hook;
  cfg.device_attr = hook_attr;
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  wf_rpc_packet r;
  TVMFFIAny attr[2] = {any_device(type, 0), any_int(1)};
  syscall(ep, &s, kWebFFIRPCDevGetAttr, attr, 2, &r);
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFIInt);
  CHECK_EQ_INT(r.args[0].v_int64, 256);
  wf_rpc_packet_clear(&r);
  attr[1] = any_int(5);
  syscall(ep, &s, kWebFFIRPCDevGetAttr, attr, 2, &r);
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFIRawStr);
  CHECK_EQ_STR(r.args[0].v_c_str, "Test GPU");
  wf_rpc_packet_clear(&r);
  attr[1] = any_int(9);
  syscall(ep, &s, kWebFFIRPCDevGetAttr, attr, 2, &r);
  CHECK_EQ_INT(r.args[0].type_index, kTVMFFINone);
  wf_rpc_packet_clear(&r);
  /* 8 bytes on the device, written, then read back through the hook */
  TVMFFIAny alloc[4] = {any_device(type, 0), any_int(8), any_int(64), {0}};
  alloc[3].type_index = kTVMFFIDataType;
  alloc[3].v_dtype.code = kDLFloat;
  alloc[3].v_dtype.bits = 32;
  alloc[3].v_dtype.lanes = 1;
  syscall(ep, &s, kWebFFIRPCDevAllocData, alloc, 4, &r);
  uint64_t data = r.args[0].v_uint64;
  wf_rpc_packet_clear(&r);
  int64_t shape[1] = {2};
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  req.code = kWebFFIRPCCopyToRemote;
  req.tensor.data = data;
  req.tensor.t.device.device_type = (DLDeviceType)type;
  req.tensor.t.ndim = 1;
  req.tensor.t.dtype = alloc[3].v_dtype;
  req.tensor.t.shape = shape;
  req.nbytes = 8;
  float in[2] = {1.5f, 2.5f};
  req.data.data = (const char*)in;
  req.data.size = 8;
  request(ep, &s, &req, &r);
  expect_none(&r);
  req.code = kWebFFIRPCCopyFromRemote;
  req.data.data = NULL;
  req.data.size = 0;
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_packet_encode(&b, &req) == 0);
  TVMFFIAny name = any_cstr("ffi.Array");
  encode_request(&b, kWebFFIRPCGetGlobalFunc, &name, 1);
  feed_ok(ep, &b);
  wf_rpc_buf_free(&b);
  CHECK_EQ_INT(hook.calls, 1);
  CHECK(hook.nbytes == 8);
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 1);
  CHECK_EQ_INT(s.bytes.size, 0);
  /* a success without bytes, and the wrong byte count, are refused */
  CHECK(WebFFIRPCEndpointComplete(ep, hook.token, 0) == -1);
  CHECK_RAISED("ValueError", "WebFFIRPCEndpointComplete: token 1 awaits bytes: complete it with WebFFIRPCEndpointCompleteCopy");
  CHECK(WebFFIRPCEndpointCompleteCopy(ep, hook.token, (const uint8_t*)in, 4) == -1);
  expect_raised_part("ValueError", "8 bytes were asked for, 4 given");
  CHECK_EQ_INT(WebFFIRPCEndpointCompleteCopy(ep, hook.token, (const uint8_t*)in, 8), WEBFFI_RPC_OPEN);
  sink_pop_packet(&s, &r);
  CHECK_EQ_INT(r.code, kWebFFIRPCCopyAck);
  CHECK(r.data.size == 8 && memcmp(r.data.data, in, 8) == 0);
  wf_rpc_packet_clear(&r);
  sink_pop_packet(&s, &r); /* the lookup queued behind it */
  CHECK(r.args[0].v_uint64 != 0);
  wf_rpc_packet_clear(&r);
  /* a failed read is answered as kException */
  {
    wf_rpc_buf c = {0};
    CHECK(wf_rpc_packet_encode(&c, &req) == 0);
    feed_ok(ep, &c);
    wf_rpc_buf_free(&c);
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "device lost");
    CHECK_EQ_INT(WebFFIRPCEndpointComplete(ep, hook.token, -1), WEBFFI_RPC_OPEN);
    sink_pop_packet(&s, &r);
    expect_exception(&r, "RuntimeError: device lost");
  }
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
  CHECK(WebFFIDeviceAPISet(type, NULL) == 0);
}

static int hook_gpu_sync(void* ctx, WebFFIRPCEndpoint* ep, DLDevice dev, uint64_t stream,
                         uint64_t token) {
  (void)ep;
  (void)stream;
  sync_hook* h = (sync_hook*)ctx;
  CHECK_EQ_INT(dev.device_type, 15);
  h->calls++;
  h->token = token;
  return WEBFFI_RPC_PENDING;
}

/* runtime.RPCTimeEvaluator on a device that waits asynchronously: a wait
 * after the warm-up call and after each repeat, the reply deferred until the
 * last one; other requests queue behind it. */
void rpc_endpoint_times_async_devices_with_waits(void) {
  WebFFIDeviceAPI api = {fake_alloc, fake_free, fake_copy, fake_sync, NULL};
  CHECK(WebFFIDeviceAPISet(15, &api) == 0);
  sink s;
  sync_hook hook = {0, 0, 1};
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.stream_sync = hook_gpu_sync;
  cfg.stream_sync_ctx = &hook;
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  wf_rpc_packet r;
  uint64_t te = get_global(ep, &s, "runtime.RPCTimeEvaluator");
  TVMFFIAny a[12] = {any_none(), any_cstr("ffi.Array"), any_int(15), any_int(0), any_int(2),
                     any_int(3), any_int(0), any_int(10), any_int(0), any_int(1), any_int(0),
                     any_cstr("")};
  call(ep, &s, te, a, 12, &r);
  uint64_t timer = r.args[1].v_uint64;
  wf_rpc_packet_clear(&r);
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  req.code = kWebFFIRPCCallFunc;
  req.handle = timer;
  TVMFFIAny args[2] = {any_int(1), any_cstr("two")};
  req.args = args;
  req.num_args = 2;
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_packet_encode(&b, &req) == 0);
  TVMFFIAny name = any_cstr("ffi.Array");
  encode_request(&b, kWebFFIRPCGetGlobalFunc, &name, 1);
  feed_ok(ep, &b);
  wf_rpc_buf_free(&b);
  /* the warm-up wait, then one per repeat */
  for (int i = 0; i < 4; ++i) {
    CHECK_EQ_INT(hook.calls, i + 1);
    CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 1);
    CHECK_EQ_INT(s.bytes.size, 0);
    CHECK_EQ_INT(WebFFIRPCEndpointComplete(ep, hook.token, 0), WEBFFI_RPC_OPEN);
  }
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 0);
  sink_pop_packet(&s, &r);
  CHECK_EQ_INT(r.args[0].v_int64, kTVMFFIBytes);
  CHECK_EQ_INT(((const TVMFFIByteArray*)r.args[1].v_ptr)->size, 3 * sizeof(double));
  wf_rpc_packet_clear(&r);
  sink_pop_packet(&s, &r); /* the lookup that waited behind it */
  CHECK(r.args[0].v_uint64 != 0);
  wf_rpc_packet_clear(&r);
  /* a failed wait ends the timing with the device's error */
  {
    wf_rpc_buf c = {0};
    CHECK(wf_rpc_packet_encode(&c, &req) == 0);
    feed_ok(ep, &c);
    wf_rpc_buf_free(&c);
  }
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "GPU device lost");
  CHECK_EQ_INT(WebFFIRPCEndpointComplete(ep, hook.token, -1), WEBFFI_RPC_OPEN);
  sink_pop_packet(&s, &r);
  expect_exception(&r, "RuntimeError: GPU device lost");
  /* an endpoint destroyed mid-timing releases it (ASan checks) */
  CHECK(wf_rpc_packet_encode(&b, &req) == 0);
  feed_ok(ep, &b);
  wf_rpc_buf_free(&b);
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 1);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
  CHECK(WebFFIDeviceAPISet(15, NULL) == 0);
}

/* Input written in place (Reserve + Commit) is served as Feed serves it. */
void rpc_endpoint_reserve_and_commit(void) {
  sink s;
  WebFFIRPCEndpointConfig cfg = {0};
  WebFFIRPCEndpoint* ep = create(&s, &cfg);
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_handshake_encode(&b, WEBFFI_RPC_MAGIC, "client:webffi", 13) == 0);
  uint8_t* at = WebFFIRPCEndpointReserve(ep, b.size + 100);
  CHECK(at != NULL);
  memcpy(at, b.data, b.size);
  CHECK(WebFFIRPCEndpointCommit(ep, b.size + 101) == -1);
  CHECK_RAISED("ValueError", "WebFFIRPCEndpointCommit: 122 bytes, 121 reserved");
  at = WebFFIRPCEndpointReserve(ep, b.size);
  memcpy(at, b.data, b.size);
  CHECK_EQ_INT(WebFFIRPCEndpointCommit(ep, b.size), WEBFFI_RPC_OPEN);
  CHECK(s.bytes.size == 21); /* kRPCSuccess, the key length, "server:webffi" */
  wf_rpc_buf_free(&b);
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}

/* A held send (WEBFFI_RPC_HELD): a large CPU copy's bytes go out where they
 * lie, and nothing queued behind them (a free of their tensor) is served
 * until the release. */
typedef struct {
  int calls;
  const uint8_t* data;
  size_t size;
} held_hook;

static int held_send(void* ctx, const uint8_t* data, size_t size) {
  held_hook* h = (held_hook*)ctx;
  h->calls++;
  h->data = data;
  h->size = size;
  return WEBFFI_RPC_HELD;
}

void rpc_endpoint_held_send(void) {
  sink s;
  held_hook hook = {0};
  WebFFIRPCEndpointConfig cfg = {0};
  cfg.send_held = held_send;
  cfg.send_held_ctx = &hook;
  WebFFIRPCEndpoint* ep = open_session(&s, &cfg);
  enum { N = 1 << 18 }; /* past the size sent through the output buffer */
  TVMFFIAny alloc[4] = {any_device(kDLCPU, 0), any_int(N), any_int(8), {0}};
  alloc[3].type_index = kTVMFFIDataType;
  alloc[3].v_dtype.code = kDLUInt, alloc[3].v_dtype.bits = 8, alloc[3].v_dtype.lanes = 1;
  wf_rpc_packet r;
  syscall(ep, &s, kWebFFIRPCDevAllocData, alloc, 4, &r);
  uint64_t data = r.args[0].v_uint64;
  wf_rpc_packet_clear(&r);
  static uint8_t in[N];
  for (size_t i = 0; i < N; ++i) in[i] = (uint8_t)(i * 7 + 1);
  wf_rpc_packet req;
  memset(&req, 0, sizeof(req));
  int64_t shape[1] = {N};
  req.code = kWebFFIRPCCopyToRemote;
  req.tensor.data = data;
  req.tensor.t.device.device_type = kDLCPU;
  req.tensor.t.ndim = 1;
  req.tensor.t.shape = shape;
  req.tensor.t.dtype = alloc[3].v_dtype;
  req.nbytes = N;
  req.data.data = (const char*)in;
  req.data.size = N;
  request(ep, &s, &req, &r);
  expect_none(&r);
  CHECK_EQ_INT(hook.calls, 0); /* copies to the device send nothing held */
  /* the copy back, and a free of its memory right behind it, in one feed */
  req.code = kWebFFIRPCCopyFromRemote;
  req.data.data = NULL;
  req.data.size = 0;
  wf_rpc_buf b = {0};
  CHECK(wf_rpc_packet_encode(&b, &req) == 0);
  TVMFFIAny free_args[2] = {any_device(kDLCPU, 0), any_handle(data)};
  encode_request(&b, kWebFFIRPCDevFreeData, free_args, 2);
  feed_ok(ep, &b);
  wf_rpc_buf_free(&b);
  CHECK_EQ_INT(hook.calls, 1);
  CHECK(hook.size == N && memcmp(hook.data, in, N) == 0);
  CHECK(s.bytes.size == 12); /* the header alone: u64 length, kCopyAck */
  CHECK_EQ_INT(WebFFIRPCEndpointIsPending(ep), 1);
  CHECK(WebFFIRPCEndpointHandleCount(ep) == 1); /* the free waits */
  CHECK(WebFFIRPCEndpointComplete(ep, 0, 0) == -1); /* no Complete ends a hold */
  CHECK_RAISED("ValueError", "WebFFIRPCEndpointComplete: no pending reply has token 0");
  CHECK(memcmp(hook.data, in, N) == 0);
  CHECK_EQ_INT(WebFFIRPCEndpointRelease(ep), WEBFFI_RPC_OPEN);
  CHECK(WebFFIRPCEndpointHandleCount(ep) == 0);
  s.bytes.size = 0;
  CHECK(WebFFIRPCEndpointRelease(ep) == -1);
  CHECK_RAISED("ValueError", "WebFFIRPCEndpointRelease: no send is held");
  WebFFIRPCEndpointDestroy(ep);
  wf_rpc_buf_free(&s.bytes);
}
