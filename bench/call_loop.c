/* TVMFFIFunctionCall in a C loop, inside wasm: the same source is linked
 * into webffi's core and into upstream tvm-ffi's (bench/call_loop.mjs), so
 * the loop and the callee are the same code and only the core differs.
 * Uses the C ABI alone. */
#include <stddef.h>
#include <tvm/ffi/c_api.h>

#ifdef __wasm__
#define BENCH_EXPORT(name) __attribute__((export_name(name)))
#else /* natively (profiling with valgrind, perf): bench/call_loop_native.c drives it */
#define BENCH_EXPORT(name)
#endif

static int bench_nop(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  (void)result;
  return 0;
}

static int bench_state = 7;

/* Reads its state, as a C callback made with a `self` does. */
static int bench_nop_self(void* self, const TVMFFIAny* args, int32_t num_args,
                          TVMFFIAny* result) {
  (void)args;
  (void)num_args;
  (void)result;
  return *(int*)self == 7 ? 0 : -1;
}

/* The functions the loop calls: [0] made without state, [1] with a `self`. */
static TVMFFIObjectHandle bench_functions[2];

BENCH_EXPORT("bench_setup") int bench_setup(void) {
  if (TVMFFIFunctionCreate(NULL, bench_nop, NULL, &bench_functions[0]) != 0) return -1;
  if (TVMFFIFunctionCreate(&bench_state, bench_nop_self, NULL, &bench_functions[1]) != 0) return -1;
  return 0;
}

static void bench_two_ints(TVMFFIAny* args) {
  for (int i = 0; i < 2; ++i) {
    args[i].type_index = kTVMFFIInt;
    args[i].zero_padding = 0;
    args[i].v_int64 = i + 1;
  }
}

/* `n` calls of function `which` with two ints; the number that failed. */
BENCH_EXPORT("bench_call_loop") int bench_call_loop(int which, int n) {
  TVMFFIAny args[2];
  TVMFFIAny result;
  TVMFFIObjectHandle f = bench_functions[which];
  int failed = 0;
  bench_two_ints(args);
  for (int i = 0; i < n; ++i) {
    result.type_index = kTVMFFINone;
    result.zero_padding = 0;
    result.v_int64 = 0;
    failed += TVMFFIFunctionCall(f, args, 2, &result) != 0;
  }
  return failed;
}

/* The floor: the same loop calling the callee through a function pointer
 * the compiler cannot see through (one indirect call per iteration). */
static TVMFFISafeCallType volatile bench_callee = bench_nop;

BENCH_EXPORT("bench_floor_loop") int bench_floor_loop(int n) {
  TVMFFIAny args[2];
  TVMFFIAny result;
  int failed = 0;
  bench_two_ints(args);
  for (int i = 0; i < n; ++i) {
    result.type_index = kTVMFFINone;
    result.zero_padding = 0;
    result.v_int64 = 0;
    failed += bench_callee(NULL, args, 2, &result) != 0;
  }
  return failed;
}
