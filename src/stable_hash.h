/* The hash functions whose values upstream tvm-ffi's hashes are made of,
 * so ffi.StructuralHash and ffi.RecursiveHash give the values upstream's
 * native library gives (a cache keyed by structural hash can be shared by
 * a server and a page). The arithmetic is fixed by those values. */
#ifndef WEBFFI_SRC_STABLE_HASH_H_
#define WEBFFI_SRC_STABLE_HASH_H_

#include <stddef.h>
#include <stdint.h>

/* Folds value into key (upstream's StableHashCombine; the 32-bit golden
 * ratio constant is part of the values). */
static inline uint64_t wf_stable_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ull + (key << 6) + (key >> 2));
}

/* Bytes as little-endian 64-bit words, a short tail zero-padded, folded
 * modulo 2^31 - 1 (upstream's StableHashBytes). */
static inline uint64_t wf_stable_bytes(const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 0;
  for (; n > 0; p += 8) {
    size_t k = n < 8 ? n : 8;
    uint64_t word = 0;
    for (size_t i = 0; i < k; ++i) word |= (uint64_t)p[i] << (8 * i);
    h = (h * 1099511628211ull + word) % 2147483647ull;
    n -= k;
  }
  return h;
}

/* A type key's hash as upstream's native library records it
 * (TVMFFITypeInfo.type_key_hash): std::hash of the text with 64-bit
 * libstdc++, a MurmurHash2 variant with a fixed seed. */
static inline uint64_t wf_std_hash_bytes(const void* data, size_t n) {
  const uint64_t mul = 0xc6a4a7935bd1e995ull;
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 0xc70f6907ull ^ (n * mul);
  size_t whole = n & ~(size_t)7;
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t word = 0;
    for (int b = 0; b < 8; ++b) word |= (uint64_t)p[i + b] << (8 * b);
    word *= mul;
    word ^= word >> 47;
    h ^= word * mul;
    h *= mul;
  }
  if (n & 7) {
    uint64_t tail = 0;
    for (size_t b = n & 7; b-- > 0;) tail = (tail << 8) | p[whole + b];
    h ^= tail;
    h *= mul;
  }
  h ^= h >> 47;
  h *= mul;
  h ^= h >> 47;
  return h;
}

#endif /* WEBFFI_SRC_STABLE_HASH_H_ */
