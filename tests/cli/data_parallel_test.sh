#!/usr/bin/env bash
# `t5xx train` on 2 processes, started as torchrun starts them (RANK,
# WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and by `t5xx launch`: each process
# reads its own data shard, half of every global batch (they train on
# disjoint rows; each saves a compact position), the train-eval loss before training is
# one process's, launch repeats the run's losses, kill -9 and resume is
# bitwise, a batch that does not split is refused, only rank 0 writes
# MODEL_DIR; a rank that fails or is killed mid-run ends the others with
# the rank or the failed collective named.
# Usage: data_parallel_test.sh /path/to/t5xx PYTHON3
set -u
T5XX="$1"
PY="${2:-python3}"
work="$(mktemp -d)"
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

demo_corpus_or_exit
args=(--gin_file=examples/t5_1_1_tiny_demo.gin --data_dir="$work/data" --gin.TRAIN_STEPS=6
      --gin.BATCH_SIZE=4 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=2 --gin.train.stats_period=1
      --gin.utils.SaveCheckpointConfig.period=3 --gin.train.run_eval_before_training=True)
port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

timeout 300 "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/one" >"$work/one.log" 2>&1
p="$(port)"
mkdir -p "$work/two_rows"
for r in 0 1; do
  T5XX_DATA_LOG="$work/two_rows" RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p \
    timeout 300 "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/two" >"$work/two$r.log" 2>&1 &
done
wait %1; rc0=$?; wait %2; rc1=$?
show="$work/two0.log $work/two1.log" check "two processes train and exit 0" \
  test "$rc0" = 0 -a "$rc1" = 0
show="$work/two0.log" check "rank 0 logs that it joined 2 processes" \
  grep -q "^\[setup\] process 0 of 2 (torchrun)" "$work/two0.log"
# Each process reads its own shard (seqio ShardInfo, one per data-axis
# index; the corpus has 4 train files, so file-level: files 0 and 2 on rank
# 0, 1 and 3 on rank 1) and BATCH_SIZE / 2 examples of every global batch,
# as t5x does. So the 2-process run does not train on one process's
# batches, and its losses are not one process's (what the trainer-level
# tests, tests/partitioning/data_parallel_test, check with one global batch
# given to every process). What t5x guarantees instead, checked here: the
# processes read disjoint data; each step is one step on the union of their
# batches (so the train-eval loss before any training, on the same global
# eval batches, is one process's); a run is deterministic for a process
# count (t5xx launch below logs the same losses), and resumes bitwise from
# its per-process dataset states (the kill -9 test below).
for r in 0 1; do
  show="$work/two$r.log" check "rank $r reads shard $r of 2, 2 examples of each global batch of 4" \
    grep -q "^\[setup\] data: shard $r of 2 (seqio ShardInfo; one per data-axis index): 2 examples per process of each global batch of 4" "$work/two$r.log"
done
show="$work/two0.log" check "checkpoint_6 holds one compact dataset state per data shard (<= 1 KB); the ranks trained on different rows" \
  "$PY" - "$work/two/checkpoint_6" "$work/two_rows" <<'PYEOF'
import os, sys
ckpt, log = sys.argv[1], sys.argv[2]
files = sorted(f for f in os.listdir(ckpt) if f.startswith("t5xx_train_ds-"))
assert files == ["t5xx_train_ds-000-of-002.json", "t5xx_train_ds-001-of-002.json"], files
sizes = [os.path.getsize(os.path.join(ckpt, f)) for f in files]
assert all(n <= 1024 for n in sizes), sizes
# T5XX_DATA_LOG: "<batch> <row in the global batch> <FNV-1a digest>" per
# trained row; rows of different documents have different digests.
def digests(rank):
    return [line.split()[2] for line in open(os.path.join(log, "data_log.%d.txt" % rank))]
