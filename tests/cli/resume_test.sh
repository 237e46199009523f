#!/usr/bin/env bash
# Issue 11's checkpoint behaviours through the binary: bitwise-exact resume
# after kill -9, kill -9 during a save, SIGTERM, a full disk, a permission
# error, corrupted and truncated chunks, and finetuning from a checkpoint
# (runs/finetune.gin) with its key-mismatch report. T5.1.1 tiny with tiny
# lengths and batches, so that every run takes seconds.
# Usage: resume_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
bg=""      # the pid of the t5xx run in the background, if any
waiter=""  # the subshell that waits for it
cleanup() {
  if [ -n "$bg" ]; then kill -9 "$bg" 2>/dev/null; wait "$waiter" 2>/dev/null; fi
  chmod -R u+w "$work" 2>/dev/null
  if [ -n "${KEEP_WORK:-}" ]; then echo "(work files kept in $work)"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/cli_lib.sh"
t0=$SECONDS
# fail NAME [FILES...]: counts a failure, printing NAME and the files.
fail() {
  echo "FAIL $1"; shift
  for f in "$@"; do echo "--- $f"; cat "$f"; done
  failures=$((failures + 1))
}

# A small corpus and SentencePiece model (1000 pieces + 100 sentinels).
demo_corpus_or_exit
D=(--data_dir="$work/data")
# 12 steps, a checkpoint every 4 (and at step 0), a loss logged every step,
# dropout on (its random keys must resume too).
tiny=(--gin_file=examples/t5_1_1_tiny_demo.gin "${D[@]}" --gin.TRAIN_STEPS=12 --gin.BATCH_SIZE=2
      "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.network.T5Config.vocab_size=1152
      --gin.RANDOM_SEED=7 --gin.DROPOUT_RATE=0.1 --gin.utils.SaveCheckpointConfig.period=4
      --gin.train.stats_period=1 --gin.train.train_eval_dataset_cfg=None)

# t5xx ARGS...: the binary in the foreground, under a time limit (a hang is
# a failure, not a stuck test).
t5xx() { timeout -k 5 120 "$T5XX" "$@"; }

# --- helpers for runs in the background
# start NAME COMMAND...: runs COMMAND in the background, output in
# $work/NAME.log; its pid in $bg. A subshell waits for it and keeps its exit
# status (so bash reports no "Killed" job here).
start() {
  local name="$1" i; shift
  rm -f "$work/$name.pid" "$work/$name.rc"
  ( "$@" >"$work/$name.log" 2>&1 & echo $! >"$work/$name.pid"; wait $!; echo $? >"$work/$name.rc" ) \
    2>/dev/null &
  waiter=$!; bg_rc="$work/$name.rc"
  for ((i = 0; i < 1000; i++)); do [ -s "$work/$name.pid" ] && break; sleep 0.01; done
  bg="$(cat "$work/$name.pid")"
}
alive() { local s; s="$(cut -d' ' -f3 "/proc/$bg/stat" 2>/dev/null)" && [ "$s" != Z ]; }
# finish: waits (at most 120 s, then kill -9) for the background run; its
# exit status in $rc.
finish() {
  local deadline=$((SECONDS + 120))
  while alive && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.05; done
  alive && { echo "(the background run hung; killed)"; kill -9 "$bg"; }
  wait "$waiter"; rc="$(cat "$bg_rc" 2>/dev/null || echo none)"; bg=""
}
# poll SECONDS TEST...: 0 once TEST succeeds, 1 if the background run ended
# first, 2 after SECONDS.
poll() {
  local deadline=$((SECONDS + $1)); shift
  while :; do
    "$@" && return 0
    if ! alive; then "$@" && return 0; return 1; fi
    [ "$SECONDS" -ge "$deadline" ] && return 2
    sleep 0.01
  done
}
has_tmp() { compgen -G "$1/checkpoint_*.tmp-*" >/dev/null; }
# The steps of MODEL_DIR's committed checkpoints, ascending.
steps_in() {
  local d
  for d in "$1"/checkpoint_*; do [[ "$d" =~ /checkpoint_([0-9]+)$ ]] && echo "${BASH_REMATCH[1]}"; done | sort -n
}
latest_in() { steps_in "$1" | tail -1; }
# same_checkpoint A B: the two checkpoint directories hold the same files,
# byte for byte (the index, every chunk, the checksums, the data position).
same_checkpoint() {
  [ -f "$1/checkpoint" ] && [ -f "$2/checkpoint" ] && diff -r "$1" "$2" >"$work/diff.out" 2>&1 ||
    { echo "(diff -r $1 $2:)"; head -20 "$work/diff.out"; return 1; }
}
# same_losses A B: every step 1..12 of MODEL_DIR A's train/metrics.jsonl has
# the same "loss" text in B's (for a step logged twice, the last counts).
same_losses() {
  python3 - "$1/train/metrics.jsonl" "$2/train/metrics.jsonl" <<'PYEOF'
import re, sys
def losses(path):
    out = {}
    for line in open(path):
        m = re.search(r'"loss":([^,}]+)', line)
        if m:
            out[int(re.search(r'"step":(\d+)', line).group(1))] = m.group(1)
    return out
a, b = losses(sys.argv[1]), losses(sys.argv[2])
assert sorted(a) == list(range(1, 13)), ("steps logged", sorted(a))
diff = [(s, a.get(s), b.get(s)) for s in sorted(set(a) | set(b)) if a.get(s) != b.get(s)]
assert not diff, ("step, loss in one go, loss resumed", diff)
PYEOF
}
# has_line FILE TEXT: FILE has a line that is exactly TEXT.
has_line() { grep -qxF -- "$2" "$1" || { echo "(no line '$2' in $1)"; return 1; }; }
has_text() { grep -qF -- "$2" "$1" || { echo "(no '$2' in $1)"; return 1; }; }
resumed_from() {  # LOG MODEL_DIR STEP: resumed from checkpoint_STEP, trained to 12
  has_text "$1" "[restore] resuming from MODEL_DIR's latest checkpoint $2/checkpoint_$3: step $3," &&
    { grep -q "^\[done\] step 12 reached .*; checkpoint $2/checkpoint_12$" "$1" ||
      { echo "(no '[done] step 12 reached ... checkpoint_12' in $1)"; return 1; }; }
}

# --- 1. kill -9 and resume, bitwise. Run A trains 12 steps in one go; run B
# the same command, killed (-9) once checkpoint_4 is committed, then run
# again to the end.
t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/A" >"$work/A.log" 2>&1; rc=$?
show="$work/A.log" check "run A: 12 steps in one go" \
  test "$rc" = 0 -a -f "$work/A/checkpoint_12/checkpoint" -a -f "$work/A/checkpoint_4/checkpoint"
start B1 "$T5XX" train "${tiny[@]}" --gin.MODEL_DIR="$work/B"
poll 60 test -d "$work/B/checkpoint_4"; p=$?
kill -9 "$bg" 2>/dev/null; finish
k="$(latest_in "$work/B")"
if [ "$p" = 0 ] && [ "$rc" = 137 ] && [ -n "$k" ] && [ "$k" -lt 12 ] && ! grep -q '^\[done\]' "$work/B1.log"; then
  pass=$((pass + 1))
else
  fail "run B killed with -9 mid-training after checkpoint_4 (poll $p, rc $rc, latest '$k')" "$work/B1.log"
fi
t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/B" >"$work/B2.log" 2>&1; rc=$?
if [ "$rc" = 0 ] && resumed_from "$work/B2.log" "$work/B" "$k" &&
   has_text "$work/B2.log" "[restore] the train data continues where step $k left it ($work/B/checkpoint_$k/t5xx_train_ds-000-of-001.json, "; then
  pass=$((pass + 1))
else
  fail "run B again: resumes from checkpoint_$k, the data continues, trains to 12 (rc $rc)" "$work/B2.log"
fi
check "kill -9 + resume: checkpoint_12 bitwise equal to the run in one go" \
  same_checkpoint "$work/A/checkpoint_12" "$work/B/checkpoint_12"
check "kill -9 + resume: every step's loss equal (as text) to the run in one go" \
  same_losses "$work/A" "$work/B"

# --- 2. kill -9 during a save: the background write of a checkpoint after
# step 0 (the tiny model's ~4 MB take a fraction of a second, fsync'ed file
# by file), caught by polling for its checkpoint_<N>.tmp-* directory. If the
# save ends between the poll and the kill, the same command (which resumes)
# tries again.
kargs=("${tiny[@]}" --gin.utils.SaveCheckpointConfig.period=2 --gin.MODEL_DIR="$work/K")
tmp=""
for attempt in 1 2 3; do
  start K$attempt "$T5XX" train "${kargs[@]}"
  poll 60 compgen -G "$work/K/checkpoint_[1-9]*.tmp-*" >/dev/null
  kill -9 "$bg" 2>/dev/null; finish
  tmp="$(compgen -G "$work/K/checkpoint_*.tmp-*" | head -1)"
  [ -n "$tmp" ] && break
done
if [[ "$tmp" =~ /checkpoint_([0-9]+)\.tmp- ]]; then
  n="${BASH_REMATCH[1]}"; k="$(latest_in "$work/K")"
  if [ "$rc" = 137 ] && [ ! -e "$work/K/checkpoint_$n" ] && [ -n "$k" ] && [ "$k" -lt "$n" ] &&
     [ -f "$work/K/checkpoint_$k/checkpoint" ]; then
    pass=$((pass + 1))
  else
    fail "kill -9 during the save of step $n: no checkpoint_$n, an earlier one (rc $rc, latest '$k')" "$work/K$attempt.log"
  fi
  t5xx train "${kargs[@]}" >"$work/K.log" 2>&1; rc=$?
  if [ "$rc" = 0 ] && resumed_from "$work/K.log" "$work/K" "$k" &&
     has_line "$work/K.log" "[setup] removed $tmp: an unfinished checkpoint an interrupted save left (never restored)" &&
     ! has_tmp "$work/K"; then
    pass=$((pass + 1))
  else
    fail "after kill -9 during a save: the rerun removes $tmp and resumes from checkpoint_$k (rc $rc)" "$work/K.log"
  fi
  # Saving every 2 steps instead of 4 changes nothing in the training.
  check "after kill -9 during a save: checkpoint_12 bitwise equal to run A's" \
    same_checkpoint "$work/A/checkpoint_12" "$work/K/checkpoint_12"
else
  fail "kill -9 during a save: no checkpoint_<N>.tmp-* directory caught in 3 tries" "$work/K$attempt.log"
fi

# --- 3. SIGTERM (a scheduler's preemption) once the first checkpoint is
# committed: the step in progress finishes, its state is saved, exit 143.
start C1 "$T5XX" train "${tiny[@]}" --gin.MODEL_DIR="$work/C"
poll 60 test -d "$work/C/checkpoint_0"; p=$?
kill -TERM "$bg" 2>/dev/null; finish
n="$(grep -oE '^\[stopped\] SIGTERM after step [0-9]+' "$work/C1.log" | grep -oE '[0-9]+$')"
if [ "$p" = 0 ] && [ "$rc" = 143 ] && [ -n "$n" ] && [ "$n" -lt 12 ] &&
   has_line "$work/C1.log" "[stopped] SIGTERM after step $n; its state is in $work/C/checkpoint_$n; run the same command to resume" &&
   grep -q "^\[train\] SIGTERM received after step $n; stopping after saving this step's state" "$work/C1.log" &&
   [ -f "$work/C/checkpoint_$n/checkpoint" ] && [ "$(latest_in "$work/C")" = "$n" ] && ! has_tmp "$work/C"; then
  pass=$((pass + 1))
else
  fail "SIGTERM: exit 143, '[stopped] SIGTERM after step N', checkpoint_N saved (poll $p, rc $rc, N '$n')" "$work/C1.log"
fi
t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/C" >"$work/C2.log" 2>&1; rc=$?
if [ "$rc" = 0 ] && resumed_from "$work/C2.log" "$work/C" "$n"; then
  pass=$((pass + 1))
else
  fail "after SIGTERM: the same command resumes from checkpoint_$n and trains to 12 (rc $rc)" "$work/C2.log"
fi
# checkpoint_N held step N's exact state: the resumed run ends where A did.
check "after SIGTERM: checkpoint_12 bitwise equal to run A's" \
  same_checkpoint "$work/A/checkpoint_12" "$work/C/checkpoint_12"
check "after SIGTERM: every step's loss equal to run A's" same_losses "$work/A" "$work/C"

# SIGINT (Ctrl-C) the same way: exit 130.
start I "$T5XX" train "${tiny[@]}" --gin.MODEL_DIR="$work/I"
poll 60 test -d "$work/I/checkpoint_0"; p=$?
kill -INT "$bg" 2>/dev/null; finish
n="$(grep -oE '^\[stopped\] SIGINT after step [0-9]+' "$work/I.log" | grep -oE '[0-9]+$')"
if [ "$p" = 0 ] && [ "$rc" = 130 ] && [ -n "$n" ] &&
   has_line "$work/I.log" "[stopped] SIGINT after step $n; its state is in $work/I/checkpoint_$n; run the same command to resume" &&
   [ "$(latest_in "$work/I")" = "$n" ]; then
  pass=$((pass + 1))
else
  fail "SIGINT: exit 130, '[stopped] SIGINT after step N', checkpoint_N saved (poll $p, rc $rc, N '$n')" "$work/I.log"
fi

# --- 4. A full disk: MODEL_DIR on a 7 MiB tmpfs in a mount namespace of its
# own (as root, else as a user namespace's root); checkpoint_0 (~4.8 MB)
# fits, checkpoint_4 does not. What the run left is copied out before the
# namespace (and its tmpfs) ends.
ns_script='
md="$1" out="$2"; shift 2
mount -t tmpfs -o size=7m t5xx_test "$md" || exit 97
"$@" --gin.MODEL_DIR="$md" >"$out/log" 2>"$out/err"; echo $? >"$out/rc"
ls -A "$md" >"$out/ls"
[ -d "$md/checkpoint_0" ] && cp -a "$md/checkpoint_0" "$out/copy/"
exit 0'
mkdir -p "$work/df/md" "$work/df/out/copy"
md="$work/df/md"
skip="unshare -m and unshare -rm (user namespaces) both failed to mount a tmpfs"
for ns in "unshare -m" "unshare -rm"; do
  [ "$ns" = "unshare -m" ] && [ "$(id -u)" != 0 ] && continue
  $ns bash -c "$ns_script" _ "$md" "$work/df/out" timeout -k 5 120 "$T5XX" train "${tiny[@]}" 2>"$work/df/ns.err" &&
    [ -f "$work/df/out/rc" ] && { skip=""; break; }
done
if [ -n "$skip" ]; then
  echo "SKIP disk-full: $skip ($(tr '\n' ' ' <"$work/df/ns.err"))"
else
  rc="$(cat "$work/df/out/rc")"
  err="$work/df/out/err"
  if [ "$rc" != 0 ] && has_text "$err" "$md/checkpoint_4" && has_text "$err" "No space left on device" &&
     has_text "$err" "earlier checkpoints are intact (the latest is $md/checkpoint_0)" &&
     grep -qx checkpoint_0 "$work/df/out/ls" && ! grep -q '\.tmp-' "$work/df/out/ls" &&
     ! grep -q '^checkpoint_4' "$work/df/out/ls"; then
    pass=$((pass + 1))
  else
    fail "disk full: stops (rc $rc) naming the path and 'No space left on device', no .tmp- left, checkpoint_0 kept" \
      "$err" "$work/df/out/ls"
  fi
  # The checkpoint_0 that stayed restores: trained on to step 4 it equals
  # run A's checkpoint_4.
  t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/df/out/copy" --gin.TRAIN_STEPS=4 \
    >"$work/df/resume.log" 2>&1; rc=$?
  if [ "$rc" = 0 ] && has_text "$work/df/resume.log" "resuming from MODEL_DIR's latest checkpoint $work/df/out/copy/checkpoint_0: step 0," &&
     same_checkpoint "$work/A/checkpoint_4" "$work/df/out/copy/checkpoint_4"; then
    pass=$((pass + 1))
  else
    fail "disk full: the checkpoint_0 left restores and trains on to run A's checkpoint_4 (rc $rc)" "$work/df/resume.log"
  fi
fi

# --- 5. A permission error: MODEL_DIR becomes read-only once checkpoint_0 is
# committed. Root ignores file modes, so as root the run is the unprivileged
# user 65534 (setpriv), which must be able to read the binary, the configs and
# the corpus.
pm="$work/perm"
mkdir -p "$pm"
runner=(); skip=""
if [ "$(id -u)" = 0 ]; then
  runner=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 755 "$work"; chmod -R a+rX "$work/data"; chown 65534:65534 "$pm"
  "${runner[@]}" "$T5XX" config "${tiny[@]}" --gin.MODEL_DIR="$pm" >/dev/null 2>"$work/perm_probe.err" ||
    skip="as root, and user 65534 cannot run $T5XX with this corpus ($(tail -1 "$work/perm_probe.err"))"
fi
if [ -n "$skip" ]; then
  echo "SKIP permission error: $skip"
else
  start P ${runner[@]+"${runner[@]}"} "$T5XX" train "${tiny[@]}" --gin.MODEL_DIR="$pm"
  poll 60 test -d "$pm/checkpoint_0"; p=$?
  chmod a-w "$pm"
  finish
  chmod u+w "$pm"
  if [ "$p" = 0 ] && [ "$rc" = 2 ] && has_text "$work/P.log" "$pm/checkpoint_4.tmp-" &&
     has_text "$work/P.log" "Permission denied" &&
     has_text "$work/P.log" "earlier checkpoints are intact (the latest is $pm/checkpoint_0)" &&
     [ "$(latest_in "$pm")" = 0 ]; then
    pass=$((pass + 1))
  else
    fail "read-only MODEL_DIR: exit 2 naming the path and 'Permission denied', checkpoint_0 kept (poll $p, rc $rc)" "$work/P.log"
  fi
  rm -rf "$pm"/checkpoint_*.tmp-*  # (a save caught between mkdir and rename cannot remove it)
  t5xx train "${tiny[@]}" --gin.MODEL_DIR="$pm" --gin.TRAIN_STEPS=4 >"$work/P2.log" 2>&1; rc=$?
  if [ "$rc" = 0 ] && has_text "$work/P2.log" "resuming from MODEL_DIR's latest checkpoint $pm/checkpoint_0: step 0," &&
     same_checkpoint "$work/A/checkpoint_4" "$pm/checkpoint_4"; then
    pass=$((pass + 1))
  else
    fail "read-only MODEL_DIR: checkpoint_0 restores and trains on to run A's checkpoint_4 (rc $rc)" "$work/P2.log"
  fi
fi

# --- 6. A corrupted chunk (one byte flipped) and a truncated one in a
# committed checkpoint: refused on restore, naming the array's chunk file,
# before anything is written.
chunk=target.decoder.logits_dense.kernel/0.0
for kind in corrupted truncated; do
  cd_="$work/$kind"
  mkdir -p "$cd_"; cp -a "$work/A/checkpoint_12" "$cd_/"
  if [ "$kind" = corrupted ]; then
    python3 -c '
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1000); b = f.read(1); f.seek(1000); f.write(bytes([b[0] ^ 0x01]))' "$cd_/checkpoint_12/$chunk"
  else
    truncate -s 1000 "$cd_/checkpoint_12/$chunk"
  fi
  expect_error "$kind chunk: named on restore" \
    "checkpoint array 'target.decoder.logits_dense.kernel': chunk file $cd_/checkpoint_12/$chunk is corrupted (crc32c" -- \
    t5xx train "${tiny[@]}" --gin.MODEL_DIR="$cd_" --gin.TRAIN_STEPS=13
  [ "$(ls -A "$cd_")" = checkpoint_12 ] && pass=$((pass + 1)) ||
    fail "$kind chunk: MODEL_DIR was written ($(ls -A "$cd_" | tr '\n' ' '))"
