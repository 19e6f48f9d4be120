#!/usr/bin/env bash
# Installs what building and testing need on Debian 12, and only what is
# missing: compilers and wasm toolchains from apt, dev dependencies from npm.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake make gcc libc6-dev            # native build
  clang-14 lld-14 libclang-rt-14-dev  # sanitizers, libFuzzer (libclang_rt.fuzzer), wasm32 clang
  emscripten binaryen                 # the shipping wasm build
  node-acorn                          # Emscripten's JS optimizer, run by the threaded core's link
  wasi-libc libclang-rt-14-dev-wasm32 # the clang + wasi-libc build
  chromium                            # browser tests (driven by playwright-core)
  libegl1 libegl-mesa0 libgl1-mesa-dri # WebGPU in Node: Dawn on Mesa llvmpipe
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm dev dependencies, reinstalled when the lock file changes (a copy of the
# lock file installed last is kept as the stamp). onnxruntime-node (a
# dependency of @huggingface/transformers, which the tests use in the browser
# only) would download optional CUDA files at install: not needed, and not
# reachable offline. Its installer reads ONNXRUNTIME_NODE_INSTALL (an env
# var, not an .npmrc key, which npm warns about on every command).
if [ -f package-lock.json ] && ! cmp -s package-lock.json node_modules/.webffi-installed-lock 2>/dev/null; then
  echo "setup: installing npm dev dependencies"
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.webffi-installed-lock
fi
