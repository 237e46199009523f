#!/usr/bin/env bash
# `t5xx train` with tensor (model) parallelism and ZeRO-3 across processes
# started by `t5xx launch`, checked against the same run on fewer processes:
#  - 1x2 (num_partitions = 2: heads, MLP units and vocabulary split over 2
#    processes that read the same data) logs one process's losses, and its
#    variable table shows the halved bytes;
#  - 2x1 ZeRO-3 (parameter_partitioning_dims = 2) logs plain 2x1 data
#    parallelism's losses (both read the same per-process shards);
#  - a checkpoint written by the 1x2 run resumes on one process and trains
#    on as the one-process run does; one written by one process resumes on
#    1x2;
#  - a 'model' axis that does not divide the processes, or a sharded
#    dimension that does not divide, is refused with the fix named.
# Losses are compared as numbers within 1e-3 relative (they are logged to 5
# significant digits; the runs sum in different orders).
# Usage: model_parallel_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

demo_corpus_or_exit
args=(--gin_file=configs/examples/t5_1_1_tiny_demo.gin --data_dir="$work/data"
      --gin.BATCH_SIZE=4 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=2 --gin.train.stats_period=1
      --gin.utils.SaveCheckpointConfig.period=3)
launch() { local n="$1"; shift; timeout 300 "$T5XX" launch --nproc_per_node="$n" -- "$T5XX" train "${args[@]}" "$@"; }
# "step loss" pairs, one per step (every rank logs the same global loss).
losses() { grep -E '^\[train\] step [0-9]+ of' "$1" | sed -E 's/^\[train\] step ([0-9]+) of [0-9]+ \| loss ([^ ]+) .*/\1 \2/' | awk '!seen[$1]++' | sort -k1,1; }
# Every step FILE_A logs from FIRST_STEP on is in FILE_B with a loss within
# 1e-3 relative.
same_losses() {  # FILE_A FILE_B [FIRST_STEP]
  join <(losses "$1") <(losses "$2") | awk -v f="${3:-1}" -v want="$(losses "$1" | awk -v f="${3:-1}" '$1 >= f' | wc -l)" '
    $1 >= f { d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3 * ($3 < 0 ? -$3 : $3)) bad = 1; n++ }
    END { exit (bad || n == 0 || n != want) }'
}

timeout 300 "$T5XX" train "${args[@]}" --gin.TRAIN_STEPS=8 --gin.MODEL_DIR="$work/one" >"$work/one.log" 2>&1
check "one process trains" test -d "$work/one/checkpoint_8"

launch 2 --gin.TRAIN_STEPS=6 --gin.MODEL_DIR="$work/mp" \
  --gin.partitioning.PjitPartitioner.num_partitions=2 >"$work/mp.log" 2>&1
rc=$?
show="$work/mp.log" check "1x2 trains and exits 0" test "$rc" = 0
show="$work/mp.log" check "1x2 logs its mesh" grep -q "mesh (data=1, model=2)" "$work/mp.log"
show="$work/mp.log" check "1x2 logs one process's losses" same_losses "$work/mp.log" "$work/one.log"
# The query kernel (128, 128) is split on its output dim: 64 KiB -> 32 KiB.
show="$work/mp.log" check "the variable table shows the query kernel's halved bytes" \
  grep -qE "^target/encoder.layers_0.attention.query.kernel +\(128, 128\) +\('embed', 'joined_kv'\) +\(None, 'model'\) +32768$" "$work/mp.log"
show="$work/mp.log" check "the table's total is about half (parameters and optimizer state)" \
  bash -c 'grep -E "^Total " "$0" | head -1 | awk "{ if (\$2 / \$4 > 0.49 && \$2 / \$4 < 0.52) ok = 1 } END { exit !ok }"' "$work/mp.log"

# Start-up names the layout's least communication per step, and the train
# lines what was sent: within 10% of it (Adafactor's few statistics, the
# metrics and the vocabulary-parallel loss add a little).
show="$work/mp.log" check "1x2 sends within 10% of the least communication per step" \
  bash -c 'least=$(grep -m1 "^\[setup\] communication per step, at least:" "$0" | sed -E "s/.*at least: ([0-9.e+-]+) MB.*/\1/");
           sent=$(grep -m1 -E "^\[train\] step 3 of" "$0" | sed -E "s/.*\| sent ([0-9.e+-]+) MB\/step.*/\1/");
           awk -v l="$least" -v s="$sent" "BEGIN { exit !(l > 0 && s >= l && s <= 1.1 * l) }"' "$work/mp.log"

# The 1x2 run's checkpoint_6 resumes on one process (each process reads the
# boxes it needs) and continues as the one-process run.
timeout 300 "$T5XX" train "${args[@]}" --gin.TRAIN_STEPS=8 --gin.MODEL_DIR="$work/mp" >"$work/resume1.log" 2>&1
show="$work/resume1.log" check "1x2's checkpoint resumes on one process" grep -q "^\[restore\].*step 6" "$work/resume1.log"
show="$work/resume1.log" check "and steps 7-8 give one process's losses" same_losses "$work/resume1.log" "$work/one.log" 7