done

# --- 7. Finetuning from a checkpoint with runs/finetune.gin (t5x's
# INITIAL_CHECKPOINT_PATH pattern): run A's checkpoint_12, on to step 14.
ft=(--gin_file=models/t5_1_1/tiny.gin --gin_file=runs/finetune.gin "${D[@]}"
    --gin.MIXTURE_OR_TASK_NAME="'c4_demo_span_corruption'"
    "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.BATCH_SIZE=2
    --gin.network.T5Config.vocab_size=1152
    --gin.seqio.SentencePieceVocabulary.sentencepiece_model_file="'c4_demo/sentencepiece.model'"
    --gin.train.train_eval_dataset_cfg=None --gin.TRAIN_STEPS=14 --gin.train.stats_period=1
    --gin.INITIAL_CHECKPOINT_PATH="'$work/A/checkpoint_12'")
t5xx train "${ft[@]}" --gin.MODEL_DIR="$work/ft" >"$work/ft.log" 2>&1; rc=$?
if [ "$rc" = 0 ] &&
   has_text "$work/ft.log" "[restore] restoring $work/A/checkpoint_12 (utils.RestoreCheckpointConfig, mode 'specific'): step 12," &&
   [ "$(grep -m1 '^\[train\] step' "$work/ft.log" | cut -d'|' -f1)" = "[train] step 13 of 14 " ] &&
   grep -q "^\[done\] step 14 reached (trained 2 steps .*; checkpoint $work/ft/checkpoint_14$" "$work/ft.log" &&
   [ -f "$work/ft/checkpoint_14/checkpoint" ]; then
  pass=$((pass + 1))
