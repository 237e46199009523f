#!/usr/bin/env bash
# End-to-end checks of the t5xx binary: bad input gives one clear error line
# and exit status 2; a tiny corpus + a 3-step run writes t5x's layout.
# Usage: cli_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

demo=(--gin_file=examples/t5_1_1_tiny_demo.gin --gin.MODEL_DIR="$work/run")

expect_error missing_corpus "build it with \`t5xx build_corpus --data_dir=$work/nodata\`" -- \
  "$T5XX" train "${demo[@]}" --data_dir="$work/nodata"
expect_error unknown_param "did you mean 'emb_dim'" -- \
  "$T5XX" train "${demo[@]}" --gin.network.T5Config.emb_dimm=3 --data_dir="$work/nodata"
expect_error bad_value "expected an int" -- \
  "$T5XX" train "${demo[@]}" --gin.TRAIN_STEPS="'many'" --data_dir="$work/nodata"
expect_error missing_gin_file "nosuch.gin" -- \
  "$T5XX" train --gin_file=nosuch.gin --gin.MODEL_DIR="$work/run"
expect_error unknown_flag "unknown flag '--stepz'" -- \
  "$T5XX" train "${demo[@]}" --stepz=3
expect_error unknown_command "unknown command 'trian'" -- "$T5XX" trian
# The launcher (src/t5xx/cli/launcher/): t5xx runs t5xx_main once, with
# GOMP_SPINCOUNT set, and t5xx_main does not start itself again; without
# t5xx_main beside it, one error line.
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
  env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u T5XX_OPENMP_RESTART \
    strace -f -v -s 300 -e trace=execve -o "$work/execs" "$T5XX" trian >/dev/null 2>&1
  if [ "$(grep -c ' execve(' "$work/execs")" = 2 ] &&
     grep ' execve(' "$work/execs" | tail -1 | grep -q '/t5xx_main", \["[^"]*t5xx", "trian"\].*"GOMP_SPINCOUNT=1000"'; then
    pass=$((pass + 1))
  else
    echo "FAIL launcher: wanted two execve calls, the second of t5xx_main with GOMP_SPINCOUNT=1000:"
    cat "$work/execs"; failures=$((failures + 1))
  fi
fi
mkdir "$work/lonely" && cp "$(dirname "$(realpath "$T5XX")")/t5xx" "$work/lonely/t5xx"
expect_error launcher_alone "the t5xx launcher needs t5xx_main beside it" -- "$work/lonely/t5xx" train
expect_error bad_vocab_size "--vocab_size must be an integer in [260, 1000000], got 'lots'" -- \
  "$T5XX" build_corpus --data_dir="$work/data" --vocab_size=lots
expect_error vocab_size_overflow "--vocab_size must be an integer in [260, 1000000], got '4294967297'" -- \
  "$T5XX" build_corpus --data_dir="$work/data" --vocab_size=4294967297
expect_error empty_data_dir "flag --data_dir has an empty value" -- \
  "$T5XX" build_corpus --data_dir=
expect_error no_gin_file "no --gin_file given" -- "$T5XX" train
expect_error bad_peak_flops "--peak_flops_per_s must be a positive number of FLOP/s (e.g. 1.8e11 for 180 GFLOP/s), got '180G'" -- \
  "$T5XX" train "${demo[@]}" --peak_flops_per_s=180G
expect_error bad_bf16_matmul "environment variable T5XX_BF16_MATMUL = 'fast' is not a bfloat16 matmul mode" -- \
  env T5XX_BF16_MATMUL=fast "$T5XX" train "${demo[@]}"
expect_error macro_typo "macro BATCH_SIZ is never used (did you mean 'BATCH_SIZE'?)" -- \
  "$T5XX" train "${demo[@]}" --gin.BATCH_SIZ=8
expect_error negative_steps "must be >= 0, got -1" -- "$T5XX" train "${demo[@]}" --gin.TRAIN_STEPS=-1
# train's loop settings (t5x's train.py rules) are checked before any work.
expect_error periods_not_multiples "must be multiples of each other" -- \
  "$T5XX" train "${demo[@]}" --gin.EVAL_PERIOD=2 --gin.utils.SaveCheckpointConfig.period=3 \
  --data_dir="$work/nodata"
expect_error train_actions_need_sync_metrics "set train.concurrent_metrics = False" -- \
  "$T5XX" train "${demo[@]}" --data_dir="$work/nodata" \
  "--gin_bindings=__main__.train.actions = {'TRAIN': [@trainer.TerminateOnNanAction()]}" \
  --gin.trainer.TerminateOnNanAction.task=train
expect_error infer_eval_actions_need_sync_metrics "actions['INFER_EVAL'] is set" -- \
  "$T5XX" train "${demo[@]}" --data_dir="$work/nodata" \
  "--gin_bindings=__main__.train.actions = {'INFER_EVAL': [@trainer.EarlyStoppingAction()]}" \
  "--gin_bindings=trainer.EarlyStoppingAction.metric = ('c4_demo_span_corruption', 'bleu')" \
  --gin.trainer.EarlyStoppingAction.mode="'max'"
expect_error bad_early_stopping_mode "use 'min' or 'max'" -- \
  "$T5XX" train "${demo[@]}" --data_dir="$work/nodata" \
  "--gin_bindings=__main__.train.actions = {'TRAIN_EVAL': [@trainer.EarlyStoppingAction()]}" \
  "--gin_bindings=trainer.EarlyStoppingAction.metric = ('c4_demo_span_corruption', 'loss')" \
  --gin.trainer.EarlyStoppingAction.mode=lowest
