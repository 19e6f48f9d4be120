/* Map insert and lookup from 10^3 to 10^6 keys. Total time should grow
 * linearly, so ns/op should stay flat; a bare int64 open-addressing table
 * in this file is the baseline for the cost of Any keys and insertion order. */
#include <stdint.h>

#include "../src/any.h"
#include "../src/map.h"
#include "../src/str.h"
#include "bench_util.h"

/* Baseline: int64 -> int64, linear probing, power-of-two capacity. */
typedef struct {
  int64_t* keys;
  int64_t* values;
  uint8_t* used;
  size_t mask;
} plain_table;

static uint64_t plain_hash(int64_t k) {
  uint64_t x = (uint64_t)k;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void plain_init(plain_table* t, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  t->keys = calloc(cap, sizeof(int64_t));
  t->values = calloc(cap, sizeof(int64_t));
  t->used = calloc(cap, 1);
  BENCH_CHECK(t->keys && t->values && t->used);
  t->mask = cap - 1;
}

static void plain_put(plain_table* t, int64_t k, int64_t v) {
  size_t i = plain_hash(k) & t->mask;
  while (t->used[i] && t->keys[i] != k) i = (i + 1) & t->mask;
  t->used[i] = 1;
  t->keys[i] = k;
  t->values[i] = v;
}

static int64_t plain_get(const plain_table* t, int64_t k) {
  size_t i = plain_hash(k) & t->mask;
  while (t->used[i]) {
    if (t->keys[i] == k) return t->values[i];
    i = (i + 1) & t->mask;
  }
  return -1;
}

/* Keys are spread (i * a large odd number) so neighbours do not share slots. */
static int64_t key_of(int64_t i) { return i * 0x9E3779B97F4A7C15ll; }

static void make_key(int str_keys, int64_t i, TVMFFIAny* out) {
  if (!str_keys) {
    wf_any_set_int(out, key_of(i));
    return;
  }
  char text[32];
  int n = snprintf(text, sizeof(text), "key-%lld", (long long)i);
  BENCH_CHECK(wf_str_make(0, text, (size_t)n, out) == 0);
}

typedef struct {
  double insert_ns, lookup_ns;
} map_result;

/* Keeps each phase's best: inserts from t0 to t1, lookups from t1 to t2, n of each. */
static void keep_best(map_result* best, double t0, double t1, double t2, int64_t n) {
  double ins = (t1 - t0) * 1e9 / (double)n, look = (t2 - t1) * 1e9 / (double)n;
  if (ins < best->insert_ns) best->insert_ns = ins;
  if (look < best->lookup_ns) best->lookup_ns = look;
}

static map_result run_map(int64_t n, int str_keys) {
  TVMFFIAny* keys = malloc((size_t)n * sizeof(TVMFFIAny));
  BENCH_CHECK(keys != NULL);
  for (int64_t i = 0; i < n; ++i) make_key(str_keys, i, &keys[i]);
  map_result best = {1e30, 1e30};
  for (int rep = 0; rep < 5; ++rep) {
    TVMFFIObject* map = wf_map_new(kTVMFFIDict, 0); /* grows as it goes */
    BENCH_CHECK(map != NULL);
    double t0 = bench_now();
    for (int64_t i = 0; i < n; ++i) {
      TVMFFIAny v;
      wf_any_set_int(&v, i);
      BENCH_CHECK(wf_map_set(map, &keys[i], &v) == 0);
    }
    double t1 = bench_now();
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += wf_map_find(map, &keys[(i * 7919) % n])->value.v_int64;
    double t2 = bench_now();
    BENCH_CHECK(sum == (n - 1) * n / 2);
    BENCH_CHECK(wf_map_size(map) == n);
    wf_obj_decref(map);
    keep_best(&best, t0, t1, t2, n);
  }
  for (int64_t i = 0; i < n; ++i) wf_any_release(&keys[i]);
  free(keys);
  return best;
}

static map_result run_plain(int64_t n) {
  map_result best = {1e30, 1e30};
  for (int rep = 0; rep < 5; ++rep) {
    plain_table t;
    double t0 = bench_now();
    plain_init(&t, (size_t)n); /* sized once up front: the baseline never grows */
    for (int64_t i = 0; i < n; ++i) plain_put(&t, key_of(i), i);
    double t1 = bench_now();
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += plain_get(&t, key_of((i * 7919) % n));
    double t2 = bench_now();
    BENCH_CHECK(sum == (n - 1) * n / 2);
    free(t.keys);
    free(t.values);
    free(t.used);
    keep_best(&best, t0, t1, t2, n);
  }
  return best;
}

int main(void) {
  static const int64_t sizes[] = {1000, 10000, 100000, 1000000};
  printf("Map (Dict) insert and lookup, ns per op (best of 5)\n");
  printf("%-5s %8s %8s %8s %9s %9s %9s %9s %10s %10s\n", "keys", "n", "insert", "lookup",
         "base ins", "base look", "ins/base", "look/base", "ins/@1e3", "look/@1e3");
  for (int str_keys = 0; str_keys < 2; ++str_keys) {
    map_result first = {0, 0};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
      map_result m = run_map(sizes[s], str_keys);
      map_result p = run_plain(sizes[s]);
      if (s == 0) first = m;
      printf("%-5s %8lld %8.1f %8.1f %9.1f %9.1f %9.2f %9.2f %10.2f %10.2f\n",
             str_keys ? "str" : "int", (long long)sizes[s], m.insert_ns, m.lookup_ns,
             p.insert_ns, p.lookup_ns, m.insert_ns / p.insert_ns, m.lookup_ns / p.lookup_ns,
             m.insert_ns / first.insert_ns, m.lookup_ns / first.lookup_ns);
    }
  }
  printf("base: a bare int64 -> int64 linear-probing table, presized (int keys in both rows);\n"
         "@1e3: ns/op relative to 1000 keys (flat = linear total time; the rise at 1e6 is\n"
         "cache misses, which the baseline shows too)\n");
  return 0;
}