else
  fail "finetune.gin from run A's checkpoint_12: mode 'specific', steps 13-14, checkpoint_14 (rc $rc)" "$work/ft.log"
fi
# A model with a third decoder layer: one error listing every missing key
# (the layer's 14 parameters and their 56 Adafactor slots) with its shape,
# before MODEL_DIR exists. The expected list is run A's variable table's
# layers_1 rows, renamed to layers_2.
t5xx train "${ft[@]}" --gin.MODEL_DIR="$work/ft3" --gin.network.T5Config.num_decoder_layers=3 \
  >/dev/null 2>"$work/ft3.err"; rc=$?
show="$work/ft3.err" check "a third decoder layer: one error with all 70 missing keys and shapes" \
  python3 - "$rc" "$work/ft3.err" "$work/A.log" "$work/A/checkpoint_12" "$work/ft3" <<'PYEOF'
import os, re, sys
rc, err, table, ckpt, md = int(sys.argv[1]), open(sys.argv[2]).read(), open(sys.argv[3]).read(), sys.argv[4], sys.argv[5]
assert rc == 2, rc
assert not os.path.exists(md), "MODEL_DIR was created"
want = set()
for m in re.finditer(r"^((?:target|state)/\S*decoder\.layers_1\.\S+)\s+(\([^)]*\))", table, re.M):
    name = m.group(1).replace("layers_1", "layers_2").replace(".", "/")
    shape = "[" + m.group(2)[1:-1].rstrip(",") + "]"
    want.add("  missing from the checkpoint: %s %s" % (name, shape))