expect_error zero_relative_steps "must be >= 1, got 0" -- \
  "$T5XX" train "${demo[@]}" --gin_bindings='__main__.train.relative_steps = 0' \
  --data_dir="$work/nodata"
touch "$work/afile"
expect_error model_dir_is_file "MODEL_DIR '$work/afile' exists and is not a directory" -- \
  "$T5XX" train --gin_file=examples/t5_1_1_tiny_demo.gin --gin.MODEL_DIR="$work/afile"
expect_error missing_macro "MODEL_DIR" -- \
  "$T5XX" train --gin_file=examples/t5_1_1_tiny_demo.gin

# t5xx config: every stock model config validates with runs/pretrain.gin, and
# the printed operative config, fed back in, prints the same text. config
# checks the task and its vocabulary as train does, so they must exist: a
# small demo corpus (the default data dir via T5XX_DATA_DIR).
"$T5XX" build_corpus --data_dir="$work/cfgdata" --max_documents=300 --vocab_size=500 \
  >"$work/cfgcorpus.log" 2>&1 || { echo "FAIL small corpus:"; cat "$work/cfgcorpus.log"; }
# Partitioning errors come after the data checks, so these need a corpus
# (this small one; not the default data dir, which a fresh machine lacks).
expect_error two_partitions "start a multiple of 2 processes" -- \
  env T5XX_DATA_DIR="$work/cfgdata" "$T5XX" train "${demo[@]}" --gin.partitioning.PjitPartitioner.num_partitions=2
# A literal logical_axis_rules list: a bad mesh axis is named where it
# stands; missing rules are all listed in one error.
expect_error rules_mesh_axis_typo "flag, column 12: mesh axis 'dta' in logical_axis_rules" -- \
  env T5XX_DATA_DIR="$work/cfgdata" "$T5XX" train "${demo[@]}" "--gin.partitioning.PjitPartitioner.logical_axis_rules=[('batch', 'dta')]"
expect_error rules_missing "5 errors in the partitioning of the model's parameters" -- \
  env T5XX_DATA_DIR="$work/cfgdata" "$T5XX" train "${demo[@]}" "--gin.partitioning.PjitPartitioner.logical_axis_rules=[('batch', 'data')]"
spm=--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file=c4_demo/sentencepiece.model
for size in tiny small base large xl xxl; do
  if T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config --gin_file=models/t5_1_1/$size.gin --gin_file=runs/pretrain.gin \
       --gin.MODEL_DIR="$work/x" --gin.MIXTURE_OR_TASK_NAME=c4_demo_span_corruption --gin.TRAIN_STEPS=1 \
       "--gin.TASK_FEATURE_LENGTHS={'inputs': 8, 'targets': 8}" --gin.DROPOUT_RATE=0.0 "$spm" \
       >"$work/op_$size.gin" 2>"$work/err"; then
    pass=$((pass + 1))
  else
    echo "FAIL config $size:"; cat "$work/err"; failures=$((failures + 1))
  fi
done
# t5x's other families (configs/models/t5_1_0, mt5): every size reads with
# the demo task (their SentencePiece models hold the sentinels, so the demo
# model's 100 extra ids are bound; ByT5 needs a byte task: run_layer_test).
for fam_size in t5_1_0/{tiny,small,base,large,3B,11B} mt5/{tiny,small,base,large,xl,xxl}; do
  if T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config --gin_file=models/$fam_size.gin --gin_file=runs/pretrain.gin \
       --gin.MODEL_DIR="$work/x" --gin.MIXTURE_OR_TASK_NAME=c4_demo_span_corruption --gin.TRAIN_STEPS=1 \
       "--gin.TASK_FEATURE_LENGTHS={'inputs': 8, 'targets': 8}" --gin.DROPOUT_RATE=0.0 "$spm" \
       --gin.seqio.SentencePieceVocabulary.extra_ids=100 >/dev/null 2>"$work/err"; then
    pass=$((pass + 1))
  else
    echo "FAIL config $fam_size:"; cat "$work/err"; failures=$((failures + 1))
  fi
done
# MODEL = @models.EncoderDecoderModel(): gin calls it, and what it reaches,
# in scope MODEL (%MODEL is gin's @MODEL/gin.macro()).
grep -q "^MODEL/t5x.examples.t5.network.T5Config.emb_dim = 512$" "$work/op_small.gin" ||
  { echo "FAIL small.gin emb_dim"; failures=$((failures + 1)); }
T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config "--gin_file=$work/op_small.gin" >"$work/op_again.gin" 2>"$work/err" &&
  cmp -s "$work/op_small.gin" "$work/op_again.gin" && pass=$((pass + 1)) ||
  { echo "FAIL operative config round trip"; cat "$work/err"; diff "$work/op_small.gin" "$work/op_again.gin" | head; failures=$((failures + 1)); }
[ ! -e "$work/x" ] || { echo "FAIL t5xx config wrote MODEL_DIR"; failures=$((failures + 1)); }

