#!/usr/bin/env bash
# train.actions = {'INFER_EVAL': [@trainer.EarlyStoppingAction()]} against
# t5x's own EarlyStoppingAction: `t5xx train` (T5.1.1 tiny from scratch on
# the demo translation task, inference evaluation every 2 steps) stops
# after the evaluation at which t5x's action, fed the run's inference
# metrics in order (early_stopping_oracle.py), asks to stop, and its last
# checkpoint is that step's -- once on BLEU (constant for this tiny model),
# once on rank_copa's AUC-PR, a score metric that moves at every
# evaluation. Usage: run_early_stopping_test.sh T5XX WORK_DIR
# Skips (77) without t5x's venv or the demo translation data.
. "$(dirname "$0")/t5x_train_lib.sh"
compgen -G "$work/data/freedict_en_de/*validation*" >/dev/null ||
  { echo "SKIP: the demo translation data was not built (dict-freedict-eng-deu missing?)"; exit 77; }
task=freedict_en_de_translate
run="$work/run"
"$T5XX" train --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/finetune.gin --data_dir="$work/data" \
  --gin.network.T5Config.vocab_size=1152 --gin.seqio.SentencePieceVocabulary.extra_ids=100 \
  "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin.MODEL_DIR="'$run'" --gin.MIXTURE_OR_TASK_NAME="'$task'" \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 24, 'targets': 12}" --gin.TRAIN_STEPS=40 --gin.BATCH_SIZE=8 \
  --gin.EVAL_PERIOD=2 --gin.EVAL_STEPS=1 --gin.USE_CACHED_TASKS=False --gin.INITIAL_CHECKPOINT_PATH=None \
  --gin.utils.CheckpointConfig.restore=None --gin.utils.SaveCheckpointConfig.period=2 \
  --gin.EVALUATOR_NUM_EXAMPLES=16 --gin.RANDOM_SEED=1 --gin.DROPOUT_RATE=0.0 \
  --gin.utils.create_learning_rate_scheduler.base_learning_rate=0.5 \
  --gin.train.concurrent_metrics=False "--gin.train.actions={'INFER_EVAL': [@trainer.EarlyStoppingAction()]}" \
  "--gin.trainer.EarlyStoppingAction.metric=('$task', 'bleu')" \
  "--gin.trainer.EarlyStoppingAction.mode='max'" --gin.trainer.EarlyStoppingAction.patience=3 \
  >"$work/train.log" 2>&1
check "t5xx train with an INFER_EVAL action exits 0" test $? = 0
"$venv/bin/python3" "$here/early_stopping_oracle.py" "$run/inference_eval/$task-metrics.jsonl" \
  "$task" bleu max 3 >"$work/oracle.log" 2>"$work/oracle.err"
rc=$?
[ "$rc" = 77 ] && { cat "$work/oracle.log"; exit 77; }
t5x=$(sed -n 's/^stop //p' "$work/oracle.log")
last=$(ls "$run" | sed -n 's/^checkpoint_\([0-9]*\)$/\1/p' | sort -n | tail -1)
show="$work/oracle.log $work/oracle.err $work/train.log" \
  check "t5x's EarlyStoppingAction stops at step [$t5x]; t5xx stopped after step [$last]" \
  test "$rc" = 0 -a -n "$t5x" -a "$t5x" != none -a "$t5x" = "$last"
show="$work/train.log" check "the stop is said, naming the action and the metric's history" \
  grep -q "^\[action\] trainer.EarlyStoppingAction: bleu of task '$task' has not improved for 3 evaluations .* at step $t5x; stopping training" "$work/train.log"
# A metric that moves at every evaluation: the AUC-PR of the
# rank-classification task rank_copa (rank_classification_tasks.gin; its
# score metric), from span-corruption training at a constant rate of 1.0.
run2="$work/run_rank"
"$T5XX" train --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin --data_dir="$work/data" \
  --tfds_data_dir="$(cd "$here/../.." && pwd)/tests/testdata/tfds/data" \
  --gin_file="$here/rank_classification_tasks.gin" --gin_file="$here/rank_infer_eval.gin" \
  --gin.network.T5Config.vocab_size=1152 --gin.seqio.SentencePieceVocabulary.extra_ids=100 \
  "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin.MODEL_DIR="'$run2'" --gin.MIXTURE_OR_TASK_NAME="'c4_demo_span_corruption'" \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.TRAIN_STEPS=40 --gin.BATCH_SIZE=4 \
  --gin.EVAL_PERIOD=2 --gin.utils.SaveCheckpointConfig.period=2 --gin.USE_CACHED_TASKS=False \
  --gin.DROPOUT_RATE=0.0 --gin.RANDOM_SEED=3 --gin.utils.create_learning_rate_scheduler.base_learning_rate=1.0 \
  "--gin.utils.create_learning_rate_scheduler.factors='constant'" --gin.train.concurrent_metrics=False \
  "--gin.train.actions={'INFER_EVAL': [@trainer.EarlyStoppingAction()]}" \
  "--gin.trainer.EarlyStoppingAction.metric=('rank_copa', 'auc-pr')" \
  "--gin.trainer.EarlyStoppingAction.mode='max'" --gin.trainer.EarlyStoppingAction.patience=3 \
  >"$work/train_rank.log" 2>&1