assert len(want) == 70, len(want)
lines = [l for l in err.splitlines() if not l.startswith("t5xx: note: ")]
head = "t5xx: error: checkpoint %s does not match the model: 70 problems " % ckpt
assert lines[0].startswith(head), lines[0]
listed = set(l for l in lines[1:] if l.startswith("  "))
assert listed == want, ("missing", sorted(want - listed)[:5], "unexpected", sorted(listed - want)[:5])
assert len(lines) == 72 and lines[71].startswith("To fix: "), lines[71:]
PYEOF
# Another emb_dim: every parameter and slot whose shape depends on it, with
# both shapes (model vs checkpoint).
t5xx train "${ft[@]}" --gin.MODEL_DIR="$work/ft_emb" --gin.network.T5Config.emb_dim=64 \
  >/dev/null 2>"$work/ft_emb.err"; rc=$?
show="$work/ft_emb.err" check "another emb_dim: one error with the shape differences" \
  python3 - "$rc" "$work/ft_emb.err" "$work/A/checkpoint_12" "$work/ft_emb" <<'PYEOF'
import os, re, sys
rc, err, ckpt, md = int(sys.argv[1]), open(sys.argv[2]).read(), sys.argv[3], sys.argv[4]
assert rc == 2, rc
assert not os.path.exists(md), "MODEL_DIR was created"
lines = [l for l in err.splitlines() if not l.startswith("t5xx: note: ")]
m = re.match(r"t5xx: error: checkpoint %s does not match the model: (\d+) problems " % re.escape(ckpt), lines[0])
assert m, lines[0]
listed = lines[1:-1]
assert len(listed) == int(m.group(1)) and lines[-1].startswith("To fix: "), (m.group(1), len(listed), lines[-1])
assert all(l.startswith("  shape differs: ") for l in listed), [l for l in listed if not l.startswith("  shape differs: ")][:3]
for want in ["target/token_embedder/embedding is [1152, 64] in the model but [1152, 128] in the checkpoint",
             "target/decoder/layers_1/mlp/wo/kernel is [256, 64] in the model but [256, 128] in the checkpoint",
             "state/param_states/decoder/logits_dense/kernel/v_row is [1] in the model but [128] in the checkpoint"]:
    assert "  shape differs: " + want in listed, want