# AdamW on top of a stock model file: the file's Adafactor bindings are
# ignored (as gin does), with a note, and the run's optimizer is AdamW.
if T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config --gin_file=models/decoder_only/tiny.gin --gin_file=runs/pretrain.gin \
     --gin.MODEL_DIR="$work/x" --gin.MIXTURE_OR_TASK_NAME=c4_demo_full_lm --gin.TRAIN_STEPS=1 \
     "--gin.TASK_FEATURE_LENGTHS={'targets': 8}" --gin.DROPOUT_RATE=0.0 "$spm" \
     "--gin.OPTIMIZER=@t5x.optimizers.adamw()" --gin.t5x.optimizers.adamw.learning_rate=0.001 \
     >"$work/op_adamw.gin" 2>"$work/err" &&
   grep -q "^MODEL/t5x.models.DecoderOnlyModel.optimizer_def = @OPTIMIZER/t5x.optimizers.adamw()$" "$work/op_adamw.gin" &&
   grep -q "note: bindings of configurables \`t5xx config\` does not use are ignored" "$work/err"; then
  pass=$((pass + 1))
else
  echo "FAIL AdamW over a stock model file:"; cat "$work/err"; failures=$((failures + 1))
fi

# A scoped macro nothing reads (train/BATCH_SIZE: gin reads %BATCH_SIZE in
# scope BATCH_SIZE, so the run keeps BATCH_SIZE's value) is noted with its
# file:line and what to bind instead (issue 50).
printf 'train/BATCH_SIZE = 4\n' >"$work/scoped_macro.gin"
if T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config --gin_file=models/decoder_only/tiny.gin --gin_file=runs/pretrain.gin \
     --gin_file="$work/scoped_macro.gin" \
     --gin.MODEL_DIR="$work/x" --gin.MIXTURE_OR_TASK_NAME=c4_demo_full_lm --gin.TRAIN_STEPS=1 \
     "--gin.TASK_FEATURE_LENGTHS={'targets': 8}" --gin.DROPOUT_RATE=0.0 "$spm" \
     >"$work/op_scoped.gin" 2>"$work/err" &&
   grep -q "^train/t5x.utils.DatasetConfig.batch_size = 128$" "$work/op_scoped.gin" &&
   grep -q "^t5xx: note: $work/scoped_macro.gin:1:1: macro train/BATCH_SIZE is never read: it is a scoped macro, .* bind train/t5x.utils.DatasetConfig.batch_size$" "$work/err"; then
  pass=$((pass + 1))
else
  echo "FAIL scoped macro note:"; cat "$work/err"; failures=$((failures + 1))
fi

# The same as a --gin. flag (t5x's sugar, where an unused macro is an error):
# the error says what to bind instead.
expect_error "a scoped macro as a --gin. flag" "--gin.train/BATCH_SIZE flag: macro train/BATCH_SIZE is never used: it is a scoped macro, and gin evaluates %BATCH_SIZE in scope BATCH_SIZE whatever scope reads it, so only %train/BATCH_SIZE would read it, and %BATCH_SIZE keeps the value of 'BATCH_SIZE = ...'; to set it in scope train, bind train/t5x.utils.DatasetConfig.batch_size" -- \
  env T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config --gin_file=models/decoder_only/tiny.gin --gin_file=runs/pretrain.gin \
  --gin.MODEL_DIR="$work/x" --gin.MIXTURE_OR_TASK_NAME=c4_demo_full_lm --gin.TRAIN_STEPS=1 \
  "--gin.TASK_FEATURE_LENGTHS={'targets': 8}" --gin.DROPOUT_RATE=0.0 "$spm" --gin.train/BATCH_SIZE=4

# A task defined only in a gin file, over JSON lines of token ids.
printf '{"ids": [5, 6, 7]}\n{"ids": [8, 9]}\n\n{"ids": [10]}\n' >"$work/tokens.jsonl"
cat >"$work/tokens_task.gin" <<EOF
from __gin__ import dynamic_registration
import seqio
from seqio import preprocessors

TOKENS = @seqio.PassThroughVocabulary()
seqio.PassThroughVocabulary.size = 1000
seqio.PassThroughVocabulary.eos_id = 1

tokens/seqio.Task:
  name = 'gin_tokens_task'
  source = @tokens/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@tokens/preprocessors.rekey, @preprocessors.append_eos]
  output_features = {'targets': @seqio.Feature()}
  shuffle_buffer_size = None
tokens/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {
    'train': '$work/tokens.jsonl', 'validation': '$work/tokens.jsonl'}
tokens/preprocessors.rekey.key_map = {'targets': 'ids'}
tokens/seqio.Feature.vocabulary = %TOKENS

gin_mix/seqio.Mixture:
  name = 'gin_tokens_mix'
  tasks = [('gin_tokens_task', 1.0)]

t5xx.seqio.register:
  tasks = [@tokens/seqio.Task()]
  mixtures = [@gin_mix/seqio.Mixture()]
EOF
expected_show='{"targets":[5,6,7,1],"targets_text":"5 6 7 1"}
{"targets":[8,9,1],"targets_text":"8 9 1"}
{"targets":[10,1],"targets_text":"10 1"}'
if out="$("$T5XX" data show --gin_file="$work/tokens_task.gin" --task=gin_tokens_task 2>"$work/err")" &&
   [ "$out" = "$expected_show" ]; then
  pass=$((pass + 1))
else
  echo "FAIL gin task data show:"; cat "$work/err"; echo "$out"; failures=$((failures + 1))
fi
if "$T5XX" data stats --gin_file="$work/tokens_task.gin" --task=gin_tokens_task >"$work/gstats.json" 2>"$work/err" &&
   grep -q '"examples": 3' "$work/gstats.json" && grep -q '"targets_tokens": 9' "$work/gstats.json" &&
   "$T5XX" data show --gin_file="$work/tokens_task.gin" --task=gin_tokens_mix --n=1 >"$work/gmix.jsonl" 2>>"$work/err" &&
   [ "$(wc -l <"$work/gmix.jsonl")" = 1 ]; then
  pass=$((pass + 1))
