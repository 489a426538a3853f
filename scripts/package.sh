#!/usr/bin/env bash
# package.sh: builds the Debian package (build-deb/stepformer_VERSION_ARCH.deb) from a clean
# Release build. Install it on any Debian 12 machine with `apt install ./stepformer_*.deb`,
# which pulls the runtime libraries it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh >/dev/null
command -v dpkg-shlibdeps >/dev/null || apt-get install -y dpkg-dev >/dev/null
cmake -S . -B build-deb -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-deb -j"$(nproc)" --target stepformer
(cd build-deb && cpack -G DEB)
ls -1 build-deb/*.deb
