#!/usr/bin/env bash
# test.sh: installs what is missing, then builds and runs every test twice: an optimised build
# with warnings as errors, and a build under AddressSanitizer + UndefinedBehaviorSanitizer; then
# builds the browser page and tests it in headless Chromium (scripts/web.sh test); then runs
# each fuzzing harness for 30 s (scripts/fuzz.sh), when clang has libFuzzer.
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
echo "== the browser page: WebAssembly, in headless Chromium against the native program (scripts/web.sh test) =="
scripts/web.sh test
echo "== fuzzing: every reader of outside input, 30 s each (scripts/fuzz.sh) =="
probe=$(mktemp -d)
if echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' >"$probe/p.c" &&
   clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>/dev/null; then
  rm -rf "$probe"
  scripts/fuzz.sh 30
else
  rm -rf "$probe"
  echo "skipped: clang with libFuzzer is not installed (scripts/deps.sh --test installs it)"
fi