show="$work/train_rank.log" check "t5xx train with an INFER_EVAL action on a score metric exits 0" test $? = 0
"$venv/bin/python3" "$here/early_stopping_oracle.py" "$run2/inference_eval/rank_copa-metrics.jsonl" \
  rank_copa auc-pr max 3 >"$work/oracle_rank.log" 2>"$work/oracle_rank.err"
t5x=$(sed -n 's/^stop //p' "$work/oracle_rank.log")
last=$(ls "$run2" | sed -n 's/^checkpoint_\([0-9]*\)$/\1/p' | sort -n | tail -1)
distinct=$("$venv/bin/python3" -c "
import json, sys
print(len({json.loads(l)['auc-pr'] for l in open(sys.argv[1])}))" "$run2/inference_eval/rank_copa-metrics.jsonl")
show="$work/oracle_rank.log $work/oracle_rank.err $work/train_rank.log" \
  check "rank_copa auc-pr ($distinct distinct values): t5x's EarlyStoppingAction stops at step [$t5x]; t5xx after step [$last]" \
  test -n "$t5x" -a "$t5x" != none -a "$t5x" = "$last" -a "$distinct" -ge 3
# An action on a task the inference evaluation does not run: named before step 1.
expect_error infer_eval_action_unknown_task "names task 'no_such_task', but the INFER_EVAL summaries are for '$task'" -- \
  "$T5XX" train --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/finetune.gin --data_dir="$work/data" \
  --gin.network.T5Config.vocab_size=1152 --gin.seqio.SentencePieceVocabulary.extra_ids=100 \
  "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin.MODEL_DIR="'$work/bad'" --gin.MIXTURE_OR_TASK_NAME="'$task'" --gin.USE_CACHED_TASKS=False --gin.TRAIN_STEPS=2 \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 24, 'targets': 12}" --gin.INITIAL_CHECKPOINT_PATH=None \
  --gin.utils.CheckpointConfig.restore=None --gin.EVALUATOR_NUM_EXAMPLES=4 \
  --gin.train.concurrent_metrics=False "--gin.train.actions={'INFER_EVAL': [@trainer.EarlyStoppingAction()]}" \
  "--gin.trainer.EarlyStoppingAction.metric=('no_such_task', 'bleu')" "--gin.trainer.EarlyStoppingAction.mode='max'"
check "nothing trained for the refused action" test ! -e "$work/bad/checkpoint_0"
bad=("$T5XX" train --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/finetune.gin --data_dir="$work/data"
     --gin.network.T5Config.vocab_size=1152 --gin.seqio.SentencePieceVocabulary.extra_ids=100
     "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'"
     --gin.MODEL_DIR="'$work/bad'" --gin.MIXTURE_OR_TASK_NAME="'$task'" --gin.USE_CACHED_TASKS=False
     --gin.TRAIN_STEPS=2 "--gin.TASK_FEATURE_LENGTHS={'inputs': 24, 'targets': 12}"
     --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None
     --gin.EVALUATOR_NUM_EXAMPLES=4 --gin.train.concurrent_metrics=False)
# A metric the task's metric_fns do not give, for an action and for
# SaveBestCheckpointer: named before step 1 with the names there are.
expect_error infer_eval_action_unknown_metric "metric 'rouge' of task '$task', whose metric_fns give 'bleu', 'sequence_accuracy'" -- \
  "${bad[@]}" "--gin.train.actions={'INFER_EVAL': [@trainer.EarlyStoppingAction()]}" \
  "--gin.trainer.EarlyStoppingAction.metric=('$task', 'rouge')" "--gin.trainer.EarlyStoppingAction.mode='max'"
expect_error save_best_unknown_metric "task '$task' logs 'bleu', 'sequence_accuracy' under 'eval/'" -- \
  "${bad[@]}" --gin.utils.SaveCheckpointConfig.checkpointer_cls=@checkpoints.SaveBestCheckpointer \
  "--gin.checkpoints.SaveBestCheckpointer.metric_name_to_monitor='inference_eval/$task/eval/rouge'"
check "nothing written for the refused metrics" test ! -e "$work/bad"
cat "$work/oracle.log" "$work/oracle_rank.log"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
