#!/usr/bin/env bash
# web_libs.sh: builds the C libraries the browser build links (SDL2, SDL2_ttf with freetype,
# SDL2_image for PNG only, cJSON, md4c) for WebAssembly from Debian's own sources, since
# emscripten's ports download from outside. Prints the prefix they are installed in.
#
# The prefix is cached outside the clone, keyed by emcc's version, the Debian versions of the
# libraries and this script: a second run with nothing changed returns at once.
#   STEPFORMER_WEB_CACHE   the cache folder (default ~/.cache/stepformer-web)
set -euo pipefail
export NODE_PATH=/usr/share/nodejs   # emcc needs Debian's node modules (acorn)

# The -dev packages pin the versions whose sources we build (a source version equals its
# binary's); the native build installs them anyway.
pkgs=(libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev libfreetype-dev libcjson-dev libmd4c-dev)
srcs=(libsdl2 libsdl2-ttf libsdl2-image freetype cjson md4c)
key=$( { emcc --version | head -n 1
         for p in "${pkgs[@]}"; do dpkg-query -W -f='${Package} ${Version}\n' "$p"; done
         cat "$0"; } | sha256sum | cut -c1-16)
cache=${STEPFORMER_WEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stepformer-web}
prefix=$cache/libs-$key
if [ -f "$prefix/.done" ]; then echo "$prefix"; exit 0; fi

work=$(mktemp -d "$cache/work.XXXXXX" 2>/dev/null || { mkdir -p "$cache"; mktemp -d "$cache/work.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
rm -rf "$prefix"
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
log=$work/build.log
step() { echo "stepformer web: $*" >&2; }
fail() { echo "stepformer web: $1 failed; the last lines of $log:" >&2; tail -n 30 "$log" >&2; exit 1; }

# Debian's sources: a deb-src entry beside the configured mirror, then each package's original
# tarball (Debian's own patches are not needed here; an unreachable .debian.tar is tolerated).
if ! grep -rqs '^Types: deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  step "adding a deb-src entry (/etc/apt/sources.list.d/stepformer-src.sources)"
  uri=$(grep -h '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1 | cut -d' ' -f2)
  cat >/etc/apt/sources.list.d/stepformer-src.sources <<EOF
Types: deb-src
URIs: ${uri:-http://deb.debian.org/debian}
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq
fi
step "fetching Debian sources: ${srcs[*]}"
(cd "$work" && for s in "${srcs[@]}"; do apt-get source --download-only -qq "$s" >>"$log" 2>&1 || true; done)
for s in "${srcs[@]}"; do
  ls "$work"/"${s}"_*.orig.tar.* >/dev/null 2>&1 || fail "apt-get source $s"
done
(cd "$work" && for t in *.orig.tar.*; do case $t in *.asc|*-ft2d*) ;; *) tar xf "$t" ;; esac; done)

cm() {  # cm SOURCE_DIR NAME FLAGS...: configure, build and install one CMake project
  local dir=$1 name=$2; shift 2
  step "building $name"
  emcmake cmake -S "$dir" -B "$work/b-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_ROOT_PATH="$prefix" \
    -DBUILD_SHARED_LIBS=OFF "$@" >>"$log" 2>&1 || fail "configuring $name"
  ninja -C "$work/b-$name" -j"$(nproc)" install >>"$log" 2>&1 || fail "building $name"
}
cm "$work"/SDL2-*/ sdl2 -DSDL_SHARED=OFF -DSDL_STATIC=ON -DSDL_TEST=OFF -DSDL_TESTS=OFF -DSDL_THREADS=OFF
cm "$work"/freetype-*/ freetype -DFT_DISABLE_ZLIB=ON -DFT_DISABLE_BZIP2=ON -DFT_DISABLE_PNG=ON \
   -DFT_DISABLE_HARFBUZZ=ON -DFT_DISABLE_BROTLI=ON
cm "$work"/SDL2_ttf-*/ sdl2_ttf -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DSDL2TTF_SAMPLES=OFF \
   -DSDL2TTF_VENDORED=OFF -DSDL2TTF_HARFBUZZ=OFF
# SDL2_image: PNG only, read by stb_image and written by its bundled miniz; no libpng, no zlib.
no_formats=()
for f in AVIF BMP GIF JPG JXL LBM PCX PNM QOI SVG TGA TIF WEBP XCF XPM XV; do no_formats+=("-DSDL2IMAGE_$f=OFF"); done
cm "$work"/SDL2_image-*/ sdl2_image -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DSDL2IMAGE_SAMPLES=OFF \
   -DSDL2IMAGE_VENDORED=OFF -DSDL2IMAGE_DEPS_SHARED=OFF -DSDL2IMAGE_BACKEND_STB=ON -DSDL2IMAGE_PNG=ON \
   "${no_formats[@]}"

one_file_lib() {  # one_file_lib NAME SOURCE HEADER_DEST VERSION: a library of one C file, with a .pc
  local name=$1 src=$2 hdest=$3 version=$4
  step "building $name"
  emcc -O2 -c "$src" -o "$work/$name.o" >>"$log" 2>&1 || fail "building $name"
  emar rcs "$prefix/lib/lib$name.a" "$work/$name.o"
  mkdir -p "$(dirname "$prefix/include/$hdest")"
  cp "${src%.c}.h" "$prefix/include/$hdest"
  printf 'prefix=%s\nName: %s\nDescription: %s for WebAssembly\nVersion: %s\nCflags: -I${prefix}/include\nLibs: -L${prefix}/lib -l%s\n' \
    "$prefix" "$name" "$name" "$version" "$name" >"$prefix/lib/pkgconfig/lib$name.pc"
}
one_file_lib cjson "$(echo "$work"/cJSON-*/cJSON.c)" cjson/cJSON.h 1.7.15
one_file_lib md4c "$(echo "$work"/md4c-*/src/md4c.c)" md4c.h 0.4.8
mv "$prefix/lib/pkgconfig/libmd4c.pc" "$prefix/lib/pkgconfig/md4c.pc"
touch "$prefix/.done"
echo "$prefix"
