#!/usr/bin/env bash
# web.sh: stepformer in a browser page, built with Debian's emscripten (WebAssembly + SIMD128).
#   scripts/web.sh build          installs what is missing, builds the page; the last line printed
#                                 is the site folder (build-web/site), which any static server serves
#   scripts/web.sh serve [PORT]   serves the site folder on 127.0.0.1 (default port 8000)
#   scripts/web.sh test           builds, runs the kernels' tests in node on both programs
#                                 (see node_tests), then tests the page in headless Chromium (tests/web)
#   scripts/web.sh bench          the benchmark page beside the same passes run natively and
#                                 ONNX Runtime Web (npm) on the same models (--json: one object)
# The libraries are built once and cached outside the clone (scripts/web_libs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc needs Debian's node modules (acorn)
out=build-web

# The four DejaVu faces, cut to the characters the window and the course use (Latin, Greek,
# punctuation, arrows, maths, boxes and shapes, check marks): 0.7 MB of 2.4. Cached beside the
# libraries.
fonts() {
  local cache=${STEPFORMER_WEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stepformer-web}
  local ranges="U+0020-007E,U+00A0-024F,U+0370-03FF,U+1D00-1DBF,U+2000-243F,U+2500-25FF,U+2605,U+2713,U+2717,U+27E8-27EB,U+FFFD"
  local key
  key=$( { dpkg-query -W -f='${Version}' fonts-dejavu-core; echo "$ranges"; } | sha256sum | cut -c1-16)
  local dir=$cache/fonts-$key
  if [ ! -f "$dir/.done" ]; then
    mkdir -p "$dir"
    for f in DejaVuSans DejaVuSans-Bold DejaVuSans-Oblique DejaVuSansMono; do
      /usr/bin/python3 -m fontTools.subset "/usr/share/fonts/truetype/dejavu/$f.ttf" --unicodes="$ranges" \
        --layout-features='*' --notdef-outline --output-file="$dir/$f.ttf" 2>/dev/null
    done
    touch "$dir/.done"
  fi
  echo "$dir"
}

build() {
  scripts/deps.sh --web
  local libs fontdir
  libs=$(scripts/web_libs.sh | tail -n 1)
  fontdir=$(fonts)
  # What the page carries in its file system: every lesson (and the course's order) and the fonts.
  rm -rf "$out/pack" && mkdir -p "$out/pack/lessons" "$out/pack/fonts"
  cp -p lessons/*.md "$out/pack/lessons/"  # -p: an unchanged file does not relink the page
  cp -p "$fontdir"/*.ttf "$out/pack/fonts/"
  emcmake cmake -S . -B "$out/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTEPFORMER_WERROR=ON \
    -DSTEPFORMER_WEB_LIBS="$libs" -DSTEPFORMER_WEB_PACK="$(pwd)/$out/pack" >"$out/cmake.log" 2>&1 ||
    { tail -n 30 "$out/cmake.log" >&2; exit 1; }
  cmake --build "$out/cmake" -j"$(nproc)" >"$out/build.log" 2>&1 || { grep -A5 -E 'error|warning' "$out/build.log" | head -n 60 >&2; exit 1; }
  # The site: the page, the program, its packed files, and the models fetched as lessons open.
  rm -rf "$out/site" && mkdir -p "$out/site/assets/models"
  # The program and its plain rewrite must be valid WebAssembly, read by a decoder other than the
  # one that wrote them (src/web/wasm_madd.js).
  wasm-validate --enable-relaxed-simd "$out/cmake/stepformer.wasm" && wasm-validate "$out/cmake/stepformer-plain.wasm" ||
    { echo "web.sh: the rewritten program is not valid WebAssembly (src/web/wasm_madd.js)" >&2; exit 1; }
  cp src/web/index.html src/web/wasm_madd.js "$out/cmake/stepformer.js" "$out/cmake/stepformer.wasm" \
    "$out/cmake/stepformer.data" "$out/site/"
  cp assets/models/*.safetensors "$out/site/assets/models/"
  for d in assets/models/*/; do  # hub folders (gpt2.md, llama.md, marian.md): what the page reads, not the data notes
    mkdir -p "$out/site/assets/models/$(basename "$d")"
    cp "$d"*.json "$d"*.safetensors "$out/site/assets/models/$(basename "$d")/"
    for f in "$d"*.spm; do if [ -e "$f" ]; then cp "$f" "$out/site/assets/models/$(basename "$d")/"; fi; done
  done
  echo "$(pwd)/$out/site"
}

# The page's kernels under node (tests/test_kernels.c and others, built as the page is), on both
# programs: with relaxed_madd (node runs it behind a flag) and with a multiply then an add.
node_tests() {
  local v t dir failed=0
  cmake --build "$out/cmake" -j"$(nproc)" --target test_kernels_web test_torch_web test_program_web >"$out/tests.log" 2>&1 ||
    { grep -A5 -E 'error|warning' "$out/tests.log" | head -n 60 >&2; return 1; }
  node --experimental-wasm-relaxed-simd -e 'process.exit(require("./src/web/wasm_madd.js").hasRelaxedMadd() ? 0 : 1)' ||
    { echo "web.sh: this node ($(node --version)) does not run relaxed SIMD's relaxed_madd" >&2; return 1; }
  for v in madd plain; do
    dir=$out/node-tests/$v
    rm -rf "$dir" && mkdir -p "$dir"
    for t in test_kernels test_torch test_program; do
      cp "$out/cmake/tests/$t.js" "$dir/"
      if [ "$v" = madd ]; then cp "$out/cmake/tests/$t.wasm" "$dir/"; else cp "$out/cmake/tests/$t-plain.wasm" "$dir/$t.wasm"; fi
      echo "node, the $v program: $t" >&2
      # (--no-experimental-fetch: emscripten 3.1.6 reads the program by path only without fetch)
      node --no-experimental-fetch --experimental-wasm-relaxed-simd "$dir/$t.js" >&2 || failed=1
    done
  done
  return $failed
}

case "${1:-}" in
  build) build ;;
  serve)
    site=$(build | tail -n 1)
    port=${2:-8000}
    echo "stepformer: serving $site on http://127.0.0.1:$port/ (Ctrl+C stops)" >&2
    exec /usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" ;;
  test)
    scripts/deps.sh --test
    site=$(build | tail -n 1)
    node_tests
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j"$(nproc)" >/dev/null
    exec /usr/bin/python3 tests/web/test_page.py --site "$site" --stepformer build/stepformer ;;
  bench)
    scripts/deps.sh --bench
    site=$(build | tail -n 1)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j"$(nproc)" >/dev/null
    # The peer: ONNX Runtime Web at the version bench/ort pins, and the models PyTorch exports.
    mkdir -p "$out/ort"
    cp bench/ort/package.json bench/ort/package-lock.json "$out/ort/"
    [ -d "$out/ort/node_modules/onnxruntime-web" ] || (cd "$out/ort" && npm ci --no-audit --no-fund --ignore-scripts >&2)
    /usr/bin/python3 scripts/export_onnx.py --out "$out/onnx" --stepformer build/stepformer
    exec /usr/bin/python3 tests/web/bench_page.py --site "$site" --stepformer build/stepformer \
      --ort "$(pwd)/$out/ort/node_modules/onnxruntime-web/dist" --onnx "$(pwd)/$out/onnx" "${@:2}" ;;
  *) echo "usage: scripts/web.sh build | serve [PORT] | test | bench" >&2; exit 2 ;;
esac
