#!/usr/bin/env bash
# Prompt tuning (google-research/prompt-tuning) of the demo model, against
# prompt-tuning's and t5x's own code:
#   1. a T5.1.1 tiny base checkpoint (2 steps of the demo's span corruption);
#   2. prompt tuning from it (configs/prompt_tuning/t5_1_1_prompt.gin with
#      runs/finetune.gin on the demo translation task, a prompt of 4): only
#      the prompt changes -- every other parameter bitwise the base's --, and
#      each checkpoint also saves the prompt alone as a numpy file
#      (prompt_tuning_check.py, with t5x's checkpoint reader);
#   3. the golden: logits and the prompt's gradient of t5xx_logits on the
#      tuned checkpoint equal prompt-tuning's JAX prompt module on t5x's
#      network within 1e-5 (prompt_tuning_oracle.py);
#   4. `t5xx eval` of the base checkpoint with the saved prompt
#      (prompt_tuning/from_file.gin, evaluate.fallback_init_rng = 0) reproduces the
#      training run's last inference evaluation, prediction for prediction;
#   5. bad input: a prompt file of another shape, packed inputs, and
#      prompt-tuning's flaxformer architecture, each refused by name.
# Usage: run_prompt_tuning_test.sh T5XX WORK_DIR T5XX_LOGITS. Skips (77)
# without the t5x venv, the demo translation data or prompt-tuning's source
# ($PROMPT_TUNING_DIR, else ../shared/prompt-tuning beside this checkout).
. "$(dirname "$0")/t5x_train_lib.sh"
LOGITS="$(realpath "$3")"
pt="${PROMPT_TUNING_DIR:-$(cd "$here/../../.." && pwd)/shared/prompt-tuning}"
[ -f "$pt/prompt_tuning/prompts.py" ] || { echo "SKIP: prompt-tuning's source is not under $pt (set PROMPT_TUNING_DIR)"; exit 77; }
export PROMPT_TUNING_DIR="$pt"
compgen -G "$work/data/freedict_en_de/*validation*" >/dev/null ||
  { echo "SKIP: the demo translation data was not built (dict-freedict-eng-deu missing?)"; exit 77; }
task=freedict_en_de_translate
model=(--gin_file=models/t5_1_1/tiny.gin --gin.network.T5Config.vocab_size=1152
       --gin.seqio.SentencePieceVocabulary.extra_ids=100
       "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'")
"$T5XX" train "${model[@]}" --gin_file=runs/pretrain.gin --data_dir="$work/data" \
  --gin.MODEL_DIR="'$work/base'" --gin.MIXTURE_OR_TASK_NAME="'c4_demo_span_corruption'" \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.TRAIN_STEPS=2 --gin.BATCH_SIZE=4 \
  --gin.USE_CACHED_TASKS=False --gin.DROPOUT_RATE=0.0 >"$work/base.log" 2>&1
show="$work/base.log" check "the base checkpoint (2 steps, no prompt)" test $? = 0
tune=("${model[@]}" --gin_file=prompt_tuning/t5_1_1_prompt.gin --gin_file=runs/finetune.gin --data_dir="$work/data"
      --gin.MIXTURE_OR_TASK_NAME="'$task'" "--gin.TASK_FEATURE_LENGTHS={'inputs': 24, 'targets': 12}"
      --gin.TRAIN_STEPS=6 --gin.BATCH_SIZE=8 --gin.EVAL_PERIOD=2 --gin.EVAL_STEPS=1
      --gin.USE_CACHED_TASKS=False --gin.INITIAL_CHECKPOINT_PATH="'$work/base/checkpoint_2'"
      --gin.utils.SaveCheckpointConfig.period=2 --gin.EVALUATOR_NUM_EXAMPLES=8 --gin.RANDOM_SEED=1
      --gin.DROPOUT_RATE=0.0 --gin.PROMPT_LENGTH=4 --gin.train/utils.DatasetConfig.pack=False
      --gin.train_eval/utils.DatasetConfig.pack=False
      "--gin.utils.create_learning_rate_scheduler.factors='constant'"
      --gin.utils.create_learning_rate_scheduler.base_learning_rate=0.3)
"$T5XX" train "${tune[@]}" --gin.MODEL_DIR="'$work/run'" >"$work/run.log" 2>&1
show="$work/run.log" check "prompt tuning from the base checkpoint (steps 2 to 6)" test $? = 0
npy="$work/run/numpy_checkpoints/checkpoint_6/encoder.prompt.prompt.prompt"
"$venv/bin/python3" "$here/prompt_tuning_check.py" "$work/base/checkpoint_2" "$work/run/checkpoint_2" \
  "$work/run/checkpoint_6" "$npy" >"$work/check.log" 2>"$work/check.err"
show="$work/check.log $work/check.err" \
  check "only the prompt trained; the numpy checkpoint holds it (t5x's reader)" \
  test "$(grep -c '^ok ' "$work/check.log")" = 3
# The golden: t5xx's logits and prompt gradient against prompt-tuning's JAX module.
cat >"$work/model.gin" <<GIN
include 'models/t5_1_1/tiny.gin'
include 'prompt_tuning/t5_1_1_prompt.gin'
network.T5Config.vocab_size = 1152
network.T5Config.dropout_rate = 0.0
PROMPT_LENGTH = 4
GIN
cat >"$work/batch.json" <<'JSON'
{"encoder_input_tokens": [[5, 17, 300, 44, 1, 0, 0], [9, 8, 7, 6, 5, 4, 1]],
 "decoder_input_tokens": [[0, 21, 22, 23], [0, 31, 32, 0]],
 "decoder_target_tokens": [[21, 22, 23, 1], [31, 32, 1, 0]]}
