#!/usr/bin/env bash
# The inputs of issue 9 ("faults found by trying public t5x/seqio/gin bug
# reports"), each with its correct result, plus the other places of the same
# kinds. UTF-8 and blank-line inputs are in cli_test.sh.
# Usage: faults_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

# A small corpus and SentencePiece model (1000 pieces + 100 sentinels).
demo_corpus_or_exit
D=(--data_dir="$work/data")
small=(--gin.TRAIN_STEPS=2 --gin.BATCH_SIZE=2 --gin.EVAL_STEPS=1
       "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}")

# --- 1. A crash where an error belongs: an existing MODEL_DIR that is empty,
# or holds only unrelated files, is a valid place to train (was exit 139).
for kind in empty unrelated; do
  mkdir -p "$work/md_$kind"
  [ "$kind" = unrelated ] && echo notes >"$work/md_$kind/notes.txt"
  show="$work/md_$kind.log" check "train into an existing $kind MODEL_DIR" \
    bash -c '"$0" train --gin_file=examples/t5_1_1_tiny_demo.gin "${@}" >"'"$work/md_$kind.log"'" 2>&1 &&
             [ -f "'"$work/md_$kind"'/checkpoint_2/checkpoint" ]' \
    "$T5XX" "${D[@]}" "${small[@]}" --gin.MODEL_DIR="$work/md_$kind"
done
[ -f "$work/md_unrelated/notes.txt" ] && pass=$((pass + 1)) ||
  { echo "FAIL the unrelated file was removed"; failures=$((failures + 1)); }
# The same MODEL_DIR now holds a checkpoint: train resumes from it (as t5x
# does) and trains on to the new TRAIN_STEPS.
show="$work/md_resume.log" check "train resumes from MODEL_DIR's checkpoint" \
  bash -c '"$0" train --gin_file=examples/t5_1_1_tiny_demo.gin "${@}" >"'"$work/md_resume.log"'" 2>&1 &&
           grep -q "resuming from MODEL_DIR.s latest checkpoint .*checkpoint_2" "'"$work/md_resume.log"'" &&
           grep -q "^\[train\] step 3 of 3 " "'"$work/md_resume.log"'" &&
           [ -f "'"$work/md_empty"'/checkpoint_3/checkpoint" ]' \
  "$T5XX" "${D[@]}" "${small[@]}" --gin.TRAIN_STEPS=3 --gin.MODEL_DIR="$work/md_empty"

# --- 2. A data problem that ends a long run late. 300 short JSON-lines
# documents, document 150 of 200 words; targets length 16 with append_eos:
# the task trims it (seqio's trim_output_features) and training goes on.
python3 - "$work" <<'PYEOF'
import json, sys
words = "the cat sat on a mat and looked at the sky".split()
with open(sys.argv[1] + "/docs.jsonl", "w") as f:
    for i in range(300):
        n = 200 if i == 150 else 5
        f.write(json.dumps({"text": " ".join(words[j % len(words)] for j in range(i, i + n))}) + "\n")
PYEOF
cat >"$work/lm_task.gin" <<EOF
from __gin__ import dynamic_registration
import seqio
from seqio import preprocessors

VOCAB = @seqio.SentencePieceVocabulary()
lm/seqio.Task:
  name = 'jsonl_lm'
  source = @lm/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@lm/preprocessors.rekey, @preprocessors.tokenize, @preprocessors.append_eos]
  output_features = {'targets': @seqio.Feature()}
  shuffle_buffer_size = None
lm/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'train': '$work/docs.jsonl'}
lm/preprocessors.rekey.key_map = {'targets': 'text'}
lm/seqio.Feature.vocabulary = %VOCAB
t5xx.seqio.register.tasks = [@lm/seqio.Task()]
EOF
# lm_args TASK_GIN: the decoder-only run over a JSON-lines LM task.
lm_args() {
  lm=(--gin_file=models/decoder_only/tiny.gin --gin_file=runs/pretrain.gin
      --gin_file="$1" "${D[@]}" --gin.MIXTURE_OR_TASK_NAME=jsonl_lm
      "--gin.TASK_FEATURE_LENGTHS={'targets': 16}" --gin.BATCH_SIZE=32 --gin.DROPOUT_RATE=0.0
      --gin.network.TransformerConfig.vocab_size=1152
      --gin.seqio.SentencePieceVocabulary.sentencepiece_model_file=c4_demo/sentencepiece.model
      --gin.train.train_eval_dataset_cfg=None --gin.train/utils.DatasetConfig.shuffle=False)
}
lm_args "$work/lm_task.gin"
show="$work/lm.log" check "a long document in the middle is trimmed; 5 steps train" \
  bash -c '"$@" >"'"$work/lm.log"'" 2>&1 && grep -q "^\[done\] step 5 reached (trained 5 steps" "'"$work/lm.log"'" &&
           [ -f "'"$work/lmrun"'/checkpoint_5/checkpoint" ]' \
  _ "$T5XX" train "${lm[@]}" --gin.MODEL_DIR="$work/lmrun" --gin.TRAIN_STEPS=5
