#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang-14, ASan + UBSan) in build-fuzz/
# and fuzzes each for SECONDS (default 30), starting from its seed corpus
# and regression inputs. New coverage is kept in build-fuzz/fuzz_corpus/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 3600 gin_config
# T5XX_FUZZ_SEED=N fixes libFuzzer's random seed (CI uses 1, so that its
# short runs explore the same inputs every time); unset, each run differs.
# A fault stops that target's run and fails the script; the input that
# caused it is written as build-fuzz/crash-* (leak-*, timeout-*, oom-*): add
# it to fuzz/regressions/<target>/ with the fix (docs/robustness.md "Fuzzing").
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
cxx="${T5XX_FUZZ_CXX:-clang++-14}"
if ! command -v "$cxx" >/dev/null; then
  echo "[fuzz] $cxx not found: install clang-14 and libclang-rt-14-dev (scripts/setup.sh --test)" >&2
  exit 2
fi
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DT5XX_FUZZING=ON -DT5XX_FUZZ_SECONDS="$seconds" -DT5XX_FUZZ_SEED="${T5XX_FUZZ_SEED:-0}" >/dev/null
cmake --build build-fuzz -j"$(nproc)"
regex="^fuzz\\..*\\.run$"
if (($#)); then
  regex="^fuzz\\.($(IFS='|'; echo "$*"))\\.run$"
fi
# One target at a time: each uses one core, and the timing is per target.
(cd build-fuzz && ctest -R "$regex" --output-on-failure --timeout "$((seconds + 120))")
