#!/usr/bin/env bash
# Sets up (incl. the test-only Python readers), builds and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
venv="${T5XX_TEST_VENV:-$HOME/.cache/t5xx/test-venv}"
scripts/build.sh -DT5XX_PYTHON3="$venv/bin/python3"
ctest --test-dir build --output-on-failure -j"$(nproc)"
