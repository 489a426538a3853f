#!/usr/bin/env bash
# deps.sh: installs the Debian 12 packages stepformer needs, skipping those already present.
#   scripts/deps.sh          what building and running need
#   scripts/deps.sh --test   plus what the test suite needs (and clang with libFuzzer, for fuzzing,
#                            and what building and testing the browser page need)
#   scripts/deps.sh --web    plus what building the browser page needs (scripts/web.sh)
#   scripts/deps.sh --bench  plus the peers `stepformer bench` and `scripts/web.sh bench` measure
#                            against: PyTorch, OpenBLAS (PyTorch's BLAS at its best, and
#                            cblas_sgemm), npm (ONNX Runtime Web)
set -euo pipefail
packages=(build-essential cmake pkg-config libcjson-dev libmd4c-dev libpcre2-dev libutf8proc-dev libsdl2-dev libsdl2-ttf-dev
          libsdl2-image-dev libfontconfig-dev fontconfig fonts-dejavu-core fonts-dejavu-extra
          wamerican)  # /usr/share/dict/words: the text lesson's model is trained on it (scripts/train_text_model.sh)
web=(emscripten ninja-build dpkg-dev python3-fonttools libfreetype-dev wabt)  # scripts/web.sh build (wabt: wasm-validate)
if [ "${1:-}" = "--web" ]; then
  packages+=("${web[@]}")
fi
if [ "${1:-}" = "--bench" ]; then
  packages+=("${web[@]}" chromium-headless-shell python3-websocket)  # the browser benchmark's page
  packages+=(python3-torch libopenblas0-pthread)
  command -v npm >/dev/null || packages+=(npm)  # a machine's own Node.js and npm serve as well
fi
if [ "${1:-}" = "--test" ]; then
  packages+=("${web[@]}" chromium-headless-shell python3-websocket imagemagick)  # scripts/web.sh test
  packages+=(xvfb xauth)   # the real-window test runs under xvfb-run
  packages+=(weasyprint)   # export --pdf (test_handout prints a handout with it)
  packages+=(clang libclang-rt-dev libomp-dev)   # scripts/fuzz.sh: libFuzzer, and OpenMP for clang
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "stepformer: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
