#!/usr/bin/env bash
# test.sh: installs what is missing, then builds and runs every test twice: an optimised build
# with warnings as errors, and a build under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
jobs=$(nproc)
echo "== optimised build (-Werror) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTEPFORMER_WERROR=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
(cd build && ctest --output-on-failure -j"$jobs")
echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPFORMER_WERROR=ON \
      -DSTEPFORMER_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
(cd build-asan && ctest --output-on-failure -j"$jobs")