# Trimming equals seqio's v[:length]: document 150 at length 16 is the first
# 16 ids of document 150 untrimmed (and the EOS that append_eos added is cut).
spm=--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file=c4_demo/sentencepiece.model
"$T5XX" data show --gin_file="$work/lm_task.gin" "$spm" "${D[@]}" --task=jsonl_lm --n=151 \
  --lengths=targets=16 2>/dev/null | sed -n 151p >"$work/trim16.jsonl"
"$T5XX" data show --gin_file="$work/lm_task.gin" "$spm" "${D[@]}" --task=jsonl_lm --n=151 \
  --lengths=targets=100000 2>/dev/null | sed -n 151p >"$work/trim_none.jsonl"
show="$work/trim16.jsonl $work/trim_none.jsonl" check "trimmed document 150 = first 16 ids" \
  python3 -c '
import json, sys
a = json.loads(open(sys.argv[1]).read())["targets"]
b = json.loads(open(sys.argv[2]).read())["targets"]
assert len(b) > 100 and b[-1] == 1, len(b)
assert a == b[:16], (a, b[:16])
' "$work/trim16.jsonl" "$work/trim_none.jsonl"
# With utils.DatasetConfig.trim_output_features = False the long document is
# an error -- found part-way (the step depends on how many short documents
# pack into a row), after which the state of the last completed step is
# saved.
show="$work/notrim.err" check "trim_output_features=False: data error part-way saves the state" \
  bash -c '"$@" >/dev/null 2>"'"$work/notrim.err"'"; [ $? = 2 ] &&
           grep -q "LMFeatureConverter (task .jsonl_lm.) example 150: targets longer than its task feature length" "'"$work/notrim.err"'" &&
           step=$(grep -oE "training stopped at step [1-9][0-9]*, whose state was saved to .*checkpoint_[0-9]+$" "'"$work/notrim.err"'" | grep -oE "checkpoint_[0-9]+$") &&
           [ "$(grep -oE "stopped at step [0-9]+" "'"$work/notrim.err"'" | grep -oE "[0-9]+$")" = "${step#checkpoint_}" ] &&
           [ -f "'"$work/notrim"'/$step/checkpoint" ]' \
  _ "$T5XX" train "${lm[@]}" --gin.MODEL_DIR="$work/notrim" --gin.TRAIN_STEPS=6 \
  --gin.train/utils.DatasetConfig.trim_output_features=False
# The same kind, another cause: a malformed JSON line in the middle.
sed '150s/.*/{"text": "unterminated/' "$work/docs.jsonl" >"$work/bad_docs.jsonl"
sed "s#$work/docs.jsonl#$work/bad_docs.jsonl#" "$work/lm_task.gin" >"$work/bad_lm_task.gin"
lm_args "$work/bad_lm_task.gin"
show="$work/badline.err" check "malformed line part-way: error names file:line, state saved" \
  bash -c '"$@" >/dev/null 2>"'"$work/badline.err"'"; [ $? = 2 ] &&
           grep -q "bad_docs.jsonl:150: malformed JSON line" "'"$work/badline.err"'" &&
           grep -qE "training stopped at step [1-9][0-9]*, whose state was saved" "'"$work/badline.err"'" &&
           ls "'"$work/badline"'"/checkpoint_[1-9]*/checkpoint >/dev/null' \
  _ "$T5XX" train "${lm[@]}" --gin.MODEL_DIR="$work/badline" --gin.TRAIN_STEPS=6
lm_args "$work/lm_task.gin"

