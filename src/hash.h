/* Hashing shared by maps, registries and Any hashing. */
#ifndef WEBFFI_SRC_HASH_H_
#define WEBFFI_SRC_HASH_H_

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64-bit: deterministic, for names the runtime itself chooses (the
 * global registry, type keys) and for structural hashes, which must not
 * change between runs. Never for keys that callers choose: see below. */
static inline uint64_t wf_hash_bytes(const char* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= (unsigned char)data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* Finaliser from splitmix64: spreads integer keys over all bits. */
static inline uint64_t wf_hash_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/*
 * Keyed hashing for Map and Dict keys (src/hash.c): a folded-multiply hash
 * under a 256-bit key drawn from host entropy once per process (getrandom
 * or /dev/urandom natively, WASI random_get in wasm), and a per-map salt.
 * Without the key nobody can predict which keys collide, so crafted keys
 * cannot turn a map quadratic.
 */
uint64_t wf_hash_keyed(const void* data, size_t n, uint64_t salt);
/* The same for a 64-bit payload tagged with a 32-bit type. */
uint64_t wf_hash_keyed_word(uint64_t payload, uint32_t tag, uint64_t salt);

/* The two under a given key (tests check that keys matter). */
uint64_t wf_hash_keyed_with(const uint64_t key[4], uint64_t salt, const void* data, size_t n);
uint64_t wf_hash_keyed_word_with(const uint64_t key[4], uint64_t salt, uint64_t payload,
                                 uint32_t tag);

/* The process's hash key (drawn on first use). */
void wf_hash_key(uint64_t key[4]);

/* Host entropy (src/native or src/wasm): 0, or -1 when none could be read. */
int wf_platform_entropy(void* buf, size_t n);

#endif /* WEBFFI_SRC_HASH_H_ */
