#!/usr/bin/env bash
# Runs every one of t5x's example gins that names a catalog task, unmodified
# but for the batch, the steps and the output paths, on the TFDS fixtures
# (tests/testdata/tfds) with the fixture vocabularies as gs://t5-data's
# copies: the training gins train 2 steps (from scratch, or finetuned from a
# checkpoint the from-scratch runs made, placed where the gin's gs:// path
# is copied), the eval and infer gins run on one. A check, not a CI test:
# base-size models take minutes on 2 cores. Prints one line per gin with
# its status and seconds.
# Usage: scripts/try_t5x_example_gins.sh [T5XX] (default build/bin/t5xx)
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
T5XX="$(realpath "${1:-$root/build/bin/t5xx}")"
. "$root/tests/cli/t5x_checkout.sh"  # sets $t5x
work="${T5XX_TRY_DIR:-$(mktemp -d)}"
mkdir -p "$work"
cd "$t5x"
vocabs="$work/data/t5-data/vocabs"
mkdir -p "$vocabs/cc_all.32000" "$vocabs/cc_all.32000.100extra"
cp "$root/tests/testdata/t5_catalog/vocab.model" "$vocabs/cc_all.32000/sentencepiece.model"
cp "$root/tests/testdata/t5_catalog/vocab_100extra.model" "$vocabs/cc_all.32000.100extra/sentencepiece.model"
data=(--tfds_data_dir="$root/tests/testdata/tfds/data" --data_dir="$work/data")
flags=("${data[@]}" --gin.BATCH_SIZE=4 --gin.USE_CACHED_TASKS=False)
# Gins that bind the batch size itself (not through %BATCH_SIZE), and short
# WMT lengths: 2 steps of a base model in seconds, not minutes.
small=(--gin_bindings='train/utils.DatasetConfig.batch_size = 4'
       --gin_bindings='train_eval/utils.DatasetConfig.batch_size = 4'
       "--gin.TASK_FEATURE_LENGTHS={'inputs': 64, 'targets': 64}")
warmup=(--gin_bindings='optax.warmup_cosine_decay_schedule.warmup_steps = 1')
ex=t5x/examples/t5/t5_1_1/examples
one_proc=(--gin_bindings='partitioning.PjitPartitioner.num_partitions = 1'
          --gin_bindings='partitioning.PjitPartitioner.model_parallel_submesh = None')
failures=0
run() {  # NAME COMMAND...: one line with the status and seconds
  local name="$1" start=$SECONDS; shift
  if "$@" >"$work/$name.log" 2>&1; then echo "PASS $name ($((SECONDS - start)) s)"
  else echo "FAIL $name ($((SECONDS - start)) s): $(grep -m1 'error' "$work/$name.log")"; failures=$((failures + 1)); fi
}
train() {  # NAME GIN STEPS [flags...]
  local name="$1" gin="$2" steps="$3"; shift 3
  run "$name" "$T5XX" train --gin_file="$gin" --gin.TRAIN_STEPS="$steps" --gin.MODEL_DIR="'$work/$name'" \
    "${flags[@]}" "$@"
}
train small_c4_pretrain "$ex/small_c4_pretrain.gin" 2 "${one_proc[@]}"
train base_c4_pretrain "$ex/base_c4_pretrain.gin" 2 "${one_proc[@]}"
train base_wmt14enfr_train "$ex/base_wmt14enfr_train.gin" 2 "${one_proc[@]}"
train base_wmt19_ende_train "$ex/base_wmt19_ende_train.gin" 2 "${one_proc[@]}" "${small[@]}"
train base_wmt_from_scratch "$ex/base_wmt_from_scratch.gin" 2 "${one_proc[@]}" "${small[@]}"
train base_wmt_from_scratch_adamw "$ex/base_wmt_from_scratch_adamw.gin" 2 "${one_proc[@]}" "${small[@]}" "${warmup[@]}"
train base_wmt_from_scratch_lion "$ex/base_wmt_from_scratch_lion.gin" 2 "${one_proc[@]}" "${small[@]}" "${warmup[@]}"
train decoder_only_base_wmt_from_scratch t5x/examples/decoder_only/examples/base_wmt_from_scratch.gin 2 \
  "${one_proc[@]}" "${small[@]}"
train scalable_t5_wmt19_ende_from_scratch t5x/examples/scalable_t5/t5_1_1/examples/wmt19_ende_from_scratch.gin 2 \
  "${one_proc[@]}" "${small[@]}"
run test_train_t5_tiny "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train --gin_file="$ex/test_train_t5_tiny.gin" \
  --gin.MODEL_DIR="'$work/test_train_t5_tiny'" "${flags[@]}"
run test_train_eval_t5_tiny "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train \
  --gin_file="$ex/test_train_eval_t5_tiny.gin" --gin.MODEL_DIR="'$work/test_train_eval_t5_tiny'" "${flags[@]}"
# The pretrained checkpoints the finetune gins restore, as copies of gs://.
pre="$work/data/t5-data/pretrained_models/t5x"
mkdir -p "$pre/t5_1_1_base" "$pre/t5_1_1_small"
cp -r "$work/base_wmt_from_scratch/checkpoint_2" "$pre/t5_1_1_base/checkpoint_1000000"
cp -r "$work/small_c4_pretrain/checkpoint_2" "$pre/t5_1_1_small/checkpoint_1000000"
short=("--gin.TASK_FEATURE_LENGTHS={'inputs': 64, 'targets': 64}")
train base_wmt_finetune "$ex/base_wmt_finetune.gin" 4 "${one_proc[@]}" "${short[@]}"
train base_wmt14enfr_finetune "$ex/base_wmt14enfr_finetune.gin" 4 "${one_proc[@]}" "${short[@]}"
train small_wmt_finetune "$ex/small_wmt_finetune.gin" 4 "${one_proc[@]}" "${short[@]}"
ckpt="$work/base_wmt_from_scratch/checkpoint_2"
# base_wmt_eval.gin binds no evaluate.partitioner, which t5x's eval.py
# requires (a keyword-only argument without default): t5x refuses it as
# t5xx does (README's command line fails there too), so it is given here.
run base_wmt_eval "$T5XX" eval --gin_file="$ex/base_wmt_eval.gin" --gin.CHECKPOINT_PATH="'$ckpt'" \
  --gin.EVAL_OUTPUT_DIR="'$work/base_wmt_eval'" "${data[@]}" "${one_proc[@]}" \
  --gin_bindings='__main__.evaluate.partitioner = @partitioning.PjitPartitioner()'

run base_wmt14enfr_eval "$T5XX" eval --gin_file="$ex/base_wmt14enfr_eval.gin" \
  --gin.INITIAL_CHECKPOINT_PATH="'$ckpt'" --gin.EVAL_OUTPUT_DIR="'$work/base_wmt14enfr_eval'" \
  --gin.MIXTURE_OR_TASK_NAME="'wmt14_enfr_v003'" "${data[@]}" "${one_proc[@]}"
run base_wmt_infer "$T5XX" infer --gin_file="$ex/base_wmt_infer.gin" --gin.CHECKPOINT_PATH="'$ckpt'" \
  --gin.INFER_OUTPUT_DIR="'$work/base_wmt_infer'" "${data[@]}" "${one_proc[@]}"
echo "$failures failed (logs in $work)"
[ "$failures" = 0 ]