a, b = digests(0), digests(1)
assert len(a) == 12 and len(b) == 12, (len(a), len(b))
assert not (set(a) & set(b)), sorted(set(a) & set(b))[:3]
PYEOF
show="$work/one.log $work/two0.log" check "2 processes: finite losses at steps 1-6, the train-eval loss at step 0 is one process's (1e-5)" \
  "$PY" - "$work/one" "$work/two" <<'PYEOF'
import json, math, os, sys
one, two = sys.argv[1], sys.argv[2]
def metrics(d, sub, key):
    out = {}
    for line in open(os.path.join(d, sub, "metrics.jsonl")):
        j = json.loads(line)
        if key in j: out[j["step"]] = j[key]
    return out
b = metrics(two, "train", "loss")
assert sorted(b) == list(range(1, 7)) and all(math.isfinite(v) for v in b.values()), b
ea = metrics(one, "training_eval/c4_demo_span_corruption", "loss")
eb = metrics(two, "training_eval/c4_demo_span_corruption", "loss")
assert 0 in ea and 0 in eb, (ea, eb)
assert abs(ea[0] - eb[0]) <= 1e-5 * abs(ea[0]), (ea[0], eb[0])
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
# A global batch that does not split over the 2 data-parallel processes:
# both processes stop with one error naming the binding and the axis size.
p="$(port)"
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 120 "$T5XX" train "${args[@]}" \
  --gin.BATCH_SIZE=3 --gin.MODEL_DIR="$work/odd" >/dev/null 2>"$work/odd1.err" &
expect_error "a batch of 3 over 2 processes" \
  "train/utils.DatasetConfig.batch_size = 3 does not divide by the data axis size 2" -- \
  env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 120 "$T5XX" train "${args[@]}" \
  --gin.BATCH_SIZE=3 --gin.MODEL_DIR="$work/odd"
wait $!; rc1=$?
show="$work/odd1.err" check "rank 1 stops with the same error" \
  bash -c '[ "$0" = 2 ] && grep -q "batch_size = 3 does not divide by the data axis size 2" "$1"' \
  "$rc1" "$work/odd1.err"

# kill -9 of both processes once checkpoint_3 is committed, then a resumed
# 2-process run (t5xx launch) from it: each process restores its own data
# shard's position, so the resumed run logs the uninterrupted run's losses
# at steps 4-6 and writes the same checkpoint_6, bitwise (train state and
# both dataset states). A checkpoint_6 the killed run may have finished
# first is removed, so the resume always starts at step 3.
p="$(port)"
pids=()
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 300 "$T5XX" train "${args[@]}" \
    --gin.MODEL_DIR="$work/killed" >"$work/killed$r.log" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < 6000; i++)); do [ -f "$work/killed/checkpoint_3/checkpoint" ] && break; sleep 0.01; done
for pid in "${pids[@]}"; do pkill -9 -P "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; done
wait "${pids[@]}" 2>/dev/null
show="$work/killed0.log" check "the 2-process run was killed after checkpoint_3" \
  test -f "$work/killed/checkpoint_3/checkpoint"
rm -rf "$work/killed/checkpoint_6"
timeout 300 "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train "${args[@]}" \
  --gin.MODEL_DIR="$work/killed" >"$work/resumed.log" 2>&1; rc=$?
show="$work/resumed.log" check "the resumed run restored both data shards' positions at step 3" \
  bash -c '[ "$0" = 0 ] && [ "$(grep -c "\[restore\] the train data continues where step 3 left it (.*t5xx_train_ds-00[01]-of-002.json, [0-9]* bytes; .* s to restore and replay .*)" "$1")" = 2 ]' \
  "$rc" "$work/resumed.log"
show="$work/resumed.log $work/two0.log" check "after kill -9, the resumed 2-process run logs the uninterrupted losses at steps 4-6" \
  bash -c 'diff <(grep -o "^\[train\] step [456] of 6 | loss [^|]*" "$0") \
                <(grep -o "\[train\] step [456] of 6 | loss [^|]*" "$1" | sort -u)' \
  "$work/two0.log" "$work/resumed.log"
