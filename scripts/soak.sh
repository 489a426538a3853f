#!/usr/bin/env bash
# soak.sh [EVENTS] [SEED]: the window's code under random input (tests/soak.c) in the
# AddressSanitizer build: default 100,000 events. Prints the resident memory as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPFORMER_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" --target soak >/dev/null
# the app reports refused inputs on stderr (thousands of lines): kept in build-asan/soak.err
LSAN_OPTIONS=suppressions=tests/lsan.supp build-asan/tests/soak "${1:-100000}" "${2:-1}" 2>build-asan/soak.err ||
    { grep -v "^stepformer:" build-asan/soak.err | tail -40; exit 1; }
