#!/usr/bin/env bash
# Builds the C benchmarks natively with -O2 (gcc) and prints their tables.
# Benchmarks are not tests: they assert only that results are right.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p "$out"
core=(src/*.c src/native/*.c) # as CMakeLists.txt builds the native library
for b in bench_map bench_json_graph; do
  gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Iinclude \
    "${core[@]}" "bench/$b.c" -lm -o "$out/$b"
done
for b in bench_map bench_json_graph; do
  "$out/$b"
  echo
done