else
  echo "FAIL gin task data stats / mixture:"; cat "$work/err" "$work/gstats.json"; failures=$((failures + 1))
fi
sed 's/@preprocessors.append_eos\]/@preprocessors.apend_eos]/' "$work/tokens_task.gin" >"$work/bad_pre.gin"
expect_error gin_task_unknown_preprocessor \
  "bad_pre.gin:12:49: unknown configurable 'preprocessors.apend_eos'; did you mean 'preprocessors.append_eos'?" -- \
  "$T5XX" data show --gin_file="$work/bad_pre.gin" --task=gin_tokens_task
expect_error gin_task_unused_binding "never read by \`t5xx data show\`" -- \
  "$T5XX" data show --gin_file="$work/tokens_task.gin" --task=gin_tokens_task \
  "--gin_bindings=other/seqio.Feature.add_eos = False"
expect_error gin_task_not_a_source "is not a data source" -- \
  "$T5XX" data show --gin_file="$work/tokens_task.gin" --task=gin_tokens_task \
  "--gin_bindings=tokens/seqio.Task.source = @seqio.ByteVocabulary()"
# t5xx config validates a gin task and round-trips it. config checks that
# the model's vocabulary is the task's, as train does: a text task over the
# small corpus's SentencePiece model.
printf '{"text": "a short line"}\n{"text": "another line"}\n' >"$work/text.jsonl"
cat >"$work/text_task.gin" <<EOF
import seqio
from seqio import preprocessors
text/seqio.Task:
  name = 'gin_text_task'
  source = @text/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@text/preprocessors.rekey, @preprocessors.tokenize, @preprocessors.append_eos]
  output_features = {'inputs': @seqio.Feature(), 'targets': @seqio.Feature()}
text/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {
    'train': '$work/text.jsonl', 'validation': '$work/text.jsonl'}
text/preprocessors.rekey.key_map = {'inputs': 'text', 'targets': 'text'}
seqio.Feature.vocabulary = @seqio.SentencePieceVocabulary()
t5xx.seqio.register.tasks = [@text/seqio.Task()]
EOF
if T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin \
     --gin_file="$work/text_task.gin" --gin.MODEL_DIR="$work/x" "$spm" \
     --gin.MIXTURE_OR_TASK_NAME=gin_text_task --gin.TRAIN_STEPS=1 \
     "--gin.TASK_FEATURE_LENGTHS={'inputs': 8, 'targets': 8}" --gin.DROPOUT_RATE=0.0 \
     >"$work/op_task.gin" 2>"$work/err" &&
   grep -q "^text/seqio.Task.name = 'gin_text_task'$" "$work/op_task.gin" &&
   T5XX_DATA_DIR="$work/cfgdata" "$T5XX" config --gin_file="$work/op_task.gin" >"$work/op_task2.gin" 2>>"$work/err" &&
   cmp -s "$work/op_task.gin" "$work/op_task2.gin"; then
  pass=$((pass + 1))
else
  echo "FAIL config with a gin task:"; cat "$work/err"; failures=$((failures + 1))
fi

# A gin task with postprocess_fn and metric_fns, scored by `t5xx data score`.
# Targets yes, no, yes; predictions yes, yes, no -> class ids 1,0,1 vs 1,1,0:
# accuracy 1/3 = 33.33; F1 with TP=1, FP=1, FN=1 = 2/(2+1+1) = 50.
printf '{"label": "yes"}\n{"label": "no"}\n{"label": "yes"}\n' >"$work/labels.jsonl"
printf 'yes\nyes\nno\n' >"$work/predictions.txt"
cat >"$work/label_task.gin" <<EOF
import seqio
from seqio import preprocessors
from t5.data import postprocessors
from t5.evaluation import metrics

labels/seqio.Task:
  name = 'gin_label_task'
  source = @labels/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@labels/preprocessors.rekey, @preprocessors.tokenize]
  output_features = {'targets': @seqio.Feature()}
  postprocess_fn = @postprocessors.string_label_to_class_id
  metric_fns = [@metrics.accuracy, @metrics.f1_score_with_invalid]
labels/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'validation': '$work/labels.jsonl'}
labels/preprocessors.rekey.key_map = {'targets': 'label'}
seqio.Feature.vocabulary = @seqio.ByteVocabulary()
postprocessors.string_label_to_class_id.label_classes = ['no', 'yes']
t5xx.seqio.register.tasks = [@labels/seqio.Task()]
EOF
if "$T5XX" data score --gin_file="$work/label_task.gin" --task=gin_label_task \
     --predictions="$work/predictions.txt" >"$work/score.json" 2>"$work/err" &&
   grep -q '"accuracy": 33.333333333333' "$work/score.json" && grep -q '"f1": 50.0' "$work/score.json" &&
   grep -q '"examples": 3' "$work/score.json"; then
  pass=$((pass + 1))
else
  echo "FAIL data score:"; cat "$work/err" "$work/score.json"; failures=$((failures + 1))
fi
printf 'yes\nno\n' >"$work/two_predictions.txt"
expect_error data_score_count "has 2 lines but split 'validation' of task 'gin_label_task' has more examples" -- \
  "$T5XX" data score --gin_file="$work/label_task.gin" --task=gin_label_task \
  --predictions="$work/two_predictions.txt"
