/* Base64 encoding and strict decoding. */
#include "base64.h"

static const char wf_base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void wf_base64_encode(const unsigned char* data, size_t n, wf_buf* out) {
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)data[i] << 16;
    if (i + 1 < n) v |= (unsigned)data[i + 1] << 8;
    if (i + 2 < n) v |= data[i + 2];
    char q[4] = {wf_base64_alphabet[(v >> 18) & 63], wf_base64_alphabet[(v >> 12) & 63],
                 i + 1 < n ? wf_base64_alphabet[(v >> 6) & 63] : '=',
                 i + 2 < n ? wf_base64_alphabet[v & 63] : '='};
    wf_buf_append(out, q, 4);
  }
}

static int wf_base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

int wf_base64_decode(const char* text, size_t n, wf_buf* out) {
  if (n % 4 != 0) return 0;
  for (size_t i = 0; i < n; i += 4) {
    int last = i + 4 == n;
    int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      int d = k >= 4 - pad ? 0 : wf_base64_digit(text[i + k]);
      if (d < 0) return 0;
      v = (v << 6) | (unsigned)d;
    }
    char bytes[3] = {(char)(v >> 16), (char)(v >> 8), (char)v};
    wf_buf_append(out, bytes, (size_t)(3 - pad));
  }
  return 1;
}
