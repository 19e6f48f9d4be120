/* libFuzzer target: the TVM RPC packet decoder and a live endpoint.
 * Whatever decodes re-encodes to the same bytes; an endpoint past the
 * handshake, fed the input, answers or closes with an error raised, and
 * never crashes or leaks (its Destroy frees what the peer held). */
#include <stdint.h>

#include <webffi/rpc.h>

#include "../../src/rpc_codec.h"
#include "fuzz_support.h"

static int fuzz_sink(void* ctx, const uint8_t* data, size_t size) {
  (void)data;
  *(size_t*)ctx += size;
  return 0;
}

static void fuzz_drop_error(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  FUZZ_CHECK(err != NULL);
  TVMFFIObjectDecRef(err);
}

static const uint8_t kOpening[] = {
    /* magic, key "client:webffi" */
    0x71, 0xf2, 0x0f, 0, 13, 0, 0, 0, 'c', 'l', 'i', 'e', 'n', 't', ':', 'w', 'e', 'b', 'f', 'f',
    'i',
    /* kInitServer "0.8.0", no arguments */
    21, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, '0', '.', '8', '.', '0', 0, 0, 0,
    0};

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  /* the codec: a packet body that decodes re-encodes byte for byte */
  wf_rpc_packet p;
  if (wf_rpc_packet_decode(data, size, &p) == 0) {
    wf_rpc_buf b = {0};
    FUZZ_CHECK(wf_rpc_packet_encode(&b, &p) == 0);
    FUZZ_CHECK(b.size == size + 8 && memcmp(b.data + 8, data, size) == 0);
    wf_rpc_buf_free(&b);
    wf_rpc_packet_clear(&p);
  } else {
    fuzz_drop_error();
  }
  /* the endpoint: arbitrary bytes after the opening */
  static const char* const allow[] = {"ffi.Array*", "ffi.Map*"};
  size_t sent = 0;
  WebFFIRPCEndpointConfig cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.key = "webffi";
  cfg.send = fuzz_sink;
  cfg.send_ctx = &sent;
  cfg.allow_list = allow;
  cfg.allow_count = 2;
  cfg.max_packet_bytes = 1 << 20;
  cfg.max_handles = 256;
  cfg.max_device_bytes = 1 << 24;
  WebFFIRPCEndpoint* ep = WebFFIRPCEndpointCreate(&cfg);
  FUZZ_CHECK(ep != NULL);
  FUZZ_CHECK(WebFFIRPCEndpointFeed(ep, kOpening, sizeof(kOpening)) == WEBFFI_RPC_OPEN);
  size_t after_open = sent;
  int rc = WebFFIRPCEndpointFeed(ep, data, size);
  FUZZ_CHECK(rc == WEBFFI_RPC_OPEN || rc == WEBFFI_RPC_CLOSED || rc == -1);
  if (rc == -1) fuzz_drop_error();
  FUZZ_CHECK(sent >= after_open);
  WebFFIRPCEndpointDestroy(ep);
  return 0;
}
