#!/usr/bin/env bash
# Compiles and links against the CUDA libtorch inside PyPI's `torch` wheel,
# into build-cuda/, what proves the CUDA code builds -- every library (the
# t5xx binary links them all: device/'s CUDA calls, NCCL, kernels/cuda/'s
# cuDNN attention through NVIDIA's cudnn-frontend), the GPU benchmark and
# the tests scripts/gpu_perf_check.sh runs on a GPU -- so that the CUDA
# build cannot rot. Nothing is run: CI machines have no GPU.
#
#   T5XX_CUDA_CHECK_TORCH     torch version to check against (default 2.15.0),
#                             or the path of a torch .whl file
#   T5XX_CUDNN_FRONTEND_VERSION  cudnn-frontend's headers (default 1.32.0)
#   T5XX_REQUIRE_CUDA_BUILD=1 fail instead of skipping when there is no nvcc
#   T5XX_CUDA_CHECK_TARGETS   build these targets (default: the list above;
#                             "all" builds every target)
#
# The wheels are fetched once with `pip download --no-deps` (nothing is
# installed) into ~/.cache/t5xx/, and only what a C++ build needs is
# unpacked beside them (torch/include, torch/lib, torch/share; the
# frontend's include/).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
log() { echo "[cuda-build-check] $*"; }
trap 'rc=$?; log "elapsed $((SECONDS - start)) s (exit $rc)"' EXIT

# ---- CUDA toolkit ----
nvcc="$(command -v nvcc || true)"
if [ -z "$nvcc" ] && [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
  nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
fi
if [ -z "$nvcc" ]; then
  if [ "${T5XX_REQUIRE_CUDA_BUILD:-0}" = 1 ]; then
    log "FAILED: no CUDA toolkit (nvcc not on PATH nor in \${CUDA_HOME:-/usr/local/cuda}/bin) and T5XX_REQUIRE_CUDA_BUILD=1"
    exit 1
  fi
  log "skipped: no CUDA toolkit (nvcc not on PATH nor in \${CUDA_HOME:-/usr/local/cuda}/bin); set T5XX_REQUIRE_CUDA_BUILD=1 to make this an error"
  exit 0
fi
cuda_root="$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)"
log "CUDA toolkit: $cuda_root ($("$nvcc" --version | grep -o 'release [0-9.]*'))"

# ---- torch wheel: download once, unpack the C++ parts once ----
spec="${T5XX_CUDA_CHECK_TORCH:-2.15.0}"
cache="$HOME/.cache/t5xx/torch-wheel"
mkdir -p "$cache"
if [[ "$spec" == *.whl ]]; then
  wheel="$(readlink -f "$spec")"
  [ -f "$wheel" ] || { log "FAILED: T5XX_CUDA_CHECK_TORCH=$spec: no such wheel file"; exit 1; }
elif [[ "$spec" =~ ^[0-9]+(\.[0-9]+)*$ ]]; then
  # A cached wheel of that version is reused without asking the index again.
  wheel="$(ls "$cache"/torch-"$spec"-*.whl 2>/dev/null | head -n1 || true)"
  if [ -z "$wheel" ]; then
    log "downloading torch==$spec (pip download --no-deps, ~540 MB) into $cache"
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$cache" "torch==$spec"
    wheel="$(ls "$cache"/torch-"$spec"-*.whl | head -n1)"
  fi
else
  log "FAILED: T5XX_CUDA_CHECK_TORCH=$spec: give a torch version (e.g. 2.15.0) or a torch .whl file"
  exit 1
fi
unpacked="$cache/$(basename "$wheel" .whl)"
if [ ! -f "$unpacked/.complete" ]; then
  log "unpacking torch/include, torch/lib, torch/share of $(basename "$wheel")"
  rm -rf "$unpacked" "$unpacked.tmp"
  python3 - "$wheel" "$unpacked.tmp" <<'EOF'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist()
             if n.startswith(("torch/include/", "torch/lib/", "torch/share/"))]
    z.extractall(dest, names)
EOF
  touch "$unpacked.tmp/.complete"
  mv "$unpacked.tmp" "$unpacked"
fi
torch="$unpacked/torch"