# Train-eval on a split smaller than one batch: repeated as t5x's
# .repeat().take(eval_steps) does, so EVAL_STEPS=2 full batches of 4 from 3
# documents (was refused: "yields no full batch").
head -3 "$work/docs.jsonl" >"$work/docs3.jsonl"
sed -e "s#{'train': '$work/docs.jsonl'}#{'train': '$work/docs.jsonl', 'validation': '$work/docs3.jsonl'}#" \
  "$work/lm_task.gin" >"$work/lm_eval_task.gin"
lm_args "$work/lm_eval_task.gin"
show="$work/small_eval.log" check "train-eval on 3 examples gives EVAL_STEPS full batches" \
  bash -c '"$@" >"'"$work/small_eval.log"'" 2>&1 && grep -q "^\[eval jsonl_lm\] step 1 .* 2 batches in" "'"$work/small_eval.log"'"' \
  _ "$T5XX" train "${lm[@]}" --gin.MODEL_DIR="$work/small_eval" --gin.TRAIN_STEPS=1 \
  --gin.BATCH_SIZE=4 --gin.EVAL_STEPS=2 '--gin.train.train_eval_dataset_cfg=@train_eval/utils.DatasetConfig()'
lm_args "$work/lm_task.gin"

# --- 3. `t5xx config` refuses what `t5xx train` refuses.
demo=(--gin_file=examples/t5_1_1_tiny_demo.gin "${D[@]}" --gin.MODEL_DIR="$work/never")
for cmd in config train; do
  expect_error "$cmd: zero length" "task feature length of 'inputs' must be >= 1, got 0" -- \
    "$T5XX" "$cmd" "${demo[@]}" "--gin.TASK_FEATURE_LENGTHS={'inputs': 0, 'targets': 8}"
  expect_error "$cmd: negative length" "task feature length of 'targets' must be >= 1, got -4" -- \
    "$T5XX" "$cmd" "${demo[@]}" "--gin.TASK_FEATURE_LENGTHS={'inputs': 8, 'targets': -4}"
  expect_error "$cmd: converter keys" "missing [inputs]" -- \
    "$T5XX" "$cmd" "${demo[@]}" "--gin.TASK_FEATURE_LENGTHS={'targets': 8}"
  expect_error "$cmd: vocabulary size" "set vocab_size to at least 1100" -- \
    "$T5XX" "$cmd" "${demo[@]}" --gin.network.T5Config.vocab_size=512
  expect_error "$cmd: split" "has no split 'test'" -- \
    "$T5XX" "$cmd" "${demo[@]}" --gin.train/utils.DatasetConfig.split=test
  expect_error "$cmd: microbatches" "does not divide the train batch size 32" -- \
    "$T5XX" "$cmd" "${demo[@]}" --gin.trainer.Trainer.num_microbatches=5
  expect_error "$cmd: shuffle" "forbids shuffling" -- \
    "$T5XX" "$cmd" "${lm[@]}" --gin.MODEL_DIR="$work/never" --gin.TRAIN_STEPS=1 \
    --gin.train/utils.DatasetConfig.shuffle=True
  expect_error "$cmd: data files" "file pattern '$work/nothing-*.jsonl' of split 'train' matches no file" -- \
    "$T5XX" "$cmd" "${lm[@]}" --gin.MODEL_DIR="$work/never" --gin.TRAIN_STEPS=1 \
    "--gin.lm/t5xx.seqio.JsonLinesDataSource.split_to_filepattern={'train': '$work/nothing-*.jsonl'}"
  expect_error "$cmd: loop periods" "must be multiples of each other" -- \
    "$T5XX" "$cmd" "${demo[@]}" --gin.EVAL_PERIOD=2 --gin.utils.SaveCheckpointConfig.period=3
done
[ ! -e "$work/never" ] && pass=$((pass + 1)) ||
  { echo "FAIL a refused run created MODEL_DIR"; failures=$((failures + 1)); }

# --- 4. gin's REQUIRED rule, as t5x runs gin (finalize_config=True, checked
# against gin-config 0.5.0): (a) a REQUIRED macro nothing reads is refused
# by train/config, as t5x refuses it; the data commands, which build no
# model, accept a model file's unset DROPOUT_RATE.
echo "SOME_UNUSED_SETTING = %gin.REQUIRED" >"$work/extra.gin"
expect_error "an unread REQUIRED macro is refused as t5x refuses it" \
  "extra.gin:1:1: macro 'SOME_UNUSED_SETTING' is %gin.REQUIRED and was never set (nothing this command calls reads it" -- \
  "$T5XX" config "${demo[@]}" --gin_file="$work/extra.gin"
