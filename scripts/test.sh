#!/usr/bin/env bash
# The whole test suite: C tests natively (plain and under ASan + UBSan),
# then the Node and headless-Chromium tests against the wasm builds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh

echo "== C tests (gcc)"
ctest --test-dir build/native --output-on-failure -j "$(nproc)"
echo "== C tests (clang, ASan + UBSan)"
ctest --test-dir build/native-asan --output-on-failure -j "$(nproc)"
echo "== Fuzzing the JSON readers, structural operations and the RPC packet decoder (bounded)"
bash scripts/fuzz.sh
echo "== Node and browser tests"
node --test tests/node/ tests/browser/
