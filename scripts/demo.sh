#!/usr/bin/env bash
# The main demo: installs what is missing, builds, and runs the demo in Node.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
node scripts/demo.mjs
