#!/usr/bin/env bash
# Installs what tests/interop/ needs to run t5x's own checkpoint code: a t5x
# checkout and t5x's Python packages in their own venv. Run by
# `scripts/setup.sh --test`; never fails it: when something cannot be had
# (no network, no t5x checkout) it prints a note and exits 0, and the
# interop test then skips with that reason.
#
#   t5x checkout: $T5X_DIR if set, else ../shared/t5x beside the checkout if
#     present, else ~/.cache/t5xx/t5x, cloned at the pinned commit if absent.
#   venv: ${T5XX_T5X_VENV:-~/.cache/t5xx/t5x-venv}, exactly
#     tests/interop/requirements.txt (pip --no-deps). Once its imports work
#     the venv gets a marker, t5x-interop-ok, holding the checkout's path and
#     the requirements' hash; the test reads it to find T5X_DIR.
set -uo pipefail

commit=cc342d419ec3e3e9c4bf1df33c82330cafdc1e16
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${T5XX_T5X_VENV:-$HOME/.cache/t5xx/t5x-venv}"
req="$root/tests/interop/requirements.txt"
marker="$venv/t5x-interop-ok"

note() {
  echo "[setup] note: $*"
  echo "[setup]       the t5x interop test (tests/interop/) will be skipped"
  exit 0
}

has_t5x() { [ -f "$1/t5x/checkpoints.py" ] && [ -f "$1/t5x/examples/t5/network.py" ]; }

if [ -n "${T5X_DIR:-}" ]; then
  dir="$T5X_DIR"
  has_t5x "$dir" || note "T5X_DIR=$dir holds no t5x checkout (t5x/checkpoints.py)"
elif has_t5x "$root/../shared/t5x"; then
  dir="$(cd "$root/../shared/t5x" && pwd)"
else
  dir="$HOME/.cache/t5xx/t5x"
  "$root/scripts/fetch_t5x.sh" "$dir" ||
    note "could not fetch t5x (github.com/google-research/t5x at $commit);" \
         "set T5X_DIR to a checkout of it and rerun scripts/setup.sh --test"
fi

want="$dir $(sha256sum "$req" | cut -d' ' -f1)"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
  echo "[setup] t5x interop venv: ready ($venv, t5x at $dir)"
  exit 0
fi
rm -f "$marker"
if [ ! -x "$venv/bin/python3" ]; then
  python3 -m venv "$venv" || note "python3 -m venv $venv failed"
fi
echo "[setup] installing t5x's Python packages into $venv (about 1 GB)"
"$venv/bin/python3" -m pip install -q --disable-pip-version-check --no-deps -r "$req" ||
  note "pip install -r tests/interop/requirements.txt into $venv failed"
# The same imports the test makes.
if ! out="$(cd "$root/tests/interop" && T5X_DIR="$dir" "$venv/bin/python3" -c '
import t5x_import
t5x_import.import_t5x(None, ("adafactor", "checkpoints", "models", "partitioning",
                             "train_state", "examples.t5.network"))
import msgpack, zarr' 2>&1)"; then
  note "t5x does not import in $venv: $(printf '%s\n' "$out" | tail -n 3)"
fi
echo "$want" >"$marker"
echo "[setup] t5x interop venv: ready ($venv, t5x at $dir)"
