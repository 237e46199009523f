#!/usr/bin/env bash
# Run on a networked Debian 12 machine (amd64) before a call to a GPU
# machine that has no network: gathers into .gpu/ (git-ignored; the device
# tool carries it with `carry: [".gpu"]`) what scripts/gpu_perf_check.sh
# needs there and cannot download:
#   .gpu/debs/             the Debian packages CMakeLists.txt finds besides
#                          libtorch (the GPU machine's PyTorch supplies
#                          libtorch): SentencePiece, nlohmann-json,
#                          msgpack-cxx, libdeflate, zlib, zstd, gtest/gmock,
#                          Google Benchmark, gloo's headers (c10d's
#                          ProcessGroupGloo.hpp), each -dev package with the
#                          run-time library it depends on, and pkg-config --
#                          `apt-get download`, no dependencies, nothing
#                          installed, no root needed;
#   .gpu/cudnn-frontend/   NVIDIA's cudnn-frontend C++ headers (include/),
#                          from its PyPI wheel nvidia-cudnn-frontend
#                          (T5XX_CUDNN_FRONTEND_VERSION, default 1.32.0);
#   .gpu/peers/            the t5x-on-JAX peer benchmark from ../shared/tools
#                          (gpu_peers.py; t5x_jax_bench.py as bench_t5x.py, the
#                          name gpu_peers.py imports) and the pinned t5x
#                          checkout ../shared/t5x (its t5x/ package) for it.
# Not included: a C++ compiler, cmake (>= 3.18), the CUDA toolkit, PyTorch
# and JAX, which the GPU machine has (.library/device/KINDS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-.gpu}"
mkdir -p "$dest/debs"
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
echo "[gpu-perf-prepare] downloading ${#packages[@]} packages into $dest/debs"
(cd "$dest/debs" && apt-get download "${packages[@]}")
# The same list, for gpu_perf_check.sh to check the directory is complete.
printf '%s\n' "${packages[@]}" > "$dest/debs/packages.txt"

version="${T5XX_CUDNN_FRONTEND_VERSION:-1.32.0}"
echo "[gpu-perf-prepare] cudnn-frontend $version headers into $dest/cudnn-frontend"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  -d "$tmp" "nvidia-cudnn-frontend==$version"
rm -rf "$dest/cudnn-frontend"
mkdir -p "$dest/cudnn-frontend"
python3 - "$tmp"/nvidia_cudnn_frontend-*.whl "$dest/cudnn-frontend" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = [n for n in z.namelist() if n.startswith("include/") and not n.endswith("/")]
if not any(n.endswith("cudnn_frontend.h") for n in names):
    sys.exit("the wheel has no include/cudnn_frontend.h")
for n in names:
    z.extract(n, sys.argv[2])
print(f"  {len(names)} headers")
PY

shared="${T5XX_SHARED:-../shared}"
if [ -f "$shared/tools/gpu_peers.py" ] && [ -d "$shared/t5x/t5x" ]; then
  rm -rf "$dest/peers"
  mkdir -p "$dest/peers/t5x"
  cp "$shared/tools/gpu_peers.py" "$dest/peers/"
  cp "$shared/tools/t5x_jax_bench.py" "$dest/peers/bench_t5x.py"
  (cd "$shared/t5x" && find t5x \( -name '*.py' -o -name '*.gin' \) -print0 |
     tar --null -T - -cf -) | tar -xf - -C "$dest/peers/t5x"
  echo "[gpu-perf-prepare] peers: gpu_peers.py, bench_t5x.py, t5x ($(du -sh "$dest/peers" | cut -f1))"
else
  echo "[gpu-perf-prepare] note: no $shared/tools/gpu_peers.py or $shared/t5x: the JAX peer stage will be skipped"
fi
echo "[gpu-perf-prepare] done: $(du -sh "$dest" | cut -f1) in $dest"
