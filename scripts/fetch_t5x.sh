#!/usr/bin/env bash
# Fetches google-research/t5x at the commit t5xx's t5x-side tools pin into a
# directory outside the repository (never committed):
#   scripts/fetch_t5x.sh DIR
# Exits 0 when DIR already holds a t5x checkout (t5x/checkpoints.py and
# t5x/examples/t5/network.py) or once one was fetched there (shallow git
# fetch of that one commit; DIR is replaced only on success). Exits 1 with a
# message when it cannot be fetched (e.g. offline); the caller says what to
# do then. Used by scripts/setup_t5x_interop.sh and scripts/bench_vs_jax.sh.
set -uo pipefail

commit=cc342d419ec3e3e9c4bf1df33c82330cafdc1e16
dir="${1:?usage: scripts/fetch_t5x.sh DIR}"

has_t5x() { [ -f "$1/t5x/checkpoints.py" ] && [ -f "$1/t5x/examples/t5/network.py" ]; }

has_t5x "$dir" && exit 0
echo "[t5x] fetching github.com/google-research/t5x at $commit into $dir" >&2
tmp="$dir.tmp.$$"
rm -rf "$tmp" && mkdir -p "$tmp"
if git -C "$tmp" init -q &&
   GIT_TERMINAL_PROMPT=0 timeout 300 git -C "$tmp" fetch -q --depth 1 \
     https://github.com/google-research/t5x "$commit" &&
   git -C "$tmp" checkout -q FETCH_HEAD && has_t5x "$tmp"; then
  rm -rf "$dir" && mv "$tmp" "$dir"
  exit 0
fi
rm -rf "$tmp"
echo "[t5x] could not fetch github.com/google-research/t5x at $commit into $dir" >&2
exit 1