show="$work/show_tiny.err" check "data show with a model file (DROPOUT_RATE unset, never read)" \
  bash -c '"$@" >/dev/null 2>"'"$work/show_tiny.err"'"' _ \
  "$T5XX" data show --gin_file=models/t5_1_1/tiny.gin --task=c4_demo_span_corruption "${D[@]}" \
  --n=1 --lengths=inputs=16,targets=8
# Issue 32: a run config's TASK_FEATURE_LENGTHS are data show's lengths
# (span corruption needs them); --lengths still overrides.
show="$work/show_lengths.err" check "data show takes a run config's TASK_FEATURE_LENGTHS" \
  bash -c '"$@" >"'"$work/show_lengths.out"'" 2>"'"$work/show_lengths.err"'" &&
           grep -q "note: using the config.s TASK_FEATURE_LENGTHS (--lengths=inputs=16,targets=8" "'"$work/show_lengths.err"'" &&
           test "$(wc -l <"'"$work/show_lengths.out"'")" = 1' _ \
  "$T5XX" data show --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 16, 'targets': 8}" --task=c4_demo_span_corruption "${D[@]}" --n=1
# ... and its MIXTURE_OR_TASK_NAME the task when --task is not given; an
# unset TASK_FEATURE_LENGTHS is said (examples not trimmed).
show="$work/show_task.err" check "data show takes a run config's MIXTURE_OR_TASK_NAME" \
  bash -c '"$@" >"'"$work/show_task.out"'" 2>"'"$work/show_task.err"'" &&
           grep -q "note: using the config.s MIXTURE_OR_TASK_NAME (--task=c4_demo_span_corruption;" "'"$work/show_task.err"'" &&
           test "$(wc -l <"'"$work/show_task.out"'")" = 1' _ \
  "$T5XX" data show --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin \
  "--gin.TASK_FEATURE_LENGTHS={'inputs': 16, 'targets': 8}" \
  "--gin.MIXTURE_OR_TASK_NAME='c4_demo_span_corruption'" "${D[@]}" --n=1
# (full_lm then asks for --lengths itself.)
show="$work/show_req.err" check "data show says an unset TASK_FEATURE_LENGTHS" \
  bash -c '"$@" >/dev/null 2>"'"$work/show_req.err"'";
           grep -q "note: the config.s TASK_FEATURE_LENGTHS is %gin.REQUIRED and unset: examples are not trimmed" "'"$work/show_req.err"'"' _ \
  "$T5XX" data show --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin \
  --task=c4_demo_full_lm "${D[@]}" --n=1
# (b) Binding errors and REQUIRED macros: every one, in one message, binding
# errors first.
"$T5XX" config --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin \
  --gin.network.T5Config.emb_dimm=3 --gin.TRAIN_STEPS="'x'" --gin.MODEL_DIR="$work/never" \
  >/dev/null 2>"$work/all.err"; rc=$?
show="$work/all.err" check "every config error at once" python3 -c '
import sys
rc, text = int(sys.argv[1]), open(sys.argv[2]).read()
assert rc == 2, rc
lines = text.splitlines()
assert lines[0] == "t5xx: error: 3 errors in the gin config:", lines[0]
assert "expected an int for __main__.train.total_steps" in lines[1], lines[1]
assert "unknown parameter '"'"'emb_dimm'"'"'" in lines[2] and "did you mean '"'"'emb_dim'"'"'" in lines[2], lines[2]
# In definition order: base.gin (DROPOUT_RATE), then pretrain.gin.
assert "macros '"'"'DROPOUT_RATE'"'"', '"'"'MIXTURE_OR_TASK_NAME'"'"', '"'"'TASK_FEATURE_LENGTHS'"'"' are %gin.REQUIRED" in lines[3], lines[3]
assert len(lines) == 4
' "$rc" "$work/all.err"
# A scope the run never calls (train_eval when train_eval_dataset_cfg is
# None) is ignored as gin does, not an unread-binding error.
show="$work/noeval.err" check "bindings of an uncalled scope are ignored" \
  bash -c '"$@" >/dev/null 2>"'"$work/noeval.err"'" &&
           grep -q "note: bindings of configurables .* are ignored, as gin does: train_eval/t5x.utils.DatasetConfig (9 bindings, first at .*runs/pretrain.gin:72)$" "'"$work/noeval.err"'"' \
  _ "$T5XX" config "${demo[@]}" --gin.train.train_eval_dataset_cfg=None