show="$work/resumed.log" check "after kill -9 and resume, checkpoint_6 equals the uninterrupted run's bitwise" \
  "$PY" - "$work/two/checkpoint_6" "$work/killed/checkpoint_6" <<'PYEOF'
import filecmp, glob, os, sys
import numpy as np, zarr
a, b = sys.argv[1], sys.argv[2]
arrays = [os.path.basename(p) for p in glob.glob(os.path.join(a, "*")) if os.path.isdir(p)]
assert len(arrays) > 10, arrays
for n in arrays:
    x = zarr.open(os.path.join(a, n), mode="r")[...]
    y = zarr.open(os.path.join(b, n), mode="r")[...]
    assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), n
for f in ("t5xx_train_ds-000-of-002.json", "t5xx_train_ds-001-of-002.json"):
    assert filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False), f
PYEOF

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

# train.data_order = 'global' (issue 35, the elastic data position): every
# data replica reads the global batches and keeps its rows, so a checkpoint
# of a 2x1 run resumes on 4x1 and on 1x1 with the uninterrupted run's
# global sequence: T5XX_DATA_LOG's per-row digests (batch, row in the
# global batch, digest) of steps 1-6 on 2x1 and 7-12 on 4x1 (or 1x1) equal
# those of 12 steps on one process, row for row.
el=("${args[@]}" --gin.BATCH_SIZE=8 --gin.train.data_order="'global'" --gin.utils.SaveCheckpointConfig.period=6)
mkdir -p "$work"/dl{1,2,4,1b}
T5XX_DATA_LOG="$work/dl1" timeout 300 "$T5XX" train "${el[@]}" --gin.TRAIN_STEPS=12 \
  --gin.MODEL_DIR="$work/el1" >"$work/el1.log" 2>&1
T5XX_DATA_LOG="$work/dl2" timeout 300 "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train "${el[@]}" \
  --gin.TRAIN_STEPS=6 --gin.MODEL_DIR="$work/el2" >"$work/el2.log" 2>&1
cp -r "$work/el2" "$work/el2b"
T5XX_DATA_LOG="$work/dl4" timeout 300 "$T5XX" launch --nproc_per_node=4 -- "$T5XX" train "${el[@]}" \
  --gin.TRAIN_STEPS=12 --gin.MODEL_DIR="$work/el2" >"$work/el4.log" 2>&1
T5XX_DATA_LOG="$work/dl1b" timeout 300 "$T5XX" train "${el[@]}" --gin.TRAIN_STEPS=12 \
  --gin.MODEL_DIR="$work/el2b" >"$work/el1b.log" 2>&1
rows() { cat "$@" | sort -n -k1,1 -k2,2; }
rows "$work"/dl1/* >"$work/rows_one"; rows "$work"/dl2/* "$work"/dl4/* >"$work/rows_2_4"
rows "$work"/dl2/* "$work"/dl1b/* >"$work/rows_2_1"
show="$work/el2.log $work/el4.log" check "global order: 2x1 then 4x1 trains on the one-process run's rows" \
  bash -c '[ "$(wc -l <"$0")" = 96 ] && cmp "$0" "$1"' "$work/rows_one" "$work/rows_2_4"
show="$work/el1b.log" check "global order: 2x1 then 1x1 trains on the one-process run's rows" \
  cmp "$work/rows_one" "$work/rows_2_1"
show="$work/el4.log" check "the 4x1 resume restores the one data position (<= 1 KB) the 2x1 run saved" \
  bash -c 'ls "$0"/checkpoint_6/t5xx_train_ds-* | grep -qx ".*/t5xx_train_ds-000-of-001.json" &&
           [ "$(ls "$0"/checkpoint_6/t5xx_train_ds-* | wc -l)" = 1 ] &&
           [ "$(stat -c %s "$0"/checkpoint_6/t5xx_train_ds-000-of-001.json)" -le 1024 ] &&
           grep -q "^\[restore\] the train data continues where step 6 left it (.*t5xx_train_ds-000-of-001.json, [0-9]* bytes; .* s to restore and replay the pipeline.s open units)" "$1"' \
  "$work/el2" "$work/el4.log"
