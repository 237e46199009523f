#!/usr/bin/env bash
# Sets up (incl. the test-only Python readers and clang), builds and runs
# every test, fuzzes each reader for 30 s (scripts/fuzz.sh), then compiles
# (never runs) the CUDA build against PyPI's torch wheel
# (scripts/cuda_build_check.sh; skipped without a CUDA toolkit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
venv="${T5XX_TEST_VENV:-$HOME/.cache/t5xx/test-venv}"
scripts/build.sh -DT5XX_PYTHON3="$venv/bin/python3"
ctest --test-dir build --output-on-failure -j"$(nproc)"
# Every fuzz target for 30 s under ASan + UBSan (its seeds already ran above
# as the fuzz.<target>.seeds tests), from a fixed seed: CI's runs repeat.
T5XX_FUZZ_SEED=1 scripts/fuzz.sh 30
scripts/cuda_build_check.sh
