/* Standard base64 (RFC 4648, with padding) for Bytes in the JSON graph. */
#ifndef WEBFFI_SRC_BASE64_H_
#define WEBFFI_SRC_BASE64_H_

#include <stddef.h>

#include "buffer.h"

void wf_base64_encode(const unsigned char* data, size_t n, wf_buf* out);
/* Strict: length a multiple of 4, padding only at the end. 0 on bad input. */
int wf_base64_decode(const char* text, size_t n, wf_buf* out);

#endif /* WEBFFI_SRC_BASE64_H_ */
