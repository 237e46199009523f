#!/usr/bin/env bash
# t5xx -> Orbax: t5x's own Orbax restore (orbax_restore_check.py: orbax
# 0.6.4 through t5x's OrbaxCheckpointManagerInterface) reads checkpoints
# t5xx's writer made in Orbax's layout -- t5x's two-step train state
# (tests/testdata/t5x_checkpoint) written again by one process and by two
# writing the halves of each array -- and finds every array equal, bit for
# bit, to the legacy checkpoint t5x wrote, and the same step.
# Usage: run_orbax_restore_test.sh T5XX_ORBAX_REWRITE WORK_DIR
# Uses the venv and checkout scripts/setup_t5x_interop.sh made; exits 77
# (skip) with the reason when they are not installed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/t5x_venv.sh"
rewrite="$1" work="$2"
reference="$root/tests/testdata/t5x_checkpoint/checkpoint_2"
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0
for n in 1 2; do
  "$rewrite" "$reference" "$work/w$n" "$n" || { echo "FAIL: t5xx's writer ($n writers)"; exit 1; }
  if "$venv/bin/python3" "$here/orbax_restore_check.py" --orbax_checkpoint "$work/w$n/checkpoint_2" \
       --reference_checkpoint "$reference"; then
    echo "ok: Orbax restores what $n t5xx writer(s) wrote"
  else
    echo "FAIL: Orbax's restore of what $n t5xx writer(s) wrote"; failures=$((failures + 1))
  fi
done
[ "$failures" = 0 ]
