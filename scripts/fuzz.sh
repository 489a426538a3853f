#!/usr/bin/env bash
# fuzz.sh [SECONDS]: builds the libFuzzer harnesses of tests/fuzz with clang (in build-fuzz, under
# AddressSanitizer + UndefinedBehaviorSanitizer) and runs each for SECONDS (default 30), as many
# at a time as there are cores, on a copy of its seed corpus tests/fuzz/corpus/NAME (the
# committed corpus is never grown here). Prints each harness's executions and findings; exits 1
# on any crash, leak, timeout or out-of-memory, with the inputs that caused them kept in
# build-fuzz/findings/NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${1:-30}
harnesses=(safetensors program lesson vocab tokenizer torch_bin spm replay cli)
jobs=$(nproc)

CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPFORMER_FUZZ=ON >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf build-fuzz/findings

# One harness: its corpus copied, run for secs; stdout and stderr (its own messages: usage
# errors, replay warnings) closed except libFuzzer's and the sanitizers' reports.
run_one() {
  local h=$1 dir=$work/$1
  mkdir -p "$dir/corpus" "$dir/findings"
  cp tests/fuzz/corpus/"$h"/* "$dir/corpus/"
  local rc=0
  "$root/build-fuzz/tests/fuzz/fuzz_$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$dir/findings/" "$dir/corpus" \
    >"$dir/log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
}

pids=()
for h in "${harnesses[@]}"; do
  run_one "$h" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done

failed=0
for h in "${harnesses[@]}"; do
  dir=$work/$h
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  findings=$(find "$dir/findings" -type f | wc -l)
  printf 'fuzz_%-12s %10s executions in %ss, %s findings\n' "$h" "${execs:-?}" "$secs" "$findings"
  if [ "$(cat "$dir/rc")" != 0 ] || [ "$findings" != 0 ]; then
    failed=1
    mkdir -p build-fuzz/findings/"$h"
    cp "$dir/findings/"* build-fuzz/findings/"$h"/ 2>/dev/null || true
    echo "---- fuzz_$h failed (exit $(cat "$dir/rc")); inputs in build-fuzz/findings/$h/:" >&2
    grep -v '^#[0-9]' "$dir/log" | tail -40 >&2
  fi
done
exit $failed
