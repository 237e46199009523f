#!/usr/bin/env bash
# Run on a networked Debian 12 machine (amd64) before going to a GPU machine
# that has no network: downloads the Debian packages scripts/gpu_check.sh
# unpacks there when they are not installed, into ./gpu-debs/ (git-ignored;
# or the directory given as $1 / T5XX_DEBS). Copy the checkout with it.
#
# The list is what CMakeLists.txt finds besides libtorch (the GPU machine's
# PyTorch supplies libtorch) -- SentencePiece, nlohmann-json, msgpack-cxx,
# libdeflate, zlib, zstd, gtest/gmock, Google Benchmark, gloo's headers
# (c10d's ProcessGroupGloo.hpp) -- each -dev package with the run-time
# library it depends on, and pkg-config (CMakeLists.txt's
# pkg_check_modules). Not included: a C++ compiler, cmake (>= 3.18) and the
# CUDA toolkit, which a machine that builds PyTorch extensions has.
# `apt-get download` fetches just these files (no dependencies, nothing is
# installed); no root needed.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-${T5XX_DEBS:-gpu-debs}}"
packages=(
  libsentencepiece-dev libsentencepiece0
  nlohmann-json3-dev
  libmsgpack-cxx-dev
  libdeflate-dev libdeflate0
  zlib1g-dev zlib1g
  libzstd-dev libzstd1
  libgtest-dev libgmock-dev
  libbenchmark-dev libbenchmark1debian
  libgloo-dev
  pkgconf pkgconf-bin libpkgconf3
)
mkdir -p "$dest"
cd "$dest"
echo "[gpu-check-prepare] downloading ${#packages[@]} packages into $(pwd)"
apt-get download "${packages[@]}"
# The same list, for gpu_check.sh to check the directory is complete.
printf '%s\n' "${packages[@]}" > packages.txt
ls -1 *.deb | sed 's/^/  /'
echo "[gpu-check-prepare] done: $(ls -1 *.deb | wc -l) .deb files, $(du -sh . | cut -f1)"
