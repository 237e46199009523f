# Sourced by the interop drivers that train with t5xx and then ask t5x's own
# code (run_save_best_test.sh, run_early_stopping_test.sh) with arguments
# T5XX WORK_DIR: sets $here, $venv and T5X_DIR (t5x_venv.sh: exits 77
# without t5x's venv), $T5XX, an emptied $work, cli_lib.sh's check /
# expect_error counters, and builds the demo corpus in $work/data.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/t5x_venv.sh"
T5XX="$(realpath "$1")"
work="$2"; rm -rf "$work"; mkdir -p "$work"
. "$here/../cli/cli_lib.sh"
demo_corpus_or_exit
