/* The recorded TVM RPC session (../shared/rpc/tvm-session-basic.hexlog),
 * loaded for the RPC tests, and small helpers to speak to an endpoint. */
#ifndef WEBFFI_TESTS_C_TEST_RPC_CAPTURE_H_
#define WEBFFI_TESTS_C_TEST_RPC_CAPTURE_H_

#include <stddef.h>
#include <stdint.h>

#include <webffi/rpc.h>

#include "../../src/rpc_codec.h"

typedef struct {
  int to_server; /* 1: C>S, 0: S>C */
  uint8_t* bytes;
  size_t size;
} capture_line;

typedef struct {
  capture_line* lines;
  size_t count;
} capture;

/* Loads the capture or exits with a message naming the missing file. */
void capture_load(capture* c);
void capture_free(capture* c);

/* Bytes an endpoint sent, collected by sink_send. */
typedef struct {
  wf_rpc_buf bytes;
  int fail; /* make the next send fail */
} sink;
int sink_send(void* ctx, const uint8_t* data, size_t size);

/* Pops one complete packet body (after the u64 length) from the sink into p;
 * exits when none is there. */
void sink_pop_packet(sink* s, wf_rpc_packet* p);
/* Appends an encoded packet for `code` with the given wire args. */
void encode_request(wf_rpc_buf* b, int32_t code, const TVMFFIAny* args, int32_t n);

#endif
