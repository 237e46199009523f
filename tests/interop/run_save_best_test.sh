#!/usr/bin/env bash
# checkpoints.SaveBestCheckpointer against t5x's own: `t5xx train` with
# utils.SaveCheckpointConfig.checkpointer_cls = @checkpoints.SaveBestCheckpointer
# keeps exactly the checkpoints t5x's SaveBestCheckpointer logic keeps given
# the same saves and the summaries the run wrote (save_best_oracle.py, t5x's
# code from the checkout). Cases: train/loss 'min' with the default
# keep_checkpoints_without_metrics (checkpoint_0, which has no summary,
# stays), train/loss 'max' without it and with force_keep_period, and a
# restart between saves, an inference metric (a rank-classification
# task's AUC-PR); and with train.use_orbax = True the metric
# arguments of checkpoints.OrbaxCheckpointManagerInterface against Orbax's
# own CheckpointManager rules (orbax_* cases; the newest is not kept for
# being the newest there). Usage: run_save_best_test.sh T5XX WORK_DIR
# Skips (77) without t5x's venv (scripts/setup_t5x_interop.sh).
. "$(dirname "$0")/t5x_train_lib.sh"
base=(--gin_file=examples/t5_1_1_tiny_demo.gin --data_dir="$work/data" --gin.BATCH_SIZE=2
      "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.network.T5Config.vocab_size=1152
      --gin.train.train_eval_dataset_cfg=None --gin.train.infer_eval_dataset_cfg=None
      --gin.train.eval_period=2 --gin.utils.SaveCheckpointConfig.period=2)
extra=()  # more arguments for the next cases
kept() { ls "$1" | sed -n 's/^checkpoint_\([0-9]*\)$/\1/p' | sort -n | paste -sd, -; }
case_() {  # NAME KEEP METRIC MODE WITHOUT PERIOD STEPS [RESTART_AT] [orbax]
  local name="$1" keep="$2" metric="$3" mode="$4" without="$5" period="$6" steps="$7" restart="${8:-}"
  local orbax="${9:-}" cls=checkpoints.SaveBestCheckpointer
  [ -n "$orbax" ] && cls=checkpoints.OrbaxCheckpointManagerInterface
  local dir="$work/$name" args=(--gin.utils.SaveCheckpointConfig.keep="$keep"
    --gin.$cls.metric_name_to_monitor="'$metric'" --gin.$cls.metric_mode="'$mode'"
    --gin.$cls.keep_checkpoints_without_metrics="$without")
  if [ -n "$orbax" ]; then
    args+=(--gin.train.use_orbax=True)
  else
    args+=(--gin.utils.SaveCheckpointConfig.checkpointer_cls=@checkpoints.SaveBestCheckpointer)
  fi
  [ "$period" != 0 ] && args+=(--gin.$cls.force_keep_period="$period")
  args+=("${extra[@]}")
  if [ -n "$restart" ]; then
    "$T5XX" train "${base[@]}" "${args[@]}" --gin.MODEL_DIR="'$dir'" --gin.TRAIN_STEPS="$restart" \
      >"$work/$name.1.log" 2>&1 || { echo "FAIL $name: t5xx train"; tail -5 "$work/$name.1.log"; failures=$((failures + 1)); return; }
  fi
  "$T5XX" train "${base[@]}" "${args[@]}" --gin.MODEL_DIR="'$dir'" --gin.TRAIN_STEPS="$steps" \
    >"$work/$name.log" 2>&1 || { echo "FAIL $name: t5xx train"; tail -5 "$work/$name.log"; failures=$((failures + 1)); return; }
  local saved; saved=$(seq 0 2 "$steps" | paste -sd, -)
  "$venv/bin/python3" "$here/save_best_oracle.py" "$dir" "$keep" "$metric" "$mode" "$without" "$period" \
    "$saved" $orbax >"$work/$name.oracle" 2>"$work/$name.oracle.err"
  local rc=$?
  if [ "$rc" = 77 ]; then cat "$work/$name.oracle"; exit 77; fi
  local t5x; t5x=$(sed -n 's/^kept //p' "$work/$name.oracle")
  show="$work/$name.oracle $work/$name.oracle.err" check "$name: t5xx keeps [$(kept "$dir")], t5x${orbax:+ with the Orbax CheckpointManager} [$t5x]" \
    test "$rc" = 0 -a -n "$t5x" -a "$(kept "$dir")" = "$t5x"
}
case_ loss_min 2 train/loss min True 0 16
case_ loss_max_no_metrics 1 train/loss max False 6 16
case_ loss_min_restart 3 train/loss min False 4 20 10
# An inference metric, as fine-tuning monitors one: the AUC-PR of the
# rank-classification task rank_copa (rank_classification_tasks.gin, its
# area under the precision-recall curve), evaluated every 2 steps.
extra=(--tfds_data_dir="$(cd "$here/../.." && pwd)/tests/testdata/tfds/data"
       --gin_file="$here/rank_classification_tasks.gin" --gin_file="$here/rank_infer_eval.gin"
       "--gin.train.infer_eval_dataset_cfg=@infer_eval/utils.DatasetConfig()"
       --gin.train.inference_evaluator_cls=@seqio.Evaluator)
case_ infer_auc_pr_max 2 inference_eval/rank_copa/eval/auc-pr max True 0 12
extra=()
case_ orbax_loss_min 2 train/loss min True 0 16 "" orbax
case_ orbax_loss_max_no_metrics 2 train/loss max False 6 16 "" orbax
case_ orbax_loss_min_restart 3 train/loss min False 4 20 10 orbax
grep -h "^metrics" "$work"/*.oracle
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
