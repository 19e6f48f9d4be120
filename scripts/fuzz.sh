#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time (WEBFFI_FUZZ_SECONDS, 15 s by
# default) starting from its seed corpus in tests/fuzz/corpus. New inputs go
# to a scratch directory, so the repository stays unchanged; a crash leaves
# its input in build/fuzz/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${WEBFFI_FUZZ_SECONDS:-15}
# The RPC packet target gets a shorter bound of its own (the whole fuzz stage
# stays within budget).
rpc_seconds=${WEBFFI_FUZZ_RPC_SECONDS:-8}
run_target() { # target, seconds, extra libFuzzer flags...
  local target=$1 secs=$2
  shift 2
  local scratch log corpus=()
  scratch=$(mktemp -d)
  log=build/fuzz/fuzz_$target.log
  [ -d "tests/fuzz/corpus/$target" ] && corpus=("tests/fuzz/corpus/$target")
  if ! build/fuzz/tests/fuzz/fuzz_$target "$scratch" "${corpus[@]}" "$@" \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -max_len=4096 -artifact_prefix="build/fuzz/crash-$target-" >"$log" 2>&1; then
    rm -rf "$scratch"
    tail -n 40 "$log"
    echo "fuzz: fuzz_$target found a crash (input saved under build/fuzz/crash-$target-*)"
    exit 1
  fi
  rm -rf "$scratch"
  echo "fuzz: fuzz_$target ran ${secs}s: $(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log") inputs, no crash"
}
for target in json json_graph; do
  run_target "$target" "$seconds" -dict=tests/fuzz/json.dict
done
# graph_ops reads its input as a program of container operations (no corpus
# or dictionary of its own: libFuzzer starts from empty input).
run_target graph_ops "$seconds"
run_target rpc_packet "$rpc_seconds"
