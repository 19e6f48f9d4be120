/* Keyed hashing for Map and Dict keys, and the per-process key. */
#include "hash.h"

#include <string.h>
#include <time.h>

#include "any.h"
#include "str.h"

/*
 * The mixing step is a folded multiply: the 128-bit product of two words,
 * its halves xored together (the core of wyhash, by Wang Yi, and of other
 * fast seeded hashes). With key words xored into both factors the result
 * cannot be predicted without the key, and folding loses information, so
 * the function cannot be inverted to aim keys at chosen slots. It costs a
 * multiply or two per word (SipHash-1-3 measured 4-15x slower here, which
 * put the map benchmarks 30-40% behind); maps also re-seed themselves when
 * a probe runs long (src/map.c), so even a collision found some other way
 * stops working.
 */
static inline uint64_t wf_fold_mul(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
  unsigned __int128 r = (unsigned __int128)a * b;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
  uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
  uint64_t lo = (mid << 32) | (uint32_t)p00;
  uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  return lo ^ hi;
#endif
}

static inline uint64_t wf_load_le(const unsigned char* p, size_t n) { /* n <= 8 */
  uint64_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(&x, p, n); /* x86, arm and wasm: one load for whole words */
#else
  for (size_t i = n; i-- > 0;) x = (x << 8) | p[i];
#endif
  return x;
}

/* ------------------------------------------------------------ the key */
static uint64_t wf_hash_k[4];
/* 0: not drawn, 1: being drawn, 2: ready. Threads that find 1 wait: every
 * hash of a process must use the same key. */
static int wf_hash_key_state;

static void wf_hash_draw_key(void) {
  int expected = 0;
  if (__atomic_compare_exchange_n(&wf_hash_key_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    uint64_t k[4];
    if (wf_platform_entropy(k, sizeof(k)) != 0) {
      /* No entropy source at all: a weak key from the clock and the
       * address space is still better than a fixed one. */
      k[0] = wf_hash_mix((uint64_t)time(NULL) ^ 0x243f6a8885a308d3ull);
      k[1] = wf_hash_mix((uint64_t)(uintptr_t)&k ^ k[0]);
      k[2] = wf_hash_mix(k[1] ^ (uint64_t)(uintptr_t)&wf_hash_key_state);
      k[3] = wf_hash_mix(k[2] ^ 0x13198a2e03707344ull);
    }
    /* odd multipliers never zero a product by themselves */
    for (int i = 0; i < 4; ++i) wf_hash_k[i] = k[i] | 1;
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

void wf_hash_key(uint64_t key[4]) {
  wf_hash_ready();
  memcpy(key, wf_hash_k, sizeof(wf_hash_k));
}

static inline __attribute__((always_inline)) uint64_t wf_hash_keyed_inline(
    const uint64_t key[4], uint64_t salt, const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = key[0] ^ salt ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull);
  size_t left = n;
  for (; left > 16; left -= 16, p += 16) {
    h = wf_fold_mul(wf_load_le(p, 8) ^ key[1], wf_load_le(p + 8, 8) ^ h);
  }
  size_t first = left < 8 ? left : 8;
  uint64_t a = wf_load_le(p, first), b = wf_load_le(p + first, left - first);
  h = wf_fold_mul(a ^ key[1], b ^ h);
  return wf_fold_mul(h ^ key[2], (uint64_t)n ^ key[3]);
}

static inline __attribute__((always_inline)) uint64_t wf_hash_word_inline(
    const uint64_t key[4], uint64_t salt, uint64_t payload, uint32_t tag) {
  uint64_t h = wf_fold_mul(payload ^ key[0] ^ salt, (uint64_t)tag ^ key[1]);
  return wf_fold_mul(h ^ key[2], key[3]);
}

uint64_t wf_hash_keyed_with(const uint64_t key[4], uint64_t salt, const void* data, size_t n) {
  return wf_hash_keyed_inline(key, salt, data, n);
}

uint64_t wf_hash_keyed_word_with(const uint64_t key[4], uint64_t salt, uint64_t payload,
                                 uint32_t tag) {
  return wf_hash_word_inline(key, salt, payload, tag);
}

uint64_t wf_hash_keyed(const void* data, size_t n, uint64_t salt) {
  wf_hash_ready();
  return wf_hash_keyed_inline(wf_hash_k, salt, data, n);
}

uint64_t wf_hash_keyed_word(uint64_t payload, uint32_t tag, uint64_t salt) {
  wf_hash_ready();
  return wf_hash_word_inline(wf_hash_k, salt, payload, tag);
}

/* Any hashing for maps (declared in any.h), here so it inlines the above. */
uint64_t wf_any_hash_salted(const TVMFFIAny* v, uint64_t salt) {
  wf_hash_ready();
  TVMFFIByteArray s;
  if (wf_any_string_view(v, &s)) return wf_hash_keyed_inline(wf_hash_k, salt, s.data, s.size);
  if (wf_any_bytes_view(v, &s)) return ~wf_hash_keyed_inline(wf_hash_k, salt, s.data, s.size);
  return wf_hash_word_inline(wf_hash_k, salt, v->v_uint64, (uint32_t)v->type_index);
}
