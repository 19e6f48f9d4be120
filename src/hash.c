/* SipHash (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012)
 * and the per-process key that seeds Map and Dict hashing. */
#include "hash.h"

#include <string.h>
#include <time.h>

#define WF_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define WF_SIPROUND(v0, v1, v2, v3) \
  do {                              \
    v0 += v1;                       \
    v1 = WF_ROTL(v1, 13);           \
    v1 ^= v0;                       \
    v0 = WF_ROTL(v0, 32);           \
    v2 += v3;                       \
    v3 = WF_ROTL(v3, 16);           \
    v3 ^= v2;                       \
    v0 += v3;                       \
    v3 = WF_ROTL(v3, 21);           \
    v3 ^= v0;                       \
    v2 += v1;                       \
    v1 = WF_ROTL(v1, 17);           \
    v1 ^= v2;                       \
    v2 = WF_ROTL(v2, 32);           \
  } while (0)

static inline uint64_t wf_load64_le(const unsigned char* p) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; --i) x = (x << 8) | p[i];
  return x;
}

typedef struct {
  uint64_t v0, v1, v2, v3;
} wf_sip_state;

static inline wf_sip_state wf_sip_init(uint64_t k0, uint64_t k1) {
  wf_sip_state s = {k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
                    k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull};
  return s;
}

static inline void wf_sip_word(wf_sip_state* s, uint64_t m, int c) {
  s->v3 ^= m;
  for (int i = 0; i < c; ++i) WF_SIPROUND(s->v0, s->v1, s->v2, s->v3);
  s->v0 ^= m;
}

static inline uint64_t wf_sip_finish(wf_sip_state* s, int d) {
  s->v2 ^= 0xff;
  for (int i = 0; i < d; ++i) WF_SIPROUND(s->v0, s->v1, s->v2, s->v3);
  return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

static inline uint64_t wf_sip(uint64_t k0, uint64_t k1, const void* data, size_t n, int c,
                              int d) {
  const unsigned char* p = (const unsigned char*)data;
  wf_sip_state s = wf_sip_init(k0, k1);
  size_t whole = n & ~(size_t)7;
  for (size_t i = 0; i < whole; i += 8) wf_sip_word(&s, wf_load64_le(p + i), c);
  /* the last 0..7 bytes, with the length's low byte on top */
  uint64_t last = (uint64_t)(n & 0xff) << 56;
  for (size_t i = whole; i < n; ++i) last |= (uint64_t)p[i] << (8 * (i - whole));
  wf_sip_word(&s, last, c);
  return wf_sip_finish(&s, d);
}

uint64_t wf_siphash(const uint8_t key[16], const void* data, size_t n, int c, int d) {
  return wf_sip(wf_load64_le(key), wf_load64_le(key + 8), data, n, c, d);
}

/* ------------------------------------------------------------ the key */
static uint64_t wf_hash_k0, wf_hash_k1;
/* 0: not drawn, 1: being drawn, 2: ready. Threads that find 1 wait: every
 * hash of a process must use the same key. */
static int wf_hash_key_state;

static void wf_hash_draw_key(void) {
  int expected = 0;
  if (__atomic_compare_exchange_n(&wf_hash_key_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    unsigned char k[16];
    if (wf_platform_entropy(k, sizeof(k)) != 0) {
      /* No entropy source at all: a weak key from the clock and the
       * address space is still better than a fixed one. */
      uint64_t a = (uint64_t)time(NULL), b = (uint64_t)(uintptr_t)&k;
      a = wf_hash_mix(a ^ 0x243f6a8885a308d3ull);
      b = wf_hash_mix(b ^ a);
      memcpy(k, &a, 8);
      memcpy(k + 8, &b, 8);
    }
    wf_hash_k0 = wf_load64_le(k);
    wf_hash_k1 = wf_load64_le(k + 8);
    __atomic_store_n(&wf_hash_key_state, 2, __ATOMIC_RELEASE);
    return;
  }
  while (__atomic_load_n(&wf_hash_key_state, __ATOMIC_ACQUIRE) != 2) {
  }
}

static inline void wf_hash_ready(void) {
  if (__builtin_expect(__atomic_load_n(&wf_hash_key_state, __ATOMIC_ACQUIRE) != 2, 0)) {
    wf_hash_draw_key();
  }
}

void wf_hash_key(uint8_t key[16]) {
  wf_hash_ready();
  for (int i = 0; i < 8; ++i) {
    key[i] = (uint8_t)(wf_hash_k0 >> (8 * i));
    key[8 + i] = (uint8_t)(wf_hash_k1 >> (8 * i));
  }
}

uint64_t wf_hash_keyed(const void* data, size_t n) {
  wf_hash_ready();
  return wf_sip(wf_hash_k0, wf_hash_k1, data, n, 1, 3);
}

uint64_t wf_hash_keyed_word(uint64_t payload, uint32_t tag) {
  wf_hash_ready();
  /* SipHash-1-3 of the 12 bytes payload (LE) then tag (LE), unrolled. */
  wf_sip_state s = wf_sip_init(wf_hash_k0, wf_hash_k1);
  wf_sip_word(&s, payload, 1);
  wf_sip_word(&s, (uint64_t)tag | (12ull << 56), 1);
  return wf_sip_finish(&s, 3);
}
