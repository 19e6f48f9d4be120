/* Hashing shared by maps, registries and Any hashing. */
#ifndef WEBFFI_SRC_HASH_H_
#define WEBFFI_SRC_HASH_H_

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64-bit: simple, and good enough for keys in registries and maps. */
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

#endif /* WEBFFI_SRC_HASH_H_ */
