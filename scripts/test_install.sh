#!/usr/bin/env bash
# test_install.sh BUILD_DIR: installs the build into a temporary prefix, moves the whole prefix
# elsewhere, and runs the built-in lesson headless and an export from there: the binary must find
# its lessons and models relative to itself, not in the source tree. Then a model removed from
# the moved copy must be missed there (proof that it is the copy being read). The README and the
# manual (docs/*.md, docs/img/*.png) must be installed, in their folders, so the links work.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: test_install.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
bin="$work/moved/bin/stepformer"
doc="$work/moved/share/doc/stepformer"
for f in README.md $(cd "$src" && ls docs/*.md docs/img/*.png); do
    [ -f "$doc/$f" ] || { echo "FAIL: $f is not installed beside the README ($doc)"; exit 1; }
done
cd "$work"  # nowhere near the source tree
unset STEPFORMER_DATA
"$bin" --version | grep -q "lessons and models: $work/moved/share/stepformer" ||
    { echo "FAIL: the moved binary does not find its data beside it"; "$bin" --version; exit 1; }
out=$("$bin" --headless)
grep -q "output: 2026-11-22" <<<"$out" || { echo "FAIL: the built-in lesson headless: $out"; exit 1; }
"$bin" export - --out "$work/png" --size 480x320 >/dev/null
n=$(ls "$work/png" | wc -l)
[ "$n" -gt 100 ] || { echo "FAIL: export wrote $n PNGs"; exit 1; }
"$bin" lesson "$work/moved/share/stepformer/lessons/masks.md" --headless >/dev/null ||
    { echo "FAIL: an installed lesson does not run"; exit 1; }
rm "$work/moved/share/stepformer/assets/models/dates.safetensors"
if err=$("$bin" --headless 2>&1); then echo "FAIL: ran without the model it should read"; exit 1; fi
grep -q "$work/moved/share/stepformer/lessons/../assets/models/dates.safetensors" <<<"$err" ||
    { echo "FAIL: not reading the moved copy: $err"; exit 1; }
echo "install: moved prefix runs the built-in lesson ($n PNGs exported) and reads its own data"
