#!/usr/bin/env bash
# run.sh: installs what is missing, builds, and runs stepformer (arguments are passed on).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec build/stepformer "$@"
