/* Loading the recorded TVM RPC session; helpers shared by the RPC tests. */
#include "test_rpc_capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef WEBFFI_SOURCE_DIR
#error "tests/c/CMakeLists.txt defines WEBFFI_SOURCE_DIR"
#endif

static const char kCapturePath[] = WEBFFI_SOURCE_DIR "/../shared/rpc/tvm-session-basic.hexlog";

static int hexval(int ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

void capture_load(capture* c) {
  FILE* f = fopen(kCapturePath, "r");
  if (f == NULL) {
    fprintf(stderr,
            "the recorded TVM RPC session is missing: %s (it lives in ../shared/rpc beside the "
            "repository)\n",
            kCapturePath);
    exit(1);
  }
  memset(c, 0, sizeof(*c));
  char dir[8];
  unsigned long n;
  static char hex[1 << 16];
  while (fscanf(f, "%7s %lu %65535s", dir, &n, hex) == 3) {
    c->lines = (capture_line*)realloc(c->lines, (c->count + 1) * sizeof(capture_line));
    CHECK(c->lines != NULL);
    capture_line* l = &c->lines[c->count++];
    CHECK(strcmp(dir, "C>S") == 0 || strcmp(dir, "S>C") == 0);
    l->to_server = strcmp(dir, "C>S") == 0;
    CHECK_EQ_INT(strlen(hex), 2 * n);
    l->size = n;
    l->bytes = (uint8_t*)malloc(n ? n : 1);
    CHECK(l->bytes != NULL);
    for (size_t i = 0; i < n; ++i) {
      int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
      CHECK(hi >= 0 && lo >= 0);
      l->bytes[i] = (uint8_t)(hi * 16 + lo);
    }
  }
  fclose(f);
  CHECK(c->count > 2);
}

void capture_free(capture* c) {
  for (size_t i = 0; i < c->count; ++i) free(c->lines[i].bytes);
  free(c->lines);
  memset(c, 0, sizeof(*c));
}

int sink_send(void* ctx, const uint8_t* data, size_t size) {
  sink* s = (sink*)ctx;
  if (s->fail) {
    s->fail = 0;
    TVMFFIErrorSetRaisedFromCStr("OSError", "connection reset");
    return -1;
  }
  return wf_rpc_buf_put(&s->bytes, data, size);
}

void sink_pop_packet(sink* s, wf_rpc_packet* p) {
  if (s->bytes.size < 8) {
    fprintf(stderr, "expected a reply packet, the endpoint sent %zu bytes\n", s->bytes.size);
    exit(1);
  }
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= (uint64_t)s->bytes.data[i] << (8 * i);
  CHECK(len <= s->bytes.size - 8);
  /* keep the body alive in a copy: the packet may point into it */
  static uint8_t* body;
  free(body);
  body = (uint8_t*)malloc(len ? len : 1);
  CHECK(body != NULL);
  memcpy(body, s->bytes.data + 8, len);
  memmove(s->bytes.data, s->bytes.data + 8 + len, s->bytes.size - 8 - len);
  s->bytes.size -= 8 + len;
  CHECK(wf_rpc_packet_decode(body, len, p) == 0);
}

void encode_request(wf_rpc_buf* b, int32_t code, const TVMFFIAny* args, int32_t n) {
  wf_rpc_packet p;
  memset(&p, 0, sizeof(p));
  p.code = code;
  p.args = (TVMFFIAny*)args;
  p.num_args = n;
  CHECK(wf_rpc_packet_encode(b, &p) == 0);
}