# A per-shard checkpoint of 2 data shards resumed under the global order:
# the data starts again, with a warning naming what the checkpoint holds
# and the setting that would continue it.
cp -r "$work/two" "$work/two_g"
timeout 300 "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train "${args[@]}" --gin.TRAIN_STEPS=7 \
  --gin.train.data_order="'global'" --gin.MODEL_DIR="$work/two_g" >"$work/two_g.log" 2>&1
show="$work/two_g.log" check "a per-shard data position under the global order: a warning that names both orders" \
  grep -q "^\[restore\] WARNING: .*t5xx_train_ds-000-of-001.json does not exist: the train data starts from its beginning .*it holds the positions of 2 data shards, saved with train.data_order = .per_shard. on a data axis of 2: continue them with that order and size (this run: .global.)" "$work/two_g.log"
expect_error "an unknown train.data_order" "--gin.train.data_order flag, column 1 (__main__.train.data_order) = 'random' is not a data order; use 'per_shard' (seqio's) or 'global'" -- \
  "$T5XX" config "${args[@]}" --gin.MODEL_DIR="$work/x" --gin.train.data_order="'random'"

# Under torchrun's variables (no t5xx launch), processes launched for other
# layouts that collide on a rank are told so, not "the same --node_rank"
# (issue 50): ranks 0 and 1 of 2 per host, and a rank 1 of 1 per host.
p="$(port)"
for spec in "0 2" "1 2" "1 1"; do
  set -- $spec
  RANK=$1 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=$2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p \
    T5XX_JOIN_TIMEOUT=90 timeout 200 "$T5XX" train "${args[@]}" --gin.TRAIN_STEPS=1 \
    --gin.MODEL_DIR="$work/layouts" >"$work/layouts_$1_$2.log" 2>&1 &
  sleep 0.3
done
wait
show="$work/layouts_0_2.log $work/layouts_1_2.log $work/layouts_1_1.log" check "a rank claimed by processes of two layouts is named as such" \
  bash -c 'grep -qh "rank 1 was claimed by two processes, on .* and on .*, launched differently: 2 processes in all, [12] per host there; 2 in all, [12] per host here (WORLD_SIZE, LOCAL_WORLD_SIZE): give every host the same --nnodes and --nproc_per_node" "$0" "$1"' \
  "$work/layouts_1_2.log" "$work/layouts_1_1.log"

# A rank killed mid-run: the other ends with an error naming the collective.
p="$(port)"
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 300 "$T5XX" train "${args[@]}" \
  --gin.TRAIN_STEPS=100000 --gin.utils.SaveCheckpointConfig.period=None \
  --gin.MODEL_DIR="$work/dead" >"$work/dead0.log" 2>&1 &
pid0=$!
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 300 "$T5XX" train "${args[@]}" \
  --gin.TRAIN_STEPS=100000 --gin.utils.SaveCheckpointConfig.period=None \
  --gin.MODEL_DIR="$work/dead" >"$work/dead1.log" 2>&1 &
pid1=$!
for ((i = 0; i < 600; i++)); do grep -q '^\[train\] step 2 ' "$work/dead1.log" 2>/dev/null && break; sleep 0.1; done
pkill -9 -P "$pid1" 2>/dev/null; kill -9 "$pid1" 2>/dev/null; wait "$pid1" 2>/dev/null
wait "$pid0"; rc0=$?
show="$work/dead0.log" check "a dead rank ends the other with the failed collective named" \
  bash -c '[ "$0" != 0 ] && [ "$0" != 124 ] && grep -q "collective failed on rank 0" "$1"' "$rc0" "$work/dead0.log"
show="$work/dead0.log" check "and the dead rank named (its heartbeat stopped)" \
  grep -q "rank 1 of the run stopped (on host [^;]*; no heartbeat" "$work/dead0.log"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
