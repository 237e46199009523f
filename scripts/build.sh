#!/usr/bin/env bash
# Configures and builds t5xx into build/ (Release). Extra arguments go to
# cmake's configure step, e.g. -DCMAKE_PREFIX_PATH=/path/to/libtorch.
# T5XX_BUILD_TARGETS="t5xx" builds only those targets (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
targets=()
for t in ${T5XX_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
