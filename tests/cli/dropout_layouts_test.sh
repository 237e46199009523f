#!/usr/bin/env bash
# Dropout that does not depend on the layout (issue 50): with dropout 0.1
# and train.data_order = 'global' (every layout reads the same global
# batches), one process's losses over 10 steps are those of
#  - 2x1 data parallelism,
#  - 1x2 tensor parallelism (heads, MLP units and vocabulary split),
#  - 2x2 ZeRO-3 with 2-D activation partitioning,
#  - 2 microbatches on one process,
#  - an elastic resume: 2x1 to step 4, 4x1 to step 7, 1x1 to step 10,
# each step within 1e-5 relative (train/metrics.jsonl's full-precision
# losses; the layouts add in other orders). Dropout masks are a function of
# the element's position in the global batch (kernels/dropout_mask.h).
# Usage: dropout_layouts_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

demo_corpus_or_exit
args=(--gin_file=configs/examples/t5_1_1_tiny_demo.gin --data_dir="$work/data"
      --gin.BATCH_SIZE=8 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=1 --gin.train.stats_period=1
      --gin.train.eval_period=100 --gin.DROPOUT_RATE=0.1 --gin.train.data_order="'global'"
      --gin.utils.SaveCheckpointConfig.period=100)
run() {  # NAME PROCESSES ARGS...
  local name="$1" n="$2"; shift 2
  if [ "$n" = 1 ]; then
    timeout 300 "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/$name" "$@" >>"$work/$name.log" 2>&1
  else
    timeout 300 "$T5XX" launch --nproc_per_node="$n" -- "$T5XX" train "${args[@]}" \
      --gin.MODEL_DIR="$work/$name" "$@" >>"$work/$name.log" 2>&1
  fi
}
# Every step 1..10 of MODEL_DIR A's losses within 1e-5 relative of B's.
same_losses() {
  python3 - "$1/train/metrics.jsonl" "$2/train/metrics.jsonl" <<'PYEOF'
import json, sys
def losses(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if "loss" in r: out[r["step"]] = r["loss"]
    return out
a, b = losses(sys.argv[1]), losses(sys.argv[2])
steps = list(range(1, 11))
bad = [(s, a.get(s), b.get(s)) for s in steps
       if s not in a or s not in b or abs(a[s] - b[s]) > 1e-5 * abs(b[s])]
print("worst relative difference:", max(abs(a[s] - b[s]) / abs(b[s]) for s in steps if s in a and s in b))
sys.exit(1 if bad else 0)
PYEOF
}

run one 1 --gin.TRAIN_STEPS=10
check "one process trains with dropout 0.1" test -d "$work/one/checkpoint_10"
run nodrop 1 --gin.TRAIN_STEPS=10 --gin.DROPOUT_RATE=0.0
show="$work/one.log" check "dropout 0.1 changes the losses (it is on)" \
  bash -c '! diff -q <(grep -o "\"loss\":[^,}]*" "$0/train/metrics.jsonl") <(grep -o "\"loss\":[^,}]*" "$1/train/metrics.jsonl") >/dev/null' \
  "$work/one" "$work/nodrop"

run dp 2 --gin.TRAIN_STEPS=10
show="$work/dp.log" check "2x1 data parallelism draws one process's masks" same_losses "$work/dp" "$work/one"
run tp 2 --gin.TRAIN_STEPS=10 --gin.partitioning.PjitPartitioner.num_partitions=2
show="$work/tp.log" check "1x2 tensor parallelism draws one process's masks" same_losses "$work/tp" "$work/one"
run zero 4 --gin.TRAIN_STEPS=10 --gin.partitioning.PjitPartitioner.num_partitions=2 \
  --gin.partitioning.standard_logical_axis_rules.parameter_partitioning_dims=2 \
  --gin.partitioning.standard_logical_axis_rules.activation_partitioning_dims=2
show="$work/zero.log" check "2x2 ZeRO-3 with 2-D activation partitioning draws one process's masks" \
  same_losses "$work/zero" "$work/one"
run micro 1 --gin.TRAIN_STEPS=10 --gin.trainer.Trainer.num_microbatches=2
show="$work/micro.log" check "2 microbatches draw one batch's masks" same_losses "$work/micro" "$work/one"

# Elastic: 2x1 to step 4, 4x1 to step 7, 1x1 to step 10 (checkpoints at
# each stop: every 100 steps and at the end).
run elastic 2 --gin.TRAIN_STEPS=4
run elastic 4 --gin.TRAIN_STEPS=7
run elastic 1 --gin.TRAIN_STEPS=10
show="$work/elastic.log" check "the elastic run resumed at steps 4 and 7" \
  bash -c 'grep -q "^\[restore\].*step 4" "$0" && grep -q "^\[restore\].*step 7" "$0"' "$work/elastic.log"
show="$work/elastic.log" check "an elastic 2 -> 4 -> 1 resume continues one process's run" \
  same_losses "$work/elastic" "$work/one"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