# One process's checkpoint_3 resumes on 1x2.
mkdir -p "$work/from1" && cp -r "$work/one/checkpoint_3" "$work/one/config.gin" "$work/from1/" 2>/dev/null
launch 2 --gin.TRAIN_STEPS=5 --gin.MODEL_DIR="$work/from1" \
  --gin.partitioning.PjitPartitioner.num_partitions=2 >"$work/from1.log" 2>&1
show="$work/from1.log" check "a one-process checkpoint resumes on 1x2" grep -q "^\[restore\].*step 3" "$work/from1.log"
show="$work/from1.log" check "and steps 4-5 give one process's losses" same_losses "$work/from1.log" "$work/one.log" 4

# ZeRO-3 against plain data parallelism, both 2x1.
launch 2 --gin.TRAIN_STEPS=4 --gin.MODEL_DIR="$work/dp" >"$work/dp.log" 2>&1
launch 2 --gin.TRAIN_STEPS=4 --gin.MODEL_DIR="$work/zero" \
  --gin.partitioning.standard_logical_axis_rules.parameter_partitioning_dims=2 >"$work/zero.log" 2>&1
show="$work/zero.log" check "ZeRO-3 shards 'embed' over 'data'" \
  grep -qE "^target/encoder.layers_0.mlp.wi_0.kernel +\(128, 256\) +\('embed', 'mlp'\) +\('data', 'model'\) +65536$" "$work/zero.log"
show="$work/zero.log $work/dp.log" check "ZeRO-3 2x1 logs data parallelism's losses" same_losses "$work/zero.log" "$work/dp.log"

# Refusals.
launch 2 --gin.TRAIN_STEPS=2 --gin.MODEL_DIR="$work/bad3" \
  --gin.partitioning.PjitPartitioner.num_partitions=3 >"$work/bad3.log" 2>&1
show="$work/bad3.log" check "num_partitions = 3 over 2 processes is refused" \
  grep -q "num_partitions = 3 does not divide the 2" "$work/bad3.log"
launch 2 --gin.TRAIN_STEPS=2 --gin.MODEL_DIR="$work/badheads" --gin.network.T5Config.num_heads=3 \
  --gin.partitioning.PjitPartitioner.num_partitions=2 >"$work/badheads.log" 2>&1
show="$work/badheads.log" check "3 heads over a 'model' axis of 2 are refused, naming the parameter" \
  grep -q "parameter encoder.relpos_bias.rel_embedding: dimension 0 ('heads') of size 3 (set by the network config's num_heads) does not divide by the 'model' mesh axis of size 2" "$work/badheads.log"

# A restart on a mesh the checkpoint's shapes do not fit (3 'model' shards
# of 4 heads): every rank that reports it names itself, its host, the
# parameter and the binding; exit 2; MODEL_DIR untouched.
before="$(cd "$work/one" && find . -type f | sort | xargs md5sum)"
launch 3 --gin.TRAIN_STEPS=10 --gin.MODEL_DIR="$work/one" \
  --gin.partitioning.PjitPartitioner.num_partitions=3 >"$work/bad_resume.log" 2>&1
rc=$?
show="$work/bad_resume.log" check "a resume onto a mesh that does not fit: exit 2, rank, host, parameter, binding named" \
  bash -c '[ "$0" = 2 ] && grep -q "^t5xx: error: rank [012] of 3 on host [^:]*: .* errors in the partitioning of the model.s parameters over the mesh (data=1, model=3)" "$1" &&
           grep -q "^  parameter encoder.relpos_bias.rel_embedding: dimension 0 (.heads.) of size 4 (set by the network config.s num_heads) does not divide by the .model. mesh axis of size 3; choose a size that divides, another num_partitions" "$1"' \
  "$rc" "$work/bad_resume.log"
check "and MODEL_DIR is untouched" test "$before" = "$(cd "$work/one" && find . -type f | sort | xargs md5sum)"

# Rank 0 (which also serves the rendezvous store) killed mid-run under a
# plain torchrun-style start: rank 1 ends with an error naming rank 0.
p="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p timeout 300 "$T5XX" train "${args[@]}" \
    --gin.TRAIN_STEPS=100000 --gin.utils.SaveCheckpointConfig.period=None \
    --gin.partitioning.PjitPartitioner.num_partitions=2 \
    --gin.MODEL_DIR="$work/dead" >"$work/dead$r.log" 2>&1 &
done
pid0=$(jobs -p | tail -2 | head -1)
for ((i = 0; i < 600; i++)); do grep -q '^\[train\] step 2 ' "$work/dead0.log" 2>/dev/null && break; sleep 0.1; done
pkill -9 -P "$pid0" 2>/dev/null; kill -9 "$pid0" 2>/dev/null
wait 2>/dev/null
show="$work/dead1.log" check "a dead rank 0 ends rank 1 with rank 0 named" \
  grep -q "rank 0 of the run stopped" "$work/dead1.log"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
