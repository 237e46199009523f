#!/usr/bin/env bash
# ctest driver of `make_t5_catalog_oracle.py check`: t5's own task and
# mixture catalog (t5.data.tasks, t5.data.mixtures, with seqio and TFDS from
# the venv scripts/setup_t5x_interop.sh makes, ${T5XX_T5X_VENV:-~/.cache/t5xx/t5x-venv})
# still makes of tests/testdata/tfds/data what
# tests/testdata/t5_catalog/catalog_oracle.json says (the oracle t5xx's
# catalog is compared with). t5's source comes from $T5_DIR, else
# ../shared/t5 beside this checkout. Exits 77 (skip) with the reason when the venv cannot
# import seqio, tensorflow_datasets and t5's metric packages (and the setup did not mark it ready),
# or when t5's source is absent.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${T5XX_T5X_VENV:-$HOME/.cache/t5xx/t5x-venv}"
py="$venv/bin/python3"
if ! "$py" -c 'import seqio, tensorflow_datasets, sentencepiece, rouge_score, sacrebleu, sklearn, babel' >/dev/null 2>&1; then
  if [ -f "$venv/t5x-interop-ok" ]; then
    echo "FAIL: $venv is marked ready (t5x-interop-ok) but 'import seqio, tensorflow_datasets, sentencepiece, rouge_score, sacrebleu, sklearn, babel' fails:"
    "$py" -c 'import seqio, tensorflow_datasets, sentencepiece, rouge_score, sacrebleu, sklearn, babel' 2>&1 | tail -n 3
    exit 1
  fi
  echo "SKIP: seqio, tensorflow_datasets or t5's metric packages cannot be imported with $py."
  echo "      scripts/setup.sh --test installs them (tests/interop/requirements.txt)"
  echo "      into $venv; T5XX_T5X_VENV chooses another venv."
  exit 77
fi
t5="${T5_DIR:-$(cd "$here/../../.." && pwd)/shared/t5}"
if [ ! -f "$t5/t5/data/tasks.py" ]; then
  echo "SKIP: t5's source (t5/data/tasks.py) is not under ${t5}."
  echo "      Set T5_DIR to a checkout of https://github.com/google-research/text-to-text-transfer-transformer."
  exit 77
fi
export PYTHONPATH="$t5${PYTHONPATH:+:$PYTHONPATH}"
exec "$py" "$here/make_t5_catalog_oracle.py" check 2> >(grep -v 'WARNING\|warn\|^task ' >&2)