# Scopes as gin-config's ConfigurableReference sets them (checked against
# gin-config 0.5.0 by tests/config/gin_oracle_test.py): an unscoped @x()
# evaluated inside @t/seqio.Task() runs in scope t, so t/ bindings reach the
# source; a scoped @targets/seqio.Feature() runs in exactly 'targets' (not
# t/targets), so targets/ bindings reach it; a callable @x the task calls
# later runs at top level unless its reference names a scope (@t/...).
printf '{"ids": [5, 6]}\n' >"$work/ids.jsonl"
cat >"$work/scope_nest.gin" <<EOF
import seqio
from seqio import preprocessors
seqio.PassThroughVocabulary.size = 1000
t/seqio.Task:
  name = 'scoped_src'
  source = @t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@t/preprocessors.rekey]
  output_features = {'targets': @targets/seqio.Feature()}
t/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'train': '$work/ids.jsonl'}
t/preprocessors.rekey.key_map = {'targets': 'ids'}
targets/seqio.Feature.vocabulary = @seqio.PassThroughVocabulary()
t5xx.seqio.register.tasks = [@t/seqio.Task()]
EOF
show="$work/nest.out" check "scopes as gin sets them (scoped references replace the scope)" bash -c \
  '"$@" >"'"$work/nest.out"'" 2>&1 && grep -qx "{\"targets\":\[5,6\],\"targets_text\":\"5 6\"}" "'"$work/nest.out"'"' \
  _ "$T5XX" data show --gin_file="$work/scope_nest.gin" --task=scoped_src

# --- 5. An error inside a preprocessor names the task, the step (name and
# where it was bound) and the example: span corruption before tokenization.
cat >"$work/sc_task.gin" <<EOF
from __gin__ import dynamic_registration
import seqio
from seqio import preprocessors

VOCAB = @seqio.SentencePieceVocabulary()
seqio.SentencePieceVocabulary.sentencepiece_model_file = 'c4_demo/sentencepiece.model'
sc/seqio.Task:
  name = 'sc_before_tokenize'
  source = @sc/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [
      @sc/preprocessors.rekey,
      @t5.data.preprocessors.span_corruption,
      @preprocessors.tokenize,
      @preprocessors.append_eos_after_trim,
  ]
  output_features = {'inputs': @seqio.Feature(), 'targets': @seqio.Feature()}
sc/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'train': '$work/docs.jsonl'}
sc/preprocessors.rekey.key_map = {'inputs': None, 'targets': 'text'}
seqio.Feature.vocabulary = %VOCAB
t5xx.seqio.register.tasks = [@sc/seqio.Task()]
EOF
expect_error "preprocessor error names task, step, file:line, example" \
  "task 'sc_before_tokenize', preprocessor 1 (t5.data.preprocessors.span_corruption, bound at $work/sc_task.gin:12:7), example 0: feature 'targets' is a string" -- \
  "$T5XX" data show --gin_file="$work/sc_task.gin" --task=sc_before_tokenize "${D[@]}" \
  --lengths=inputs=32,targets=8
expect_error "same, in train (named with the dataset)" \
  "task 'sc_before_tokenize', preprocessor 1 (t5.data.preprocessors.span_corruption, bound at" -- \
  "$T5XX" train --gin_file=examples/t5_1_1_tiny_demo.gin --gin_file="$work/sc_task.gin" "${D[@]}" \
  "${small[@]}" --gin.MODEL_DIR="$work/never" --gin.MIXTURE_OR_TASK_NAME=sc_before_tokenize \
  --gin.train.train_eval_dataset_cfg=None --gin.train/utils.DatasetConfig.shuffle=False

