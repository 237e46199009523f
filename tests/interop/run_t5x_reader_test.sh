#!/usr/bin/env bash
# ctest driver of t5x_reader_test.py: t5x's own reader opens a t5xx
# checkpoint. Usage: run_t5x_reader_test.sh T5XX_BINARY WORK_DIR
# Uses the venv scripts/setup_t5x_interop.sh made (${T5XX_T5X_VENV:-
# ~/.cache/t5xx/t5x-venv}) and the t5x checkout its marker names ($T5X_DIR
# wins). Exits 77 (skip) with the reason when they are not installed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/t5x_venv.sh"
# Installed and verified: an import failure now is a failure, not a skip.
export T5XX_INTEROP_REQUIRE=1
exec "$venv/bin/python3" "$here/t5x_reader_test.py" "$1" "$2"
