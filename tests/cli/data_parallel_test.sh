#!/usr/bin/env bash
# `t5xx train` on 2 processes, started as torchrun starts them (RANK,
# WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and by `t5xx launch`: every logged
# train loss and the final train-eval loss equal one process's within 1e-5
# relative, the final checkpoint's parameters too, only rank 0 writes
# MODEL_DIR; a rank that fails or is killed mid-run ends the others with
# the rank or the failed collective named.
# Usage: data_parallel_test.sh /path/to/t5xx PYTHON3
set -u
T5XX="$1"
PY="${2:-python3}"
work="$(mktemp -d)"
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

if ! "$T5XX" build_corpus --data_dir="$work/data" --max_documents=3000 --vocab_size=1000 \
     >"$work/corpus.log" 2>&1; then
  echo "FAIL build_corpus:"; cat "$work/corpus.log"; echo "0 passed, 1 failed"; exit 1
fi
args=(--gin_file=examples/t5_1_1_tiny_demo.gin --data_dir="$work/data" --gin.TRAIN_STEPS=6
      --gin.BATCH_SIZE=4 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=2 --gin.train.stats_period=1
      --gin.utils.SaveCheckpointConfig.period=3)
port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

timeout 300 "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/one" >"$work/one.log" 2>&1
p="$(port)"
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 300 "$T5XX" train "${args[@]}" \
    --gin.MODEL_DIR="$work/two" >"$work/two$r.log" 2>&1 &
done
wait %1; rc0=$?; wait %2; rc1=$?
show="$work/two0.log $work/two1.log" check "two processes train and exit 0" \
  test "$rc0" = 0 -a "$rc1" = 0
show="$work/two0.log" check "rank 0 logs that it joined 2 processes" \
  grep -q "^\[setup\] process 0 of 2 (torchrun)" "$work/two0.log"
show="$work/one.log $work/two0.log" check "losses, train-eval loss and checkpoint_6 equal one process's (1e-5)" \
  "$PY" - "$work/one" "$work/two" <<'PYEOF'
import glob, json, os, sys
import msgpack, numpy as np, zarr
one, two = sys.argv[1], sys.argv[2]
def metrics(d, sub, key):
    out = {}
    for line in open(os.path.join(d, sub, "metrics.jsonl")):
        j = json.loads(line)
        if key in j: out[j["step"]] = j[key]
    return out
a, b = metrics(one, "train", "loss"), metrics(two, "train", "loss")
assert sorted(a) == list(range(1, 7)) and sorted(b) == sorted(a), (a, b)
for s in a: assert abs(a[s] - b[s]) <= 1e-5 * abs(a[s]), (s, a[s], b[s])
ea = metrics(one, "training_eval/c4_demo_span_corruption", "loss")
eb = metrics(two, "training_eval/c4_demo_span_corruption", "loss")
assert ea.keys() == eb.keys() and ea, (ea, eb)
for s in ea: assert abs(ea[s] - eb[s]) <= 1e-5 * abs(ea[s]), (s, ea[s], eb[s])
names = [os.path.basename(p) for p in glob.glob(os.path.join(one, "checkpoint_6", "target.*"))]
assert len(names) > 10, names
for n in names:
    x = zarr.open(os.path.join(one, "checkpoint_6", n), mode="r")[...]
    y = zarr.open(os.path.join(two, "checkpoint_6", n), mode="r")[...]
    assert np.max(np.abs(x - y)) <= 1e-5 * max(np.max(np.abs(x)), 1e-30), n
PYEOF
check "only rank 0 wrote MODEL_DIR (one set of event files)" \
  test "$(ls "$work/two/train" | grep -c tfevents)" = 1

# t5xx launch starts the same 2-process run.
timeout 300 "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train "${args[@]}" \
  --gin.MODEL_DIR="$work/launched" >"$work/launched.log" 2>&1; rc=$?
show="$work/launched.log" check "t5xx launch --nproc_per_node=2: the same losses as the 2 processes" \
  bash -c '[ "$0" = 0 ] && cmp -s <(grep -o "\"loss\": [^,]*" "$1/train/metrics.jsonl") \
                                  <(grep -o "\"loss\": [^,]*" "$2/train/metrics.jsonl")' \
  "$rc" "$work/two" "$work/launched"
# A rank that fails stops the others; launch exits with its status.
start=$SECONDS
timeout 120 "$T5XX" launch --nproc_per_node=3 -- sh -c 'if [ "$RANK" = 1 ]; then exit 7; fi; sleep 100' \
  >/dev/null 2>"$work/launchfail.err"; rc=$?
show="$work/launchfail.err" check "launch: a failed rank stops the others, named, with its status" \
  bash -c '[ "$0" = 7 ] && [ "$1" -lt 60 ] && grep -q "rank 1 (pid [0-9]*) exited with status 7; stopping the other 2 processes" "$2"' \
  "$rc" "$((SECONDS - start))" "$work/launchfail.err"
expect_error "launch without a command" "no command" -- "$T5XX" launch --nproc_per_node=2

# A rank that never starts: rank 0 names it after T5XX_JOIN_TIMEOUT.
start=$SECONDS
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$(port)" T5XX_JOIN_TIMEOUT=2 \
  timeout 120 "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/alone" >/dev/null 2>"$work/alone.err"
rc=$?
show="$work/alone.err" check "a rank that never joins is named after T5XX_JOIN_TIMEOUT" \
  bash -c '[ "$0" = 2 ] && [ "$1" -lt 30 ] && grep -q "rank 1 of 2 did not join the run at 127.0.0.1:[0-9]* within 2 s" "$2"' \
  "$rc" "$((SECONDS - start))" "$work/alone.err"
expect_error "a bad T5XX_JOIN_TIMEOUT" "T5XX_JOIN_TIMEOUT = 'soon' is not a number of seconds" -- \
  env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$(port)" T5XX_JOIN_TIMEOUT=soon \
  "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/alone2"

# A rank killed mid-run: the other ends with an error naming the collective.
p="$(port)"
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 300 "$T5XX" train "${args[@]}" \
  --gin.TRAIN_STEPS=100000 --gin.utils.SaveCheckpointConfig.period=None \
  --gin.MODEL_DIR="$work/dead" >"$work/dead0.log" 2>&1 &
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 300 "$T5XX" train "${args[@]}" \
  --gin.TRAIN_STEPS=100000 --gin.utils.SaveCheckpointConfig.period=None \
  --gin.MODEL_DIR="$work/dead" >"$work/dead1.log" 2>&1 &
pid1=$!
for ((i = 0; i < 600; i++)); do grep -q '^\[train\] step 2 ' "$work/dead1.log" 2>/dev/null && break; sleep 0.1; done
pkill -9 -P "$pid1" 2>/dev/null; kill -9 "$pid1" 2>/dev/null; wait "$pid1" 2>/dev/null
wait %1; rc0=$?
show="$work/dead0.log" check "a dead rank ends the other with the failed collective named" \
  bash -c '[ "$0" != 0 ] && [ "$0" != 124 ] && grep -q "collective failed on rank 0" "$1"' "$rc0" "$work/dead0.log"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