PYEOF
expect_error "INITIAL_CHECKPOINT_PATH that does not exist" \
  "(t5x.utils.RestoreCheckpointConfig.path) = '$work/nowhere/checkpoint_5' is not a t5x checkpoint directory (it does not exist)" -- \
  t5xx train "${ft[@]}" --gin.MODEL_DIR="$work/ft_none" --gin.INITIAL_CHECKPOINT_PATH="'$work/nowhere/checkpoint_5'"
[ ! -e "$work/ft_emb" ] && [ ! -e "$work/ft_none" ] && pass=$((pass + 1)) ||
  fail "a refused finetune created MODEL_DIR"

# --- A resume whose configuration no longer fits MODEL_DIR's checkpoint.
cp -a "$work/A" "$work/R1"
# Other feature lengths: the saved data position does not fit them.
expect_error "resume with other TASK_FEATURE_LENGTHS" \
  "the saved position is for feature lengths {decoder_input_tokens=8, decoder_loss_weights=8" -- \
  t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/R1" --gin.TRAIN_STEPS=14 \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 16}"
# Another model: the mismatch report says RestoreCheckpointConfig does not
# apply when resuming, and what does.
t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/R1" --gin.TRAIN_STEPS=14 \
  --gin.network.T5Config.emb_dim=64 >/dev/null 2>"$work/R1.err"; rc=$?