# --- 7. seqio's sample_fn is reachable from gin: a 3-example and a
# 1000-example task at equal rates. seqio's default stops when the small
# task runs dry; sample_from_datasets(stop_on_empty_dataset=False) keeps
# sampling the other task: 1003 examples.
python3 - "$work" <<'PYEOF'
import sys
w = sys.argv[1]
open(w + "/three.jsonl", "w").write("".join('{"ids": [%d]}\n' % (5 + i) for i in range(3)))
open(w + "/thousand.jsonl", "w").write("".join('{"ids": [%d]}\n' % (10 + i % 900) for i in range(1000)))
PYEOF
cat >"$work/mix.gin" <<EOF
import seqio
from seqio import preprocessors
seqio.PassThroughVocabulary.size = 1000
seqio.Feature.vocabulary = @seqio.PassThroughVocabulary()
preprocessors.rekey.key_map = {'targets': 'ids'}
small/seqio.Task:
  name = 'three'
  source = @small/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@preprocessors.rekey]
  output_features = {'targets': @seqio.Feature()}
small/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'train': '$work/three.jsonl'}
big/seqio.Task:
  name = 'thousand'
  source = @big/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@preprocessors.rekey]
  output_features = {'targets': @seqio.Feature()}
big/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'train': '$work/thousand.jsonl'}
stop/seqio.Mixture:
  name = 'mix_stop'
  tasks = ['three', 'thousand']
  default_rate = 1.0
keep/seqio.Mixture:
  name = 'mix_keep'
  tasks = ['three', 'thousand']
  default_rate = 1.0
  sample_fn = @tf.data.Dataset.sample_from_datasets
t5xx.seqio.register:
  tasks = [@small/seqio.Task(), @big/seqio.Task()]
  mixtures = [@stop/seqio.Mixture(), @keep/seqio.Mixture()]
EOF
"$T5XX" data stats --gin_file="$work/mix.gin" --task=mix_keep --split=train --max_examples=5000 \
  >"$work/keep.json" 2>"$work/mix.err"
"$T5XX" data stats --gin_file="$work/mix.gin" --task=mix_stop --split=train --max_examples=5000 \
  >"$work/stop.json" 2>>"$work/mix.err"
show="$work/keep.json $work/stop.json $work/mix.err" check "Mixture sample_fn from gin" python3 -c '
import json, sys
keep, stop = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert keep["examples"] == 1003, keep["examples"]
assert 3 <= stop["examples"] < 100, stop["examples"]
' "$work/keep.json" "$work/stop.json"
expect_error "sample_fn must be sample_from_datasets" "is not a sample_fn" -- \
  "$T5XX" data stats --gin_file="$work/mix.gin" --task=mix_keep --split=train \
  "--gin_bindings=keep/seqio.Mixture.sample_fn = @seqio.Feature"

# --- Other places of the same kinds that the audit found.
# Kind 1: absurd sizes give an error, never a wrap-around, a hang or an
# allocator's internal error.
expect_error "huge batch: memory plan, no wrap-around" "the memory plan needs" -- \
  timeout 60 "$T5XX" train "${demo[@]}" --gin.BATCH_SIZE=9223372036854775807
expect_error "huge vocab_size" "network.T5Config.vocab_size = 100000000000 is too large (at most 2147483647)" -- \
  timeout 60 "$T5XX" config "${demo[@]}" --gin.network.T5Config.vocab_size=100000000000
expect_error "huge length" "task feature length of 'inputs' is 99999999999, more than 2^31 - 1" -- \
  timeout 60 "$T5XX" config "${demo[@]}" "--gin.TASK_FEATURE_LENGTHS={'inputs': 99999999999, 'targets': 8}"
show="$work/bigmodel.err" check "config notes a model this machine cannot hold; train refuses it" \
  bash -c '"$0" config "$@" >/dev/null 2>"'"$work/bigmodel.err"'" &&
           grep -q "^t5xx: note: on this machine .t5xx train. would refuse this run: the memory plan needs" "'"$work/bigmodel.err"'" &&
           ! "$0" train "$@" >/dev/null 2>&1' \
  "$T5XX" "${demo[@]}" --gin.network.T5Config.mlp_dim=10000000
# Kind 1: paths that are directories (or FIFOs) are named as such.
mkdir -p "$work/spdir" "$work/gl/b.jsonl"
expect_error "SentencePiece model that is a directory" "SentencePiece model file is a directory" -- \
  "$T5XX" data show --gin_file="$work/lm_task.gin" "${D[@]}" --task=jsonl_lm --n=1 --lengths=targets=8 \
  --gin.seqio.SentencePieceVocabulary.sentencepiece_model_file="$work/spdir"
