#!/usr/bin/env bash
# ctest driver of `make_tfds_fixtures.py check`: TensorFlow Datasets still
# reads tests/testdata/tfds/data as tests/testdata/tfds/tfds_reads.json (the
# oracle data_tfds_data_source_test compares t5xx with) says. Runs TFDS from
# the venv scripts/setup_t5x_interop.sh makes
# (${T5XX_T5X_VENV:-~/.cache/t5xx/t5x-venv}); exits 77 (skip) with the
# reason when tensorflow_datasets cannot be imported there and the setup did
# not mark the venv ready.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${T5XX_T5X_VENV:-$HOME/.cache/t5xx/t5x-venv}"
py="$venv/bin/python3"
if ! "$py" -c 'import tensorflow_datasets' >/dev/null 2>&1; then
  if [ -f "$venv/t5x-interop-ok" ]; then
    echo "FAIL: $venv is marked ready (t5x-interop-ok) but 'import tensorflow_datasets' fails:"
    "$py" -c 'import tensorflow_datasets' 2>&1 | tail -n 3
    exit 1
  fi
  echo "SKIP: tensorflow_datasets cannot be imported with $py."
  echo "      scripts/setup.sh --test installs it (tests/interop/requirements.txt)"
  echo "      into $venv; T5XX_T5X_VENV chooses another venv."
  exit 77
fi
exec "$py" "$here/make_tfds_fixtures.py" check "$here/../testdata/tfds" 2> >(grep -v 'WARNING\|warn' >&2)