show="$work/R1.err" check "resume with another model names what applies" \
  bash -c '[ "$0" = 2 ] && grep -q "^t5xx: error: resuming from MODEL_DIR.s latest checkpoint: checkpoint .* does not match the model" "$1" &&
           grep -qF "utils.RestoreCheckpointConfig does not apply when resuming (as in t5x)" "$1"' \
  "$rc" "$work/R1.err"
# A file named like a checkpoint is refused before anything runs.
cp -a "$work/A" "$work/R2"; echo junk >"$work/R2/checkpoint_13"
expect_error "a file named like a checkpoint" \
  "holds checkpoint_13, which is not a checkpoint directory; move it out of MODEL_DIR" -- \
  t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/R2" --gin.TRAIN_STEPS=14
# A checkpoint directory whose name is not its step.
cp -a "$work/A" "$work/R3"; mv "$work/R3/checkpoint_12" "$work/R3/checkpoint_15"
expect_error "a checkpoint renamed to another step" \
  "checkpoint_15 holds step 12 (its optimizer.state.step), not 15; rename it checkpoint_12" -- \
  t5xx train "${tiny[@]}" --gin.MODEL_DIR="$work/R3" --gin.TRAIN_STEPS=16
# TRAIN_STEPS_RELATIVE (runs/pretrain.gin, as t5x's) goes on from the
# resumed step.
cp -a "$work/A" "$work/R4"
show="$work/R4.log" check "TRAIN_STEPS_RELATIVE=2 resumes 12 -> 14" \
  bash -c '"$@" >"'"$work/R4.log"'" 2>&1 && [ -f "'"$work/R4"'/checkpoint_14/checkpoint" ] &&
           grep -q "^\[done\] step 14 reached (trained 2 steps" "'"$work/R4.log"'"' \
  _ "$T5XX" train "${tiny[@]}" --gin.MODEL_DIR="$work/R4" --gin.TRAIN_STEPS_RELATIVE=2
