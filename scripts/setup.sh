#!/usr/bin/env bash
# Installs what t5xx needs on Debian 12, idempotently and non-interactively.
#   scripts/setup.sh          build + run dependencies, demo corpus sources
#   scripts/setup.sh --test   also clang-14 with libFuzzer (the fuzz
#                             targets) and the Python packages the tests use
#                             to check t5xx against real clients (zarr,
#                             tensorboard, ...)
set -euo pipefail

packages=(
  build-essential cmake ccache pkg-config python3 python3-pip python3-venv
  libtorch-dev libgloo-dev
  # Optimised BLAS for libtorch (Debian's default netlib BLAS is ~35x slower).
  # The OpenMP build shares libtorch's OpenMP thread pool; the pthread build
  # would add its own threads and oversubscribe the cores.
  libopenblas0-openmp
  # oneDNN's sgemm runs libtorch's float32 CPU matmuls (src/t5xx/kernels/cpu/cpu_gemm.h):
  # the library Debian's libtorch already links, with its headers.
  libdnnl-dev
  libsentencepiece-dev sentencepiece
  nlohmann-json3-dev libmsgpack-cxx-dev libboost-dev
  zlib1g-dev libzstd-dev libdeflate-dev
  # gs:// and s3:// (src/t5xx/storage): HTTP and the signatures.
  libcurl4-openssl-dev libssl-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  fortunes fortunes-min dict-gcide dict-freedict-eng-deu
)

if [ "${1:-}" = "--test" ]; then
  # clang with libFuzzer and the sanitizer runtimes: the fuzz targets
  # (scripts/fuzz.sh, docs/robustness.md "Fuzzing").
  packages+=(clang-14 libclang-rt-14-dev)
  # The multi-host rig (tests/multihost/): network namespaces, veth pairs and
  # a bridge (`ip`), tc netem where the kernel has it, GNU time for peaks.
  packages+=(iproute2 time)
  # Debian's PyTorch (the same libtorch 1.13 t5xx links) under Transformers:
  # the oracle of `t5xx export` / `t5xx import` (tests/interop/transformers_test.py).
  packages+=(python3-torch)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[setup] Debian packages: all present"
fi

if dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed" &&
   ! update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null |
     grep -q '^Value: .*openblas-openmp'; then
  echo "[setup] note: libblas.so.3 points to OpenBLAS's pthread build, which oversubscribes"
  echo "        cores next to libtorch's OpenMP threads (t5xx trains ~1.5x slower). To use the"
  echo "        OpenMP build: update-alternatives --set libblas.so.3-x86_64-linux-gnu \\"
  echo "        /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"
fi

if [ "${1:-}" = "--test" ]; then
  # Python is used only inside tests that check t5xx's files with real
  # readers; t5xx itself never runs Python. A venv keeps it off the system.
  venv="${T5XX_TEST_VENV:-$HOME/.cache/t5xx/test-venv}"
  if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv"
  fi
  # sacrebleu, rouge-score (with nltk), scipy, editdistance: the reference
  # metric libraries (tests/metrics/metrics_live_test.py).
  # gin-config: the oracle of t5xx's gin engine (tests/config/gin_oracle_test.py).
  # moto's S3 server, gcp-storage-emulator and boto3: the object stores the
  # gs:// and s3:// drivers are tested against (tests/storage/).
  if ! "$venv/bin/python3" -c 'import zarr, msgpack, numpy, tensorstore, tensorboard, sacrebleu, rouge_score, nltk, scipy, editdistance, gin, moto.server, gcp_storage_emulator, boto3, gcsfs' 2>/dev/null; then
    echo "[setup] installing test-only Python packages into $venv"
    "$venv/bin/python3" -m pip install -q 'zarr<3' msgpack numpy tensorstore tensorboard \
      sacrebleu rouge-score nltk scipy editdistance gin-config==0.5.0 \
      'moto[server]==5.2.6' gcp-storage-emulator==2026.7.19 boto3==1.44.18 gcsfs==2026.10.1
  fi
fi

if [ "${1:-}" = "--test" ]; then
  # Transformers over Debian's python3-torch, in a venv that sees Debian's
  # packages (torch, numpy); Transformers 4.40 is the last release series
  # that supports torch 1.13. Never fails the setup: the test skips with
  # the reason when the venv cannot be made (e.g. offline).
  hf_venv="${T5XX_HF_VENV:-$HOME/.cache/t5xx/hf-venv}"
  if ! "$hf_venv/bin/python3" -c 'import torch, transformers, safetensors, sentencepiece' 2>/dev/null; then
    echo "[setup] installing Transformers into $hf_venv"
    { /usr/bin/python3 -m venv --system-site-packages "$hf_venv" &&
      "$hf_venv/bin/python3" -m pip install -q --disable-pip-version-check \
        'transformers==4.40.2' 'safetensors==0.4.3' 'sentencepiece==0.2.0'; } ||
      echo "[setup] note: the Transformers venv could not be made; tests/interop/transformers_test.py will be skipped"
  fi
fi

if [ "${1:-}" = "--test" ]; then
  # t5x's own checkpoint code, for the interop test (tests/interop/): a t5x
  # checkout and its Python packages in a venv of their own. Prints a note
  # and carries on when they cannot be had (e.g. offline).
  "$(dirname "$0")/setup_t5x_interop.sh" ||
    echo "[setup] note: scripts/setup_t5x_interop.sh failed; the t5x interop test will be skipped"
fi
