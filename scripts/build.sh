#!/usr/bin/env bash
# Builds every configuration: native (gcc, and clang with ASan + UBSan),
# the libFuzzer targets (clang),
# wasm with Emscripten (the shipping build) and wasm with clang + wasi-libc.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

configure() { # dir, cmake args...
  local dir=$1
  shift
  [ -f "$dir/CMakeCache.txt" ] || "$@" -B "$dir" -S . -DCMAKE_BUILD_TYPE=Release >/dev/null
}

configure build/native cmake -DCMAKE_C_COMPILER=gcc
configure build/native-asan cmake -DCMAKE_C_COMPILER=clang-14 -DWEBFFI_SANITIZE=ON
configure build/fuzz cmake -DCMAKE_C_COMPILER=clang-14 -DWEBFFI_FUZZ=ON
configure build/wasm emcmake cmake
configure build/wasi cmake -DCMAKE_TOOLCHAIN_FILE=cmake/wasi-clang.cmake
for dir in build/native build/native-asan build/fuzz build/wasm build/wasi; do
  cmake --build "$dir" -j "$jobs" >/dev/null || cmake --build "$dir" -j 1
done
node scripts/bundle.mjs
# The API reference, from the hand-written types and its pages (typedoc.json), when they changed.
api_sources=$(node -e 'const c = require("./typedoc.json"); console.log([...c.entryPoints, c.readme, ...(c.projectDocuments ?? []), "typedoc.json", "tests/types/tsconfig.api.json"].join("\n"))')
if [ ! -f build/api/index.html ] || [ -n "$(find $api_sources -newer build/api/index.html)" ]; then
  node_modules/.bin/typedoc --logLevel Warn
fi
echo "build: native, native-asan, fuzz, wasm (emscripten), wasi, dist/ and build/api/ are up to date"