# SIGTERM without a checkpoint period (save once, at the end) and with a
# train-eval: the step is saved at once, without running the train-eval.
start E "$T5XX" train --gin_file=examples/t5_1_1_tiny_demo.gin "${D[@]}" --gin.TRAIN_STEPS=100000 \
  --gin.BATCH_SIZE=2 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" \
  --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=50 --gin.train.stats_period=1 \
  --gin.MODEL_DIR="$work/E"
for ((i = 0; i < 600; i++)); do grep -q '^\[train\] step 2 ' "$work/E.log" 2>/dev/null && break; sleep 0.1; done
kill -TERM "$bg" 2>/dev/null; finish; rc_e="$rc"
show="$work/E.log" check "SIGTERM with period None saves at once, no train-eval first" \
  bash -c '[ "$0" = 143 ] && ! grep -q "^\[eval " "$1" && grep -q "^\[stopped\] SIGTERM after step" "$1" &&
           ls -d "$2"/checkpoint_[1-9]* >/dev/null 2>&1' "$rc_e" "$work/E.log" "$work/E"

# --- 8. Orbax's layout (train.use_orbax = True, t5x's default): run O is
# run A's command writing Orbax checkpoints, killed (-9) once checkpoint_4
# is committed and run again. It resumes from the Orbax checkpoint to the
# same losses as run A, and finetuning restores its checkpoint_12 as it
# restores run A's (the same steps, losses equal to ft's).
start O1 "$T5XX" train "${tiny[@]}" --gin.train.use_orbax=True --gin.MODEL_DIR="$work/O"
poll 60 test -d "$work/O/checkpoint_4"; p=$?
kill -9 "$bg" 2>/dev/null; finish
k="$(latest_in "$work/O")"
t5xx train "${tiny[@]}" --gin.train.use_orbax=True --gin.MODEL_DIR="$work/O" >"$work/O2.log" 2>&1; rc=$?
show="$work/O2.log" check "Orbax layout: killed after checkpoint_$k, resumed to 12 (poll $p)" \
  bash -c '[ "$0" = 0 ] && [ -f "$1/checkpoint_12/state/manifest.ocdbt" ] &&
           [ -f "$1/checkpoint_12/state/_METADATA" ] && [ ! -e "$1/checkpoint_12/checkpoint" ]' \
  "$rc" "$work/O"
[ "$rc" = 0 ] && resumed_from "$work/O2.log" "$work/O" "$k" && pass=$((pass + 1)) ||
  fail "Orbax layout: resumes from checkpoint_$k" "$work/O2.log"
check "Orbax layout: kill -9 + resume: every step's loss equal (as text) to run A's" \
  same_losses "$work/A" "$work/O"
t5xx train "${ft[@]}" --gin.MODEL_DIR="$work/ftO" --gin.INITIAL_CHECKPOINT_PATH="'$work/O/checkpoint_12'" \
  >"$work/ftO.log" 2>&1; rc=$?
show="$work/ftO.log" check "finetune.gin from the Orbax checkpoint_12: the losses of run A's" \
  bash -c '[ "$0" = 0 ] && grep -q "restoring $1/checkpoint_12 (utils.RestoreCheckpointConfig, mode .specific.): step 12," "$2" &&
           diff <(grep -o "\"loss\":[^,}]*" "$3/train/metrics.jsonl") <(grep -o "\"loss\":[^,}]*" "$4/train/metrics.jsonl")' \
  "$rc" "$work/O" "$work/ftO.log" "$work/ft" "$work/ftO"

echo "($((SECONDS - t0)) s)"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
