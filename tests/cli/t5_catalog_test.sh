#!/usr/bin/env bash
# Issue 51: t5's task catalog through the binary, with t5x's own gin files
# unmodified, over the TFDS fixtures (tests/testdata/tfds/) and the catalog
# oracle's vocabulary (tests/testdata/t5_catalog/) copied where t5's gs://
# paths point (<data_dir>/t5-data/vocabs/...):
#  1. `t5xx data show --module_import=t5.data.mixtures` prints what seqio +
#     t5 give (catalog_oracle.json, made by make_t5_catalog_oracle.py);
#  2. `t5xx cache_tasks` caches every catalog task from TFDS, and a cached
#     task reads the examples its TFDS source gives;
#  3. `t5xx config` accepts t5x's example gins that name catalog tasks
#     (t5x/examples/{t5/t5_1_1,decoder_only,scalable_t5/t5_1_1}/examples/),
#     binding only MODEL_DIR, 2 processes where a gin asks for
#     num_partitions = 2 (adamw and lion with optax's schedules included);
#     the finetune gins, offline, name their gs:// checkpoint and its copy;
#  4. test_train_t5_tiny.gin trains its 3 steps on 2 processes, and
#     test_train_eval_t5_tiny.gin (total_steps = 0) only evaluates;
#  5. glue_v002_proportional finetunes from that checkpoint with inference
#     evaluation (runs/finetune.gin, steps 5 and 7), then `t5xx eval`
#     (runs/eval.gin) scores checkpoint_7 alike; with t5's venv, t5's own
#     metric functions give the same metrics on t5xx's predictions.
# scripts/try_t5x_example_gins.sh trains every example gin 2 steps (base
# models: minutes, so not here).
# Needs a t5x checkout ($T5X_DIR, ../shared/t5x, ~/.cache/t5xx/t5x), else
# SKIP (77). The venv part needs ${T5XX_T5X_VENV:-~/.cache/t5xx/t5x-venv} and
# t5's source ($T5_DIR, else ../shared/t5); without them it is skipped alone.
# Usage: t5_catalog_test.sh T5XX
set -u
T5XX="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/t5x_checkout.sh"  # sets $t5x, or SKIP (77)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$here/cli_lib.sh"
cd "$t5x"
tfds="$root/tests/testdata/tfds/data"
vocabs="$work/data/t5-data/vocabs"
mkdir -p "$vocabs/cc_all.32000" "$vocabs/cc_all.32000.100extra"
cp "$root/tests/testdata/t5_catalog/vocab.model" "$vocabs/cc_all.32000/sentencepiece.model"
cp "$root/tests/testdata/t5_catalog/vocab_100extra.model" \
   "$vocabs/cc_all.32000.100extra/sentencepiece.model"
flags=(--tfds_data_dir="$tfds" --data_dir="$work/data")

# 1. data show equals seqio + t5 (the oracle's preprocessed examples).
for task in glue_cola_v002 super_glue_record_v102 squad_v010_allanswers wmt_t2t_ende_v003; do
  show="$work/show.$task.err" check "data show $task" bash -c '
    "$1" data show --module_import=t5.data.mixtures --task="$2" --split=validation --n=100 \
      --lengths=inputs=256,targets=128 "${@:5}" >"$3.out" 2>"$3.err" &&
    python3 - "$3.out" "$2" "$4" <<"EOF"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = json.load(open(sys.argv[3]))["tasks"][sys.argv[2]]["splits"]["validation"]["preprocessed"]
assert len(got) == len(want), (len(got), len(want))
for g, w in zip(got, want):
  for k, v in w.items():
    assert g[k] == v["value"], (k, g[k], v["value"])
EOF' _ "$T5XX" "$task" "$work/show.$task" "$root/tests/testdata/t5_catalog/catalog_oracle.json" \
    "${flags[@]}"
done

# 2. Caches of every catalog task (t5x's gins read them with
# USE_CACHED_TASKS); a cached task reads the same examples (in the cache's
# order, as seqio's), TFDS's idx, labels and answers included.
show="$work/cache.log" check "cache_tasks of the 60 catalog tasks from TFDS" \
  bash -c '"$@" >'"$work/cache.log"' 2>&1 && test "$(ls '"$work/cache"' | wc -l)" = 60' _ \
  "$T5XX" cache_tasks --module_import=t5.data.mixtures --min_shards=1 --tasks='.*' \
  --output_cache_dir="$work/cache" "${flags[@]}"
