/* JSON graph round trip of a 10^5-element Array, in MB/s of JSON text.
 * The baseline is plain JSON (ffi.json.Stringify / Parse) of the same Array. */
#include <stdint.h>

#include "../src/any.h"
#include "../src/seq.h"
#include "../src/str.h"
#include "bench_util.h"

enum { N = 100000 };

static double call_seconds(TVMFFIObjectHandle f, TVMFFIAny* arg, TVMFFIAny* result) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    memset(result, 0, sizeof(*result));
    double t0 = bench_now();
    BENCH_CHECK(TVMFFIFunctionCall(f, arg, 1, result) == 0);
    double t = bench_now() - t0;
    if (rep < 4) wf_any_release(result);
    if (t < best) best = t;
  }
  return best;
}

static size_t text_size(const TVMFFIAny* v) {
  TVMFFIByteArray s;
  BENCH_CHECK(wf_any_string_view(v, &s));
  return s.size;
}

/* One table row: MB of JSON text handled in `seconds`. */
static void print_row(const char* name, double mb, double seconds) {
  printf("%-28s %9.2f %9.2f %9.1f %11.1f\n", name, mb, seconds * 1e3, mb / seconds, seconds * 1e9 / N);
}

int main(void) {
  /* ints, floats and strings, a third each, all distinct */
  TVMFFIObject* arr = wf_seq_new(kTVMFFIArray, N);
  BENCH_CHECK(arr != NULL);
  for (int64_t i = 0; i < N; ++i) {
    TVMFFIAny v;
    char text[32];
    if (i % 3 == 0) wf_any_set_int(&v, i * 1000003);
    if (i % 3 == 1) wf_any_set_float(&v, (double)i * 0.37);
    if (i % 3 == 2) BENCH_CHECK(wf_str_make(0, text, (size_t)snprintf(text, 32, "item-%lld", (long long)i), &v) == 0);
    BENCH_CHECK(wf_seq_push_owned(arr, &v) == 0);
  }
  TVMFFIAny value;
  wf_any_set_object(&value, arr);

  TVMFFIObjectHandle to = bench_global("ffi.ToJSONGraphString");
  TVMFFIObjectHandle from = bench_global("ffi.FromJSONGraphString");
  TVMFFIObjectHandle stringify = bench_global("ffi.json.Stringify");
  TVMFFIObjectHandle parse = bench_global("ffi.json.Parse");

  TVMFFIAny graph_text, back, json_text, parsed;
  double t_to = call_seconds(to, &value, &graph_text);
  double t_from = call_seconds(from, &graph_text, &back);
  double t_str = call_seconds(stringify, &value, &json_text);
  double t_parse = call_seconds(parse, &json_text, &parsed);
  BENCH_CHECK(wf_seq_size(back.v_obj) == N && wf_seq_size(parsed.v_obj) == N);

  double g_mb = (double)text_size(&graph_text) / 1e6, j_mb = (double)text_size(&json_text) / 1e6;
  printf("JSON graph round trip of a %d-element Array (ints, floats, strings; best of 5)\n", N);
  printf("%-28s %9s %9s %9s %11s\n", "", "MB", "ms", "MB/s", "ns/element");
  print_row("ToJSONGraphString", g_mb, t_to);
  print_row("FromJSONGraphString", g_mb, t_from);
  print_row("round trip", g_mb, t_to + t_from);
  print_row("baseline: json.Stringify", j_mb, t_str);
  print_row("baseline: json.Parse", j_mb, t_parse);
  printf("graph round trip / plain JSON round trip, time per element: %.2fx\n",
         (t_to + t_from) / (t_str + t_parse));
  wf_any_release(&graph_text);
  wf_any_release(&back);
  wf_any_release(&json_text);
  wf_any_release(&parsed);
  wf_any_release(&value);
  TVMFFIObjectDecRef(to);
  TVMFFIObjectDecRef(from);
  TVMFFIObjectDecRef(stringify);
  TVMFFIObjectDecRef(parse);
  return 0;
}
