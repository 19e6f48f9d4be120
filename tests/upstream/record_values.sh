#!/usr/bin/env bash
# Records tests/fixtures/upstream_values.tsv: builds tests/c/upstream_values_check.c
# (C ABI only) against upstream tvm-ffi's own native library and prints
# what that library gives (ReprPrint, JSON, hashes, function metadata).
# Upstream's library is built beforehand in its checkout (cmake -B build;
# cmake --build build --target tvm_ffi_shared); nothing of it enters this
# repository, only the values.
#
#   WEBFFI_UPSTREAM_INCLUDE=/path/tvm-ffi/include \
#     bash tests/upstream/record_values.sh > tests/fixtures/upstream_values.tsv
set -euo pipefail
include=${WEBFFI_UPSTREAM_INCLUDE:?WEBFFI_UPSTREAM_INCLUDE must name the include/ folder of an upstream tvm-ffi checkout}
lib=${WEBFFI_UPSTREAM_LIB:-$include/../build/lib}
dlpack=${WEBFFI_UPSTREAM_DLPACK:-$include/../3rdparty/dlpack/include}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -std=c11 -O1 -I"$include" -I"$dlpack" tests/c/upstream_values_check.c -L"$lib" -ltvm_ffi \
  -Wl,-rpath,"$lib" -lm -o "$work/record"
commit=$(git -C "$include/.." rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
echo "# What upstream tvm-ffi $commit's native library ($(uname -m), $(gcc -dumpfullversion)) gives for"
echo "# tests/c/upstream_values_check.c's values, recorded by"
echo "#   WEBFFI_UPSTREAM_INCLUDE=/path/tvm-ffi/include bash tests/upstream/record_values.sh > tests/fixtures/upstream_values.tsv"
echo "# section<TAB>case<TAB>value, the value with \\\\ \\n \\t \\r escaped."
"$work/record" 2>/dev/null