JSON
"$LOGITS" --gin_file="$work/model.gin" --checkpoint_path="$work/run/checkpoint_6" \
  --batch="$work/batch.json" --grad=encoder.prompt.prompt.prompt >"$work/t5xx.json" 2>"$work/logits.err"
show="$work/logits.err" check "t5xx_logits with the prompt's gradient" test $? = 0
"$venv/bin/python3" "$here/prompt_tuning_oracle.py" "$work/run/checkpoint_6" "$work/batch.json" \
  "$work/t5xx.json" 4 >"$work/oracle.log" 2>"$work/oracle.err"
show="$work/oracle.log $work/oracle.err" \
  check "logits and prompt gradient equal prompt-tuning's JAX prompt on t5x's network (1e-5)" \
  grep -q '^ok$' "$work/oracle.log"
# Inference with the saved prompt and the base checkpoint.
ev=("${model[@]}" --gin_file=prompt_tuning/t5_1_1_prompt.gin --gin_file=prompt_tuning/from_file.gin
    --gin_file=runs/eval.gin --data_dir="$work/data" --gin.PROMPT_LENGTH=4
    --gin.evaluate.fallback_init_rng=0 --gin.CHECKPOINT_PATH="'$work/base/checkpoint_2'"
    --gin.MIXTURE_OR_TASK_NAME="'$task'" --gin.utils.DatasetConfig.batch_size=8
    "--gin.utils.DatasetConfig.split='validation'"
    --gin.utils.DatasetConfig.use_cached=False --gin.seqio.Evaluator.num_examples=8)
"$T5XX" eval "${ev[@]}" --gin.PROMPT_FILE="'$npy'" --gin.EVAL_OUTPUT_DIR="'$work/eval'" >"$work/eval.log" 2>&1
show="$work/eval.log" check "t5xx eval of the base checkpoint with the saved prompt" test $? = 0
compare() {  # equal|differ LOG1 LOG2: the 8 predictions of two inference logs, in order
  "$venv/bin/python3" -c "
import json, sys
a, b = ([json.loads(l)['prediction'] for l in open(f)] for f in sys.argv[2:4])
sys.exit(0 if len(a) == len(b) == 8 and (a == b) == (sys.argv[1] == 'equal') else 1)" "$@"
}
show="$work/eval.log" check "it reproduces the training run's inference evaluation at step 6" \
  compare equal "$work/eval/inference_eval/$task-000002.jsonl" "$work/run/inference_eval/$task-000006.jsonl"
"$T5XX" eval "${ev[@]}" --gin.PROMPT_FILE="'$work/run/numpy_checkpoints/checkpoint_2/encoder.prompt.prompt.prompt'" \
  --gin.EVAL_OUTPUT_DIR="'$work/eval_first'" >"$work/eval_first.log" 2>&1
show="$work/eval_first.log" check "the untrained prompt (numpy checkpoint 2) decodes otherwise" \
  compare differ "$work/eval_first/inference_eval/$task-000002.jsonl" "$work/run/inference_eval/$task-000006.jsonl"
# Bad input, named.
"$venv/bin/python3" -c "import numpy as np; np.save('$work/wrong.npy', np.zeros((3, 128), np.float32))"
expect_error prompt_file_shape "the prompt loaded from disk has shape [3, 128] while the config says it should be [4, 128]" -- \
  "$T5XX" eval "${ev[@]}" --gin.PROMPT_FILE="'$work/wrong.npy'" --gin.EVAL_OUTPUT_DIR="'$work/bad'"
noinit=()  # the eval command without fallback_init_rng
for a in "${ev[@]}"; do [ "$a" = --gin.evaluate.fallback_init_rng=0 ] || noinit+=("$a"); done
expect_error eval_without_init_rng "fallback_to_scratch = True needs evaluate.fallback_init_rng" -- \
  "$T5XX" eval "${noinit[@]}" --gin.PROMPT_FILE="'$npy'" --gin.EVAL_OUTPUT_DIR="'$work/bad'"
expect_error prompt_checkpointer_orbax "prompt_utils.Checkpointer's numpy saves are made by t5x's legacy checkpointer" -- \
  "$T5XX" train "${tune[@]}" --gin.MODEL_DIR="'$work/bad'" --gin.train.use_orbax=True
expect_error prompt_packed "prompt tuning (network.Transformer.prompt) does not support packed inputs" -- \
  "$T5XX" train "${tune[@]}" --gin.MODEL_DIR="'$work/bad'" --gin.train/utils.DatasetConfig.pack=True
expect_error flaxformer_gin "'flaxformer.components.embedding' is flaxformer's (or prompt-tuning's layers over it)" -- \
  "$T5XX" config --gin_search_paths="$pt,$T5X_DIR" --gin_file=prompt_tuning/configs/models/t5_1_1_base_prompt.gin \
  --gin_file=prompt_tuning/configs/runs/prompt_finetune.gin --gin.MODEL_DIR="'$work/bad'"
check "nothing written for the refused runs" test ! -e "$work/bad"
cat "$work/check.log" "$work/oracle.log"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
