#!/usr/bin/env bash
# soak.sh [EVENTS] [SEED]: the window's code under random input (tests/soak.c) in the
# AddressSanitizer build: default 100,000 events. Prints the resident memory as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPFORMER_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" --target soak >/dev/null
LSAN_OPTIONS=suppressions=tests/lsan.supp build-asan/tests/soak "${1:-100000}" "${2:-1}" 2>/dev/null
