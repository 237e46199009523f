# Shared by the CLI test scripts: pass/fail counters and expect_error.
# Source it after setting T5XX and work.
failures=0
pass=0

# expect_error NAME SUBSTRING -- command...: exit status 2 and one error on
# stderr containing SUBSTRING: one line, or the indented lines of one "N
# errors in ..." message; nothing else but "t5xx: note:" lines.
expect_error() {
  local name="$1" want="$2"; shift 3
  local err rc
  err="$("$@" 2>&1 >/dev/null)"; rc=$?
  err="$(grep -v '^t5xx: note: ' <<<"$err")"
  if grep -q '^t5xx: error: [0-9]* errors in ' <<<"$err"; then
    err="$(tr '\n' ' ' <<<"$err")"
  fi
  if [ "$rc" != 2 ] || ! grep -qF -- "$want" <<<"$err" || [ "$(wc -l <<<"$err")" != 1 ]; then
    echo "FAIL $name: rc=$rc, stderr:"; echo "$err"; echo "(wanted rc=2 and one line containing: $want)"
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}

# check NAME COMMAND...: counts a pass when COMMAND succeeds, else prints
# NAME and the files named by $show (if any) and counts a failure.
check() {
  local name="$1"; shift
  if "$@"; then
    pass=$((pass + 1))
  else
    echo "FAIL $name"; for f in ${show:-}; do echo "--- $f"; cat "$f"; done
    failures=$((failures + 1))
  fi
}

# demo_corpus_or_exit: builds the small demo corpus the multi-step scripts
# train on under $work/data (3,000 documents, a 1,000-piece vocabulary), or
# prints the log and exits with one failure.
demo_corpus_or_exit() {
  if ! "$T5XX" build_corpus --data_dir="$work/data" --max_documents=3000 --vocab_size=1000 \
       >"$work/corpus.log" 2>&1; then
    echo "FAIL build_corpus:"; cat "$work/corpus.log"; echo "0 passed, 1 failed"; exit 1
  fi
}