expect_error data_score_wrong_metric "is not a metric_fn; t5xx knows @t5.evaluation.metrics.accuracy()" -- \
  "$T5XX" data score --gin_file="$work/label_task.gin" --task=gin_label_task \
  --predictions="$work/predictions.txt" "--gin_bindings=labels/seqio.Task.metric_fns = [@preprocessors.tokenize]"

# A malformed JSON line: an error naming file:line, or skipped and counted.
printf '{"ids": [5, 6]}\n{"ids": [7,\n{"ids": [8]}\n' >"$work/bad_tokens.jsonl"
sed "s|$work/tokens.jsonl|$work/bad_tokens.jsonl|g" "$work/tokens_task.gin" >"$work/bad_tokens_task.gin"
expect_error bad_json_line "bad_tokens.jsonl:2: malformed JSON line" -- \
  "$T5XX" data stats --gin_file="$work/bad_tokens_task.gin" --task=gin_tokens_task
if "$T5XX" data stats --gin_file="$work/bad_tokens_task.gin" --task=gin_tokens_task \
     --skip_bad_records=true >"$work/skip.json" 2>"$work/err" &&
   grep -q '"skipped_records": 1' "$work/skip.json" && grep -q '"examples": 2' "$work/skip.json"; then
  pass=$((pass + 1))
else
  echo "FAIL data stats --skip_bad_records:"; cat "$work/err" "$work/skip.json"; failures=$((failures + 1))
fi

# Text that is not UTF-8 (util/utf8.h): a text-line source passes the bytes
# through; JSON output writes U+FFFD (EF BF BD) per invalid sequence. Line
# "bad \xff\xfe byte line": ByteVocabulary ids are byte + 3 (b=98 -> 101,
# a -> 100, d -> 103, space -> 35, ff -> 258, fe -> 257, y -> 124, t -> 119,
# e -> 104, l -> 111, i -> 108, n -> 113), then EOS 1: 17 ids, none PAD.
# targets_pretokenized: FF and FE each become U+FFFD; targets_text is the
# ByteVocabulary decode, which drops them (seqio: errors='ignore').
printf 'bad \xff\xfe byte line\n' >"$work/bad_bytes.txt"
cat >"$work/lines_task.gin" <<EOF
import seqio
from seqio import preprocessors

lines/seqio.Task:
  name = 'gin_lines_task'
  source = @lines/seqio.TextLineDataSource()
  preprocessors = [@lines/preprocessors.rekey, @preprocessors.tokenize, @preprocessors.append_eos]
  output_features = {'targets': @lines/seqio.Feature()}
  shuffle_buffer_size = None
lines/seqio.TextLineDataSource.split_to_filepattern = {'train': %LINES, 'validation': %LINES}
lines/preprocessors.rekey.key_map = {'targets': 'text'}
lines/seqio.Feature.vocabulary = @seqio.ByteVocabulary()
t5xx.seqio.register.tasks = [@lines/seqio.Task()]
EOF
expected_show="$(printf '{"targets":[101,100,103,35,258,257,35,101,124,119,104,35,111,108,113,104,1],"targets_pretokenized":"bad \xef\xbf\xbd\xef\xbf\xbd byte line","targets_text":"bad  byte line"}')"
if out="$("$T5XX" data show --gin_file="$work/lines_task.gin" --gin.LINES="$work/bad_bytes.txt" \
            --task=gin_lines_task 2>"$work/err")" && [ "$out" = "$expected_show" ] &&
   "$T5XX" data stats --gin_file="$work/lines_task.gin" --gin.LINES="$work/bad_bytes.txt" \
     --task=gin_lines_task >"$work/bytes_stats.json" 2>>"$work/err" &&
   grep -q '"examples": 1,' "$work/bytes_stats.json" &&
   grep -q '"targets_tokens": 17' "$work/bytes_stats.json"; then
  pass=$((pass + 1))
else
  echo "FAIL text that is not UTF-8 (data show / stats):"; cat "$work/err" "$work/bytes_stats.json"
  echo "$out"; failures=$((failures + 1))
fi
# Blank lines are examples (as in seqio), counted as empty_examples. Lines:
# "one", "", "two" (CRLF), "" (CRLF), " ", "three" (no final newline): 6
# examples; the two blank ones are empty (their targets hold only EOS), " "
# is not. Tokens: 3 + 3 + 1 + 5 bytes and 6 EOS = 18.
printf 'one\n\ntwo\r\n\r\n \nthree' >"$work/blank_lines.txt"
if "$T5XX" data stats --gin_file="$work/lines_task.gin" --gin.LINES="$work/blank_lines.txt" \
     --task=gin_lines_task >"$work/blank_stats.json" 2>"$work/err" &&
   grep -q '"examples": 6,' "$work/blank_stats.json" &&
   grep -q '"empty_examples": 2,' "$work/blank_stats.json" &&
   grep -q '"targets_tokens": 18' "$work/blank_stats.json"; then
  pass=$((pass + 1))
else
  echo "FAIL data stats empty_examples:"; cat "$work/err" "$work/blank_stats.json"; failures=$((failures + 1))
fi
# A typographic quote in a gin file is named whole, with its code point.
printf 'x/seqio.Task.name = \xe2\x80\x98t\xe2\x80\x99\n' >"$work/curly.gin"
expect_error gin_typographic_quote \
  "curly.gin:1:21: unexpected character '$(printf '\xe2\x80\x98')' (U+2018); gin strings use ' or \"" -- \
  "$T5XX" data show --gin_file="$work/curly.gin" --task=x

