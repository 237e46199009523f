#!/usr/bin/env bash
# ctest driver of transformers_test.py: `t5xx export` / `t5xx import`
# against Hugging Face Transformers. Usage:
#   run_transformers_test.sh T5XX_BINARY T5XX_LOGITS_BINARY WORK_DIR
# Uses the venv scripts/setup.sh --test makes (${T5XX_HF_VENV:-
# ~/.cache/t5xx/hf-venv}: Debian's python3-torch + transformers 4.40.2).
# Exits 77 (skip) with the reason when it cannot import them.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${T5XX_HF_VENV:-$HOME/.cache/t5xx/hf-venv}"
if ! why="$("$venv/bin/python3" -c 'import torch, transformers, safetensors, sentencepiece' 2>&1)"; then
  echo "SKIP: Transformers cannot be imported from $venv: $(printf '%s\n' "$why" | tail -n 1)"
  echo "      scripts/setup.sh --test installs it (Debian's python3-torch, then"
  echo "      transformers 4.40.2, safetensors and sentencepiece from PyPI)."
  exit 77
fi
rm -rf "$3" && mkdir -p "$3"
# Transformers' warnings about legacy tokenizers and unused weights are not failures.
export TRANSFORMERS_VERBOSITY=error TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
cd "$here/../.." || exit 1  # configs/ and runs/ resolve as in a user's checkout
exec "$venv/bin/python3" "$here/transformers_test.py" "$1" "$2" "$3"