# ---- cudnn-frontend's headers (header-only; from its PyPI wheel) ----
fe_version="${T5XX_CUDNN_FRONTEND_VERSION:-1.32.0}"
fe_dir="$HOME/.cache/t5xx/cudnn-frontend-$fe_version"
if [ ! -f "$fe_dir/.complete" ]; then
  log "downloading nvidia-cudnn-frontend==$fe_version (its headers, ~12 MB wheel)"
  rm -rf "$fe_dir" && mkdir -p "$fe_dir/wheel"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    -d "$fe_dir/wheel" "nvidia-cudnn-frontend==$fe_version"
  python3 - "$fe_dir"/wheel/*.whl "$fe_dir" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("include/")])
EOF
  rm -rf "$fe_dir/wheel"
  touch "$fe_dir/.complete"
fi

# ---- configure ----
# * CMAKE_PREFIX_PATH: torch/share/cmake (TorchConfig.cmake) as
#   torch.utils.cmake_prefix_path gives it.
# * CUDA_TOOLKIT_ROOT_DIR: the toolkit whose nvcc was found above (Caffe2's
#   cuda.cmake uses FindCUDA; a CUDA torch does not configure without one).
# * nvtx3_dir: CUDA 13 ships only the header-only NVTX3; torch 2.5-2.7's
#   cuda.cmake would otherwise ask for the old CUDA::nvToolsExt and fail
#   (2.15 no longer uses it; CMake then notes it as unused).
# * --allow-shlib-undefined: the executables link against libtorch_cuda.so,
#   whose own dependencies include GPU run-time libraries that only a GPU
#   machine's torch install brings (pip's nvidia-* wheels: cuFile,
#   cuSPARSELt, NVSHMEM, ...) and that a CPU machine with just the CUDA
#   toolkit lacks. The linker would otherwise reject the still-undefined
#   symbols of those indirect dependencies; t5xx's own symbols are all
#   resolved either way. Nothing built here is run.
# * DISCOVERY_MODE PRE_TEST: gtest_discover_tests would otherwise run every
#   test executable after linking to list its tests, which cannot work
#   without those libraries; ctest is never run on build-cuda.
log "configuring build-cuda/ against $torch"
mkdir -p build-cuda
cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch/share/cmake" \
  -DCUDA_TOOLKIT_ROOT_DIR="$cuda_root" \
  -Dnvtx3_dir="$cuda_root/include" \
  -DT5XX_CUDNN_FRONTEND_INCLUDE_DIR="$fe_dir/include" \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined \
  -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >build-cuda/configure.log 2>&1 ||
  { cat build-cuda/configure.log; log "FAILED: configure"; exit 1; }

# Is it really a CUDA build of this torch? TorchConfig finds c10_cuda only in
# a CUDA build; Caffe2 defines USE_C10D_NCCL (on every torch consumer) only
# for CUDA builds with NCCL.
c10_cuda="$(sed -n 's/^C10_CUDA_LIBRARY:FILEPATH=//p' build-cuda/CMakeCache.txt)"
case "$c10_cuda" in
  "$torch"/lib/*) ;;
  *) log "FAILED: not a CUDA build of $torch (C10_CUDA_LIBRARY='$c10_cuda')"; exit 1 ;;
esac
if ! grep -q -- '-DUSE_C10D_NCCL' build-cuda/compile_commands.json; then
  log "FAILED: USE_C10D_NCCL is not among the compile definitions: not a CUDA (NCCL) torch"
  exit 1
fi

if ! grep -q "cuDNN fused attention through cudnn-frontend" build-cuda/configure.log; then
  log "FAILED: cuDNN's fused attention is not in the build: $(grep 'no cuDNN fused attention' build-cuda/configure.log)"
  exit 1
fi

# ---- build ----
wanted="${T5XX_CUDA_CHECK_TARGETS:-t5xx t5xx_gpu_train_bench models_parity_test models_bf16_test
  models_decoding_parity_test device_device_test kernels_cudnn_attention_test}"
targets=()
[ "$wanted" = all ] || for t in $wanted; do targets+=(--target "$t"); done
log "building $(echo $wanted) with -j$(nproc)"
cmake --build build-cuda -j"$(nproc)" "${targets[@]}"

# The t5xx binary must really link libtorch_cuda (and this wheel's torch, not
# another libtorch on the system such as Debian's 1.13).
needed="$(readelf -d build-cuda/bin/t5xx_main | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p')"
if ! grep -qx 'libtorch_cuda.so' <<<"$needed"; then
  log "FAILED: build-cuda/bin/t5xx_main does not link libtorch_cuda.so"; exit 1
fi
if grep -q '^lib\(torch\|c10\).*\.so\.[0-9]' <<<"$needed"; then
  log "FAILED: build-cuda/bin/t5xx_main links a versioned (system) libtorch: $(tr '\n' ' ' <<<"$needed")"; exit 1
fi
log "OK: t5xx built against $(basename "$wheel") with CUDA (libtorch_cuda, USE_C10D_NCCL)"