expect_error "gin file that is a directory" "$work/spdir is a directory" -- \
  "$T5XX" config --gin_file="$work/spdir"
expect_error "predictions file that is a directory" "--predictions: predictions file '$work/spdir' is a directory" -- \
  "$T5XX" data score --gin_file="$work/lm_task.gin" "$spm" "${D[@]}" --task=jsonl_lm --split=train \
  --predictions="$work/spdir"
cp "$work/ids.jsonl" "$work/gl/a.jsonl"
sed "s#'$work/ids.jsonl'#'$work/gl/*.jsonl'#" "$work/scope_nest.gin" >"$work/glob_dir.gin"
expect_error "glob matching a directory" "matches '$work/gl/b.jsonl', which is a directory" -- \
  "$T5XX" data stats --gin_file="$work/glob_dir.gin" --task=scoped_src --split=train
# Kind 1: bytes that are not UTF-8 in a message are escaped.
expect_error "non-UTF-8 task name is escaped" "no mixture or task named 'f\\xffl'" -- \
  "$T5XX" data show --task=$'f\xffl' "${D[@]}"
# Kind 2: a JSON field of an unsupported type is an error at file:line.
printf '{"ids": [1.5]}\n' >"$work/float.jsonl"
sed "s#'$work/ids.jsonl'#'$work/float.jsonl'#" "$work/scope_nest.gin" >"$work/float.gin"
expect_error "unsupported JSON value" "float.jsonl:1: field 'ids' is [1.5], neither a string nor an array of int32 token ids" -- \
  "$T5XX" data show --gin_file="$work/float.gin" --task=scoped_src
# Kind 3: MODEL_DIR under a file cannot be created: config says so too.
expect_error "MODEL_DIR under a file" "cannot be created: '$work/docs.jsonl' is a file" -- \
  "$T5XX" config --gin_file=examples/t5_1_1_tiny_demo.gin "${D[@]}" --gin.MODEL_DIR="$work/docs.jsonl/sub"
# Kind 5: values that used to wrap around or say nothing.
expect_error "int32 parameter out of range" "extra_ids must be in [0, 2147483647], got 9223372036854775807" -- \
  "$T5XX" data show --gin_file="$work/sc_task.gin" --task=sc_before_tokenize "${D[@]}" \
  --lengths=inputs=32,targets=8 --gin.seqio.SentencePieceVocabulary.extra_ids=9223372036854775807
expect_error "flag value that is not gin" "the flag's value is not gin: --gin.TRAIN_STEPS flag, column 1: number '99999999999999999999' is out of range" -- \
  "$T5XX" config "${demo[@]}" --gin.TRAIN_STEPS=99999999999999999999
expect_error "label_smoothing range" "must be in [0, 1)" -- \
  "$T5XX" config "${demo[@]}" --gin.t5x.models.EncoderDecoderModel.label_smoothing=2.0
sed 's#preprocessors = \[@t/preprocessors.rekey\]#preprocessors = [@t/preprocessors.rekey, @preprocessors.append_eos]#' \
  "$work/scope_nest.gin" >"$work/no_eos.gin"
expect_error "append_eos without an EOS id" "the vocabulary of output feature 'targets' has no EOS id" -- \
  "$T5XX" data show --gin_file="$work/no_eos.gin" --task=scoped_src
expect_error "--lengths names a key twice" "--lengths names 'targets' twice" -- \
  "$T5XX" data show --gin_file="$work/scope_nest.gin" --task=scoped_src --lengths=targets=8,targets=9
# Kind 7: the Decoder and PassThrough converters are reachable from data
# show (seqio's PassThroughFeatureConverter changes nothing).
show="$work/pt.out" check "data show --feature_converter=PassThroughFeatureConverter" bash -c \
  '"$@" >"'"$work/pt.out"'" 2>&1 && grep -qx "{\"targets\":\[5,6\],\"targets_text\":\"5 6\"}" "'"$work/pt.out"'"' \
  _ "$T5XX" data show --gin_file="$work/scope_nest.gin" --task=scoped_src \
  --feature_converter=PassThroughFeatureConverter --lengths=targets=4

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
