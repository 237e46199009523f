#!/usr/bin/env bash
# t5xx infer against CTranslate2 and Transformers decoding, side by side on
# this machine (issue 54's table), in one command:
#
#   scripts/bench_decoding_peers.sh [--rounds=3] [--cases=greedy1,greedy32,beam4]
#                                   [--checkpoint=DIR] [--json_out=FILE]
#
# (bench/decoding_peers.py says what is measured.) It first makes, when
# missing, the venv ${T5XX_CT2_VENV:-~/.cache/t5xx/ct2-venv}: Debian's
# python3-torch seen through --system-site-packages, CTranslate2 4.5.0 (its converter still passes torch_dtype, which Transformers 4.40 takes) and
# Transformers 4.40.2 (the last series for torch 1.13) from PyPI, and builds
# build/bin/t5xx. Needs the demo data (scripts/demo.sh or t5xx
# build_corpus). Nothing fetched goes into the repository.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${T5XX_CT2_VENV:-$HOME/.cache/t5xx/ct2-venv}"
if ! "$venv/bin/python3" -c 'import ctranslate2, transformers, sentencepiece' 2>/dev/null; then
  echo "[bench] installing CTranslate2 and Transformers into $venv" >&2
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check 'ctranslate2==4.5.0' \
    'transformers==4.40.2' 'safetensors==0.4.3' 'sentencepiece==0.2.0' 'protobuf==4.25.3'
fi
T5XX_BUILD_TARGETS=t5xx "$root/scripts/build.sh" >&2
cd "$root"
exec python3 bench/decoding_peers.py --t5xx="$root/build/bin/t5xx" --venv="$venv" "$@"
