#!/usr/bin/env bash
# t5xx against t5x on JAX, side by side on this machine, in one command:
#
#   scripts/bench_vs_jax.sh [--configs=tiny,small,base] [--dtypes=float32,bfloat16]
#                           [--rounds=3] [--steps=N] [--json_out=FILE]
#
# prints t5xx's and JAX's training tokens/s per config and dtype and their
# ratio against issue 16's bar (bench/bench_vs_jax.py says what is measured
# and how long it takes). Before that it sets up, idempotently:
#   * the JAX venv ${T5XX_JAX_VENV:-~/.cache/t5xx/jax-venv}: exactly
#     bench/jax_requirements.txt from PyPI (pip --no-deps; JAX 0.4.30, flax
#     0.8.5); reinstalled when that file changes;
#   * t5x's code: $T5X_DIR when set, else ~/.cache/t5xx/t5x, fetched at the
#     pinned commit by scripts/fetch_t5x.sh when absent (needs github.com;
#     without it, set T5X_DIR to a checkout of that commit);
#   * the t5xx side: $T5XX_TRAIN_BENCH when set (used as it is), else
#     build/bin/t5xx_train_bench, brought up to date first by
#     T5XX_BUILD_TARGETS=t5xx_train_bench scripts/build.sh.
# Nothing fetched goes into the repository.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

for a in "$@"; do
  case "$a" in -h|--help) exec python3 "$root/bench/bench_vs_jax.py" --help ;; esac
done

venv="${T5XX_JAX_VENV:-$HOME/.cache/t5xx/jax-venv}"
req="$root/bench/jax_requirements.txt"
marker="$venv/t5xx-jax-bench-ok"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ ! -f "$marker" ] || [ "$(cat "$marker")" != "$want" ]; then
  rm -f "$marker"
  [ -x "$venv/bin/python3" ] || python3 -m venv "$venv"
  echo "[bench] installing bench/jax_requirements.txt into $venv" >&2
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check --no-deps -r "$req"
  "$venv/bin/python3" -c 'import jax, flax, optax' >/dev/null
  echo "$want" >"$marker"
fi

if [ -n "${T5X_DIR:-}" ]; then
  t5x_dir="$T5X_DIR"
else
  t5x_dir="$HOME/.cache/t5xx/t5x"
  if ! "$root/scripts/fetch_t5x.sh" "$t5x_dir"; then
    echo "error: no t5x checkout: set T5X_DIR to a checkout of github.com/google-research/t5x" >&2
    echo "       at cc342d419ec3e3e9c4bf1df33c82330cafdc1e16 (its t5x/ folder is all that is read)" >&2
    exit 1
  fi
fi

if [ -n "${T5XX_TRAIN_BENCH:-}" ]; then
  bench="$T5XX_TRAIN_BENCH"
else
  bench="$root/build/bin/t5xx_train_bench"
  echo "[bench] building t5xx_train_bench (scripts/build.sh)" >&2
  T5XX_BUILD_TARGETS=t5xx_train_bench "$root/scripts/build.sh" >&2
fi

T5X_DIR="$t5x_dir" exec "$venv/bin/python3" "$root/bench/bench_vs_jax.py" \
  --t5x_dir="$t5x_dir" --t5xx_bench="$bench" "$@"
