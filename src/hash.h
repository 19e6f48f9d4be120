/* Deterministic hashing for registries and structural hashes (Map and Dict
 * keys hash as upstream's AnyHash: src/map.c). */
#ifndef WEBFFI_SRC_HASH_H_
#define WEBFFI_SRC_HASH_H_

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64-bit: deterministic, for names the runtime itself chooses (the
 * global registry, type keys) and for structural hashes, which must not
 * change between runs. */
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

/* Host entropy (src/native or src/wasm): 0, or -1 when none could be read. */
int wf_platform_entropy(void* buf, size_t n);

#endif /* WEBFFI_SRC_HASH_H_ */
