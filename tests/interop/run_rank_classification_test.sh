#!/usr/bin/env bash
# Score-based evaluation against seqio's Evaluator: `t5xx eval` of the
# multiple-choice tasks of rank_classification_tasks.gin (COPA with 2
# choices, its length-normalized variant, CB with 3; t5's
# rank_classification_formatter, postprocessor and metric) with a T5.1.1
# tiny checkpoint, then rank_classification_oracle.py defines the same tasks
# in seqio with t5's own functions and runs seqio.Evaluator with t5xx's
# scores: the examples, the postprocessed targets and every metric must be
# equal. Also: `t5xx train`'s inference evaluation runs the score metrics,
# and a score metric inside another metric is refused by name.
# Usage: run_rank_classification_test.sh T5XX WORK_DIR. Skips (77) without
# the t5x venv (seqio, TFDS, sklearn) or t5's source ($T5_DIR, else
# ../shared/t5 beside this checkout).
. "$(dirname "$0")/t5x_train_lib.sh"
t5="${T5_DIR:-$(cd "$here/../../.." && pwd)/shared/t5}"
[ -f "$t5/t5/evaluation/metrics.py" ] || { echo "SKIP: t5's source is not under $t5 (set T5_DIR)"; exit 77; }
root="$(cd "$here/../.." && pwd)"
tfds="$root/tests/testdata/tfds/data"
model=(--gin_file=models/t5_1_1/tiny.gin --gin.network.T5Config.vocab_size=1152
       --gin.seqio.SentencePieceVocabulary.extra_ids=100
       "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'")
flags=(--data_dir="$work/data" --tfds_data_dir="$tfds" --gin_file="$here/rank_classification_tasks.gin")
# A checkpoint: 2 steps of the demo's span corruption from scratch.
"$T5XX" train "${model[@]}" --gin_file=runs/pretrain.gin --data_dir="$work/data" \
  --gin.MODEL_DIR="'$work/run'" --gin.MIXTURE_OR_TASK_NAME="'c4_demo_span_corruption'" \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.TRAIN_STEPS=2 --gin.BATCH_SIZE=4 \
  --gin.USE_CACHED_TASKS=False --gin.DROPOUT_RATE=0.0 --gin.RANDOM_SEED=3 >"$work/train.log" 2>&1
show="$work/train.log" check "t5xx train (the checkpoint) exits 0" test $? = 0
ev="$work/eval"
"$T5XX" eval "${model[@]}" --gin_file=runs/eval.gin "${flags[@]}" \
  --gin.CHECKPOINT_PATH="'$work/run/checkpoint_2'" --gin.EVAL_OUTPUT_DIR="'$ev'" \
  --gin.MIXTURE_OR_TASK_NAME="'rank_choices'" "--gin.utils.DatasetConfig.split='train'" \
  --gin.utils.DatasetConfig.batch_size=8 >"$work/eval.log" 2>&1
show="$work/eval.log" check "t5xx eval of the rank_choices mixture exits 0" test $? = 0
show="$work/eval.log" check "the console names the score metrics" \
  grep -q "^\[eval rank_copa\] step 2 | accuracy .* | auc-pr .* | auc-roc .* | f1 .* | 20 examples scored in" "$work/eval.log"
PYTHONPATH="$t5" "$venv/bin/python3" "$here/rank_classification_oracle.py" "$ev/inference_eval" 2 \
  "$tfds" "$work/data/c4_demo/sentencepiece.model" train >"$work/oracle.log" 2>"$work/oracle.err"
show="$work/oracle.log $work/oracle.err" \
  check "seqio's Evaluator on t5xx's scores gives t5xx's metrics, examples and targets (3 tasks)" \
  test "$(grep -c '^ok ' "$work/oracle.log")" = 3
# train's inference evaluation runs score metric_fns too.
"$T5XX" train "${model[@]}" --gin_file=runs/pretrain.gin "${flags[@]}" --gin_file="$here/rank_infer_eval.gin" \
  "--gin.infer_eval/utils.DatasetConfig.mixture_or_task_name='rank_cb'" \
  --gin.MODEL_DIR="'$work/run'" --gin.MIXTURE_OR_TASK_NAME="'c4_demo_span_corruption'" \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.TRAIN_STEPS=3 --gin.BATCH_SIZE=4 \
  --gin.USE_CACHED_TASKS=False --gin.DROPOUT_RATE=0.0 --gin.RANDOM_SEED=3 --gin.EVAL_PERIOD=1 \
  >"$work/train_ie.log" 2>&1
show="$work/train_ie.log" check "train's inference evaluation scores rank_cb" \
  grep -q "^\[infer_eval rank_cb\] step 3 | accuracy .* | mean_3class_f1 .* | 30 examples scored" "$work/train_ie.log"
# A score metric wrapped in a predict metric: refused at its binding.
cat >"$work/bad.gin" <<GIN
include '$here/rank_classification_tasks.gin'
cb/seqio.Task.metric_fns = [@t5.evaluation.metrics.mean_group_metric()]
t5.evaluation.metrics.mean_group_metric.metric_fn = @t5.evaluation.metrics.rank_classification
GIN
expect_error score_metric_nested "takes (targets, scores); use it directly in seqio.Task.metric_fns" -- \
  "$T5XX" data show --data_dir="$work/data" --tfds_data_dir="$tfds" --gin_file="$work/bad.gin" --task=rank_cb \
  "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin.seqio.SentencePieceVocabulary.extra_ids=100
cat "$work/oracle.log"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