# A small real corpus, then a 3-step run.
if ! "$T5XX" build_corpus --data_dir="$work/data" --max_documents=3000 --vocab_size=1000 >"$work/corpus.log" 2>&1; then
  echo "FAIL build_corpus:"; cat "$work/corpus.log"; failures=$((failures + 1))
else
  pass=$((pass + 1))
  for f in corpus_info.json sentencepiece.model c4-validation.json-00000-of-00001.gz; do
    [ -s "$work/data/c4_demo/$f" ] || { echo "FAIL corpus file $f missing"; failures=$((failures + 1)); }
  done
  expect_error vocab_too_big_for_model "set vocab_size to at least" -- \
    "$T5XX" train "${demo[@]}" --data_dir="$work/data" --gin.network.T5Config.vocab_size=512
  expect_error other_corpus_options "built with other options (max_documents: 3000 -> 10)" -- \
    "$T5XX" build_corpus --data_dir="$work/data" --max_documents=10 --vocab_size=1000
  expect_error vocab_mismatch "is not the vocabulary of task 'c4_demo_span_corruption'" -- \
    "$T5XX" train "${demo[@]}" --data_dir="$work/data" \
    --gin.seqio.SentencePieceVocabulary.sentencepiece_model_file=/nonexistent.model
  expect_error targets_too_short "while reading the train dataset" -- \
    "$T5XX" train "${demo[@]}" --data_dir="$work/data" \
    "--gin.TASK_FEATURE_LENGTHS={'inputs': 128, 'targets': 20}"
  expect_error zero_eval_steps "must be >= 1, got 0" -- \
    "$T5XX" train "${demo[@]}" --data_dir="$work/data" --gin.EVAL_STEPS=0
  expect_error early_stopping_unknown_task "names task 'nosuch', but the TRAIN_EVAL summaries are for 'c4_demo_span_corruption'" -- \
    "$T5XX" train "${demo[@]}" --data_dir="$work/data" \
    "--gin_bindings=__main__.train.actions = {'TRAIN_EVAL': [@trainer.EarlyStoppingAction()]}" \
    "--gin_bindings=trainer.EarlyStoppingAction.metric = ('nosuch', 'loss')" \
    --gin.trainer.EarlyStoppingAction.mode=min
  [ ! -e "$work/run" ] || { echo "FAIL rejected runs created MODEL_DIR"; failures=$((failures + 1)); }
  # relative_steps (t5x: total_steps is then ignored), a checkpoint period
  # (t5x also saves at the start step) and keep.
  if "$T5XX" train "${demo[@]}" --data_dir="$work/data" --gin.MODEL_DIR="$work/relrun" \
       --gin.TRAIN_STEPS=100 --gin.BATCH_SIZE=2 --gin.EVAL_STEPS=1 --gin.EVAL_PERIOD=1 \
       --gin_bindings='__main__.train.relative_steps = 3' \
       --gin.utils.SaveCheckpointConfig.period=1 --gin.utils.SaveCheckpointConfig.keep=2 \
       >"$work/rel.log" 2>&1 && grep -q "relative_steps = 3: training to step 3" "$work/rel.log" &&
     [ "$(ls -d "$work"/relrun/checkpoint_* | xargs -n1 basename | tr '\n' ' ')" = "checkpoint_2 checkpoint_3 " ] &&
     [ "$(grep -c '"loss":' "$work/relrun/training_eval/c4_demo_span_corruption/metrics.jsonl")" = 3 ]; then
    pass=$((pass + 1))
  else
    echo "FAIL relative_steps run:"; cat "$work/rel.log"; ls -R "$work/relrun"; failures=$((failures + 1))
  fi
  if "$T5XX" train "${demo[@]}" --data_dir="$work/data" --gin.TRAIN_STEPS=3 --gin.BATCH_SIZE=4 \
       --gin.EVAL_STEPS=1 --gin_bindings='__main__.train.stats_period = 1' >"$work/train.log" 2>&1; then
    ok=1
    grep -q '^\[train\] step 3 ' "$work/train.log" || ok=0
    grep -q "mixture_or_task_name = 'c4_demo_span_corruption'" "$work/run/config.gin" || ok=0
    # One summary line per step (stats_period 1); timing/checkpoint_seconds
    # has its own line.
    [ "$(grep -c '"loss":' "$work/run/train/metrics.jsonl")" = 3 ] || ok=0
    [ -f "$work/run/checkpoint_3/checkpoint" ] || ok=0
    [ -f "$work/run/checkpoint_3/target.decoder.logits_dense.kernel/.zarray" ] || ok=0
    if [ $ok = 1 ]; then pass=$((pass + 1)); else
      echo "FAIL train run outputs:"; cat "$work/train.log"; ls -R "$work/run"; failures=$((failures + 1)); fi
    # TensorBoard reads the run's event files: t5x's tags in train/ and
    # training_eval/<task>/, each value the JSON-lines value (as float32), the
    # operative config as the text summary "config" at step 0.
    py="${T5XX_PYTHON3:-python3}"
    reader="$(dirname "$0")/../trainer/read_events.py"
    for d in train training_eval/c4_demo_span_corruption; do
      "$py" "$reader" "$work/run/$d" >"$work/events.json" 2>"$work/err"; rc=$?
      if [ $rc = 77 ]; then echo "SKIP event files: tensorboard is not installed for $py"; break; fi
      if [ $rc = 0 ] && "$py" - "$work/events.json" "$work/run/$d/metrics.jsonl" "$d" >"$work/check.log" 2>&1 <<'PYEOF'