for task in squad_v010_allanswers super_glue_record_v102 super_glue_multirc_v102 glue_stsb_v002; do
  show="$work/cached.err" check "cached $task reads the examples read from TFDS" bash -c '
    a="$("${@:2}" 2>"$1" | sort)" && b="$("${@:2}" --use_cached=true --cache_dir="$0" 2>>"$1" | sort)" &&
    test -n "$a" && test "$a" = "$b"' "$work/cache" "$work/cached.err" \
    "$T5XX" data show --module_import=t5.data.mixtures --task="$task" --split=validation --n=500 \
    "${flags[@]}"
done
flags+=(--seqio_additional_cache_dirs="$work/cache")

# 3. t5x's example gins, unmodified. A finetune gin restores its gs://
# checkpoint from its copy under --data_dir: the tiny model of step 4 stands
# in for it only in step 5, so here they are checked to name the copy.
ex=t5x/examples/t5/t5_1_1/examples
one=("$ex/base_c4_pretrain.gin" "$ex/small_c4_pretrain.gin" "$ex/base_wmt14enfr_train.gin")
two=("$ex/base_wmt19_ende_train.gin" "$ex/base_wmt_from_scratch.gin" "$ex/test_train_t5_tiny.gin"
     "$ex/base_wmt_from_scratch_adamw.gin" "$ex/base_wmt_from_scratch_lion.gin"
     t5x/examples/decoder_only/examples/base_wmt_from_scratch.gin)
for g in "${one[@]}"; do
  show="$work/config.err" check "config $g" bash -c '"$@" >/dev/null 2>'"$work/config.err" _ \
    "$T5XX" config --gin_file="$g" --gin.MODEL_DIR="'$work/m'" "${flags[@]}"
done
for g in "${two[@]}"; do
  show="$work/config.err" check "config $g (2 processes)" bash -c '"$@" >/dev/null 2>'"$work/config.err" _ \
    "$T5XX" launch --nproc_per_node=2 -- "$T5XX" config --gin_file="$g" \
    --gin.MODEL_DIR="'$work/m'" "${flags[@]}"
done
# scalable_t5's scanned layers are saved on one process only (docs/checkpoints.md).
show="$work/config.err" check "config scalable_t5 wmt19_ende_from_scratch.gin (1 process)" \
  bash -c '"$@" >/dev/null 2>'"$work/config.err" _ \
  "$T5XX" config --gin_file=t5x/examples/scalable_t5/t5_1_1/examples/wmt19_ende_from_scratch.gin \
  --gin.MODEL_DIR="'$work/m'" --gin_bindings='partitioning.PjitPartitioner.num_partitions = 1' \
  --gin_bindings='partitioning.PjitPartitioner.model_parallel_submesh = None' \
  "${flags[@]}"
# (Offline here: a host that never resolves stands for Cloud Storage.)
for g in "$ex/base_wmt_finetune.gin" "$ex/small_wmt_finetune.gin"; do
  expect_error "config $g names the checkpoint, the store and its copy" \
    "cannot reach t5xx-offline.invalid: Couldn't resolve host name (no network, or a wrong endpoint: AWS_ENDPOINT_URL, STORAGE_EMULATOR_HOST); nor is there a copy of gs://t5-data/pretrained_models/t5x/" -- \
    env STORAGE_EMULATOR_HOST=http://t5xx-offline.invalid \
    "$T5XX" config --gin_file="$g" --gin.MODEL_DIR="'$work/m'" "${flags[@]}"
done

# 4. t5x's tiny test gin: 3 steps on 2 processes (num_partitions = 2).
show="$work/tiny.log" check "train test_train_t5_tiny.gin" bash -c '"$@" >'"$work/tiny.log"' 2>&1' _ \
  "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train --gin_file="$ex/test_train_t5_tiny.gin" \
  --gin.MODEL_DIR="'$work/tiny'" "${flags[@]}"
