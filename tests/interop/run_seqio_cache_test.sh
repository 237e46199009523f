#!/usr/bin/env bash
# ctest driver of seqio_cache_interop_test.py: task caches between seqio and
# t5xx. Usage: run_seqio_cache_test.sh t5xx_to_seqio|seqio_to_t5xx T5XX_BINARY WORK_DIR
# Runs seqio (and the TensorFlow it needs) from the venv
# scripts/setup_t5x_interop.sh makes (${T5XX_T5X_VENV:-~/.cache/t5xx/t5x-venv}).
# Exits 77 (skip) with the reason when seqio cannot be imported there and the
# setup did not mark the venv ready; once marked ready, a failing import fails.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${T5XX_T5X_VENV:-$HOME/.cache/t5xx/t5x-venv}"
py="$venv/bin/python3"
if ! "$py" -c 'import seqio, tensorflow' >/dev/null 2>&1; then
  if [ -f "$venv/t5x-interop-ok" ]; then
    echo "FAIL: $venv is marked ready (t5x-interop-ok) but 'import seqio, tensorflow' fails:"
    "$py" -c 'import seqio, tensorflow' 2>&1 | tail -n 3
    exit 1
  fi
  echo "SKIP: seqio and tensorflow cannot be imported with $py."
  echo "      scripts/setup.sh --test installs them (tests/interop/requirements.txt)"
  echo "      into $venv; T5XX_T5X_VENV chooses another venv."
  exit 77
fi
rm -rf "$3"  # a cache left there would be kept by cache_tasks (no --overwrite)
exec "$py" "$here/seqio_cache_interop_test.py" "$1" "$2" "$3"