import json, struct, sys
tb, jsonl, which = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
tags = set(tb["scalars"])
need = {"loss", "accuracy", "cross_ent_loss", "z_loss", "loss_per_nonpadding_target_token",
        "timing/steps_per_second", "timing/seqs_per_second", "timing/target_tokens_per_second",
        "non_padding_fraction/loss_weights", "non_padding_fraction/encoder",
        "effective_batch_size/decoder"}
if which == "train":
  need |= {"learning_rate", "timing/mfu", "timing/model_flops_per_second", "timing/uptime"}
  assert [c[0] for c in tb["texts"]["config"]] == [0], tb["texts"].get("config")
  assert "mixture_or_task_name = 'c4_demo_span_corruption'" in tb["texts"]["config"][0][1]
assert need <= tags, sorted(need - tags)
f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
n = 0
for line in open(jsonl):
  j = json.loads(line)
  for tag, v in j.items():
    if tag == "step":
      continue
    assert [e[1] for e in tb["scalars"][tag] if e[0] == j["step"]] == [f32(v)], (tag, j["step"])
    n += 1
assert n > 0
PYEOF
      then pass=$((pass + 1)); else
        echo "FAIL event files in $d:"; cat "$work/err" "$work/check.log"; failures=$((failures + 1)); fi
    done
    # The operative config train wrote is what `t5xx config` prints.
    # (asked about a new MODEL_DIR, compared with the paths swapped.)
    "$T5XX" config "${demo[@]}" --data_dir="$work/data" --gin.TRAIN_STEPS=3 --gin.BATCH_SIZE=4 \
      --gin.EVAL_STEPS=1 --gin_bindings='__main__.train.stats_period = 1' \
      --gin.MODEL_DIR="$work/run_cfg" >"$work/op_train.gin" 2>&1 &&
      sed "s#$work/run_cfg#$work/run#" "$work/op_train.gin" | cmp -s - "$work/run/config.gin" &&
      pass=$((pass + 1)) ||
      { echo "FAIL config.gin differs from t5xx config"; failures=$((failures + 1)); }
    # A config written like t5x's examples runs unchanged (apart from paths).
    if "$T5XX" train --gin_file="$(dirname "$0")/testdata/t5x_style_pretrain.gin" \
         --gin.MODEL_DIR="$work/t5x_style" --data_dir="$work/data" >"$work/t5x_style.log" 2>&1 &&
       [ -f "$work/t5x_style/checkpoint_2/checkpoint" ] &&
       grep -q "^\[eval c4_demo_span_corruption\] step 2 " "$work/t5x_style.log" &&
       grep -q "^t5x.utils.DatasetConfig.batch_size\|^train_eval/t5x.utils.DatasetConfig.batch_size = 2$" \
         "$work/t5x_style/config.gin"; then
      pass=$((pass + 1))
    else
      echo "FAIL t5x-style config run:"; cat "$work/t5x_style.log"; failures=$((failures + 1))
    fi
    # Training on a gin mixture over the demo task (seqio's get_mixture_or_task).
    cat >"$work/demo_mix.gin" <<EOF
import seqio
demo_mix/seqio.Mixture:
  name = 'demo_mix'
  tasks = [('c4_demo_span_corruption', 1.0)]