check "tiny: checkpoint_3" test -f "$work/tiny/checkpoint_3/checkpoint"
# test_train_eval_t5_tiny.gin: total_steps = 0 and eval_period = 0, as t5x
# reads them: the evaluation before training, no step, checkpoint_0.
show="$work/tiny_eval.log" check "train test_train_eval_t5_tiny.gin (evaluation only)" \
  bash -c '"$@" >"$0" 2>&1' "$work/tiny_eval.log" \
  "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train --gin_file="$ex/test_train_eval_t5_tiny.gin" \
  --gin.MODEL_DIR="'$work/tiny_eval'" "${flags[@]}"
show="$work/tiny_eval.log" check "test_train_eval_t5_tiny: evaluated at step 0, trained no step, saved checkpoint_0" \
  bash -c 'grep -q "^\[eval wmt19_ende_v003\] step 0 " "$0" && ! grep -q "^\[train\] step" "$0" && test -f "$1"' \
  "$work/tiny_eval.log" "$work/tiny_eval/checkpoint_0/checkpoint"

# 5. Finetune glue_v002_proportional (inference evaluation at steps 5 and
# 7), then evaluate checkpoint_5 with runs/eval.gin.
glue=(--gin_file=t5x/examples/t5/t5_1_1/tiny.gin
      --gin.MIXTURE_OR_TASK_NAME="'glue_v002_proportional'"
      --gin.MIXTURE_OR_TASK_MODULE="'t5.data.mixtures'"
      "--gin.TASK_FEATURE_LENGTHS={'inputs': 64, 'targets': 8}")
show="$work/glue.log" check "finetune glue_v002_proportional" bash -c '"$@" >'"$work/glue.log"' 2>&1' _ \
  "$T5XX" train "${glue[@]}" --gin_file=t5x/configs/runs/finetune.gin --gin.TRAIN_STEPS=7 \
  --gin.EVAL_PERIOD=2 --gin.BATCH_SIZE=8 --gin.USE_CACHED_TASKS=False \
  --gin.INITIAL_CHECKPOINT_PATH="'$work/tiny/checkpoint_3'" --gin.MODEL_DIR="'$work/glue'" \
  "${flags[@]}"
show="$work/eval.log" check "eval glue_v002_proportional" bash -c '"$@" >'"$work/eval.log"' 2>&1' _ \
  "$T5XX" eval "${glue[@]}" --gin_file=t5x/configs/runs/eval.gin --gin.DROPOUT_RATE=0.0 \
  --gin_bindings="utils.DatasetConfig.split = 'validation'" \
  --gin.CHECKPOINT_PATH="'$work/glue/checkpoint_7'" --gin.EVAL_OUTPUT_DIR="'$work/eval'" \
  "${flags[@]}"
n=0
for f in "$work"/glue/inference_eval/glue_*_v002-metrics.jsonl; do
  task="$(basename "$f" -metrics.jsonl)"
  n=$((n + 1))
  # The eval of checkpoint_7 reports what training's evaluation at step 7 did.
  check "eval = train's inference evaluation at step 7: $task" python3 - "$f" \
    "$work/eval/inference_eval/$task-metrics.jsonl" <<'EOF'
import json, sys
train = [json.loads(l) for l in open(sys.argv[1])]
ev = [json.loads(l) for l in open(sys.argv[2])]
a = [m for m in train if m["step"] == 7][0]
b = ev[-1]
same = lambda x, y: (x != x and y != y) or x == y  # NaN (a constant prediction) too
assert set(a) == set(b) and all(same(a[k], b[k]) for k in a if k != "step"), (a, b)
EOF
done
check "inference evaluation of the 9 GLUE tasks with metrics" test "$n" = 9

# With t5's venv: t5's own postprocess_fn and metric_fns on t5xx's outputs.
venv="${T5XX_T5X_VENV:-$HOME/.cache/t5xx/t5x-venv}"
t5src="${T5_DIR:-$root/../shared/t5}"
if [ -x "$venv/bin/python3" ] && [ -f "$t5src/t5/data/tasks.py" ]; then
  show="$work/t5_metrics.log" check "t5's metrics on t5xx's predictions" bash -c \
    'PYTHONPATH="$1" "$2" "$3" "$4" "$5" "$6" >"$7" 2>&1' _ "$t5src" "$venv/bin/python3" \
    "$here/t5_catalog_metrics.py" "$work/glue/inference_eval" "$tfds" "$work/data" \
    "$work/t5_metrics.log"
else
  echo "note: t5's venv or source missing ($venv, $t5src): t5's metrics not recomputed"
fi

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