t5xx.seqio.register.mixtures = [@demo_mix/seqio.Mixture()]
MIXTURE_OR_TASK_NAME = 'demo_mix'
EOF
    if "$T5XX" train "${demo[@]}" --gin_file="$work/demo_mix.gin" --data_dir="$work/data" \
         --gin.MODEL_DIR="$work/mixrun" --gin.TRAIN_STEPS=2 --gin.BATCH_SIZE=2 --gin.EVAL_STEPS=1 \
         >"$work/mix.log" 2>&1 && grep -q "task demo_mix;" "$work/mix.log" &&
       grep -q '^\[train\] step 2 ' "$work/mix.log"; then
      pass=$((pass + 1))
    else
      echo "FAIL train on a mixture:"; cat "$work/mix.log"; failures=$((failures + 1))
    fi
    # The decoder-only tiny model on the causal-LM demo task, with 2
    # microbatches and remat, then a run whose memory plan cannot fit.
    if "$T5XX" train --gin_file=examples/decoder_only_tiny_demo.gin --data_dir="$work/data" \
         --gin.MODEL_DIR="$work/lmrun" --gin.TRAIN_STEPS=3 --gin.BATCH_SIZE=4 --gin.EVAL_STEPS=1 \
         --gin.trainer.Trainer.num_microbatches=2 --gin.network.TransformerConfig.remat_policy=full \
         "--gin.TASK_FEATURE_LENGTHS={'targets': 32}" \
         --gin_bindings='__main__.train.stats_period = 1' >"$work/lm.log" 2>&1 &&
       grep -q "^\[setup\] DecoderOnlyModel, " "$work/lm.log" &&
       grep -q "^\[setup\] memory plan per process: parameters " "$work/lm.log" &&
       [ -f "$work/lmrun/checkpoint_3/target.decoder.layers_0.self_attention.query.kernel/.zarray" ]; then
      pass=$((pass + 1))
    else
      echo "FAIL decoder-only train run:"; cat "$work/lm.log"; failures=$((failures + 1))
    fi
    # model_info plans 8 devices on paper: every layout, ZeRO-3 8x1 among them.
    if "$T5XX" model_info --gin_file=examples/decoder_only_tiny_demo.gin --data_dir="$work/data" \
         --gin.MODEL_DIR="$work/mi" --num_devices=8 --device_memory_gib=1 >"$work/mi.log" 2>&1 &&
       grep -q "; 8 devices of 1.00 GiB; " "$work/mi.log" && grep -q "^8x1 (configured) " "$work/mi.log" &&
       grep -Eq "^ZeRO-3 8x1 +[0-9.]+ GiB  yes " "$work/mi.log" &&
       grep -Eq "^2x4 " "$work/mi.log" && [ ! -e "$work/mi" ]; then
      pass=$((pass + 1))
    else
      echo "FAIL model_info --num_devices:"; cat "$work/mi.log"; failures=$((failures + 1))
    fi
    expect_error model_info_devices "--num_devices must be an integer >= 1, got '0'" -- \
      "$T5XX" model_info --gin_file=examples/decoder_only_tiny_demo.gin --data_dir="$work/data" \
      --gin.MODEL_DIR="$work/mi" --num_devices=0
    expect_error memory_plan_too_big "lower train/utils.DatasetConfig.batch_size (BATCH_SIZE)" -- \
      "$T5XX" train --gin_file=examples/decoder_only_tiny_demo.gin --data_dir="$work/data" \
      --gin.MODEL_DIR="$work/hugerun" --gin.BATCH_SIZE=1000000 "--gin.TASK_FEATURE_LENGTHS={'targets': 4096}"
    expect_error microbatches_divide "does not divide the train batch size 4" -- \
      "$T5XX" train --gin_file=examples/decoder_only_tiny_demo.gin --data_dir="$work/data" \
      --gin.MODEL_DIR="$work/mbrun" --gin.BATCH_SIZE=4 --gin.trainer.Trainer.num_microbatches=3
    # Two runs with the same seed and dropout 0.1: bitwise-identical losses.
    for r in a b; do
      "$T5XX" train --gin_file=examples/decoder_only_tiny_demo.gin --data_dir="$work/data" \
        --gin.MODEL_DIR="$work/repro_$r" --gin.TRAIN_STEPS=3 --gin.BATCH_SIZE=4 --gin.EVAL_STEPS=1 \
        --gin.DROPOUT_RATE=0.1 "--gin.TASK_FEATURE_LENGTHS={'targets': 32}" \
        --gin_bindings='__main__.train.stats_period = 1' >"$work/repro_$r.log" 2>&1
      grep -o '"loss":[^,]*' "$work/repro_$r/train/metrics.jsonl" >"$work/repro_$r.loss" 2>/dev/null
    done
    if [ "$(wc -l <"$work/repro_a.loss")" = 3 ] && cmp -s "$work/repro_a.loss" "$work/repro_b.loss"; then
      pass=$((pass + 1))
    else
      echo "FAIL same-seed runs differ:"; paste "$work/repro_a.loss" "$work/repro_b.loss"; cat "$work/repro_a.log"
      failures=$((failures + 1))
    fi
    # t5xx data show / stats on the demo task.
    if "$T5XX" data show --task=c4_demo_span_corruption --data_dir="$work/data" --n=2 \
         --lengths=inputs=128,targets=32 --feature_converter=EncDecFeatureConverter --pack=true \
         >"$work/show.jsonl" 2>"$work/err" && [ "$(wc -l <"$work/show.jsonl")" = 2 ] &&
       grep -q '"encoder_input_tokens_text":' "$work/show.jsonl" &&
       "$T5XX" data stats --task=c4_demo_span_corruption --data_dir="$work/data" --max_examples=50 \
         --lengths=inputs=128,targets=32 >"$work/stats.json" 2>>"$work/err" &&
       grep -q '"examples": [1-9]' "$work/stats.json"; then
      pass=$((pass + 1))
    else
      echo "FAIL data show/stats:"; cat "$work/err" "$work/show.jsonl" "$work/stats.json"; failures=$((failures + 1))
    fi
    expect_error data_show_no_lengths "pass the task feature lengths" -- \
      "$T5XX" data show --task=c4_demo_span_corruption --data_dir="$work/data"
    cp "$work/run/config.gin" "$work/config.before"
    # The same command again resumes from checkpoint_3, which is already
    # TRAIN_STEPS: nothing to train (t5x does the same); config.gin unchanged.
    if "$T5XX" train "${demo[@]}" --data_dir="$work/data" --gin.TRAIN_STEPS=3 --gin.BATCH_SIZE=4 \
         --gin.EVAL_STEPS=1 --gin_bindings='__main__.train.stats_period = 1' \
         >"$work/rerun.log" 2>&1 &&
       grep -q "resuming from MODEL_DIR's latest checkpoint $work/run/checkpoint_3" "$work/rerun.log" &&
       grep -q "total steps and start step are both 3; no training" "$work/rerun.log" &&
       cmp -s "$work/run/config.gin" "$work/config.before"; then
      pass=$((pass + 1))
    else
      echo "FAIL rerun in the same MODEL_DIR:"; cat "$work/rerun.log"; failures=$((failures + 1))
    fi
  else
    echo "FAIL train run:"; cat "$work/train.log"; failures=$((failures + 1))
  fi
fi

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
