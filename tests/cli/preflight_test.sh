#!/usr/bin/env bash
# Issue 32: `t5xx config` refuses what `t5xx train` refuses before its first
# step. One table: each row changes one setting of a configuration that
# trains (checked first), and both commands must exit 2 with the same error
# text (run/validation.h and run/preflight.h: the same functions). Not in
# the table, by design: the memory plan's verdict (config prints it as a
# note: a configuration may be meant for another machine), joining the other
# processes of a launch, and fitting a checkpoint's arrays to the model.
# Usage: preflight_test.sh T5XX
set -u
T5XX="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$here/cli_lib.sh"

spm="$root/tests/testdata/seqio_cache/vocab/interop_upper.model"
for i in 1 2 3 4 5 6 7 8; do echo "{\"text\": \"THE QUICK BROWN FOX $i\"}"; done >"$work/data.jsonl"
: >"$work/empty.jsonl"
printf '{"text": "THE FOX"}\n{"txet": "A TYPO"}\n' >"$work/bad.jsonl"
cat >"$work/task.gin" <<EOF2
import seqio
import t5xx.seqio
from seqio import preprocessors
PF_TRAIN = '$work/data.jsonl'
PF_VALIDATION = '$work/data.jsonl'
pf/seqio.Task:
  name = 'pf_task'
  source = @t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@pf/preprocessors.rekey, @preprocessors.tokenize, @preprocessors.append_eos]
  output_features = {'inputs': @seqio.Feature(), 'targets': @seqio.Feature()}
seqio.Feature.vocabulary = @seqio.SentencePieceVocabulary()
pf/preprocessors.rekey.key_map = {'inputs': 'text', 'targets': 'text'}
pf/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'train': %PF_TRAIN, 'validation': %PF_VALIDATION}
pf_cached/seqio.Task:
  name = 'pf_cached_task'
  source = @t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@pf/preprocessors.rekey, @preprocessors.tokenize, @seqio.CacheDatasetPlaceholder(), @preprocessors.append_eos]
  output_features = {'inputs': @seqio.Feature(), 'targets': @seqio.Feature()}
pf_cached/preprocessors.rekey.key_map = {'inputs': 'text', 'targets': 'text'}
pf_cached/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'train': %PF_TRAIN, 'validation': %PF_VALIDATION}
pf_mix/seqio.Mixture:
  name = 'pf_mix'
  tasks = ['pf_task']
  default_rate = @seqio.mixing_rate_num_examples
t5xx.seqio.register.tasks = [@pf/seqio.Task(), @pf_cached/seqio.Task()]
t5xx.seqio.register.mixtures = [@pf_mix/seqio.Mixture()]
EOF2
base=(--gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin --gin_file="$work/task.gin"
      --gin.MIXTURE_OR_TASK_NAME="'pf_task'" "--gin.TASK_FEATURE_LENGTHS={'inputs': 16, 'targets': 16}"
      --gin.TRAIN_STEPS=1 --gin.DROPOUT_RATE=0.0 --gin.USE_CACHED_TASKS=False --gin.BATCH_SIZE=2
      --gin.train.eval_period=1 --gin.train.eval_steps=1
      --gin.seqio.SentencePieceVocabulary.sentencepiece_model_file="'$spm'")

# The configuration trains (so each row's error is the row's own).
show="$work/base.log" check "the base configuration trains" bash -c \
  '"$@" >"'"$work/base.log"'" 2>&1' _ "$T5XX" train "${base[@]}" --gin.MODEL_DIR="'$work/base'"

# The error of a command, as one line: "t5xx: error: ..." and its indented lines.
error_of() { "$@" 2>&1 >/dev/null | grep -v '^t5xx: note: ' | tr '\n' ' '; return "${PIPESTATUS[0]}"; }
n=0
row() {  # row NAME SUBSTRING -- extra args...
  local name="$1" want="$2"; shift 3
  n=$((n + 1))
  local c t rc_c rc_t
  c="$(error_of "$T5XX" config "${base[@]}" --gin.MODEL_DIR="'$work/m$n'" "$@")"; rc_c=$?
  t="$(error_of "$T5XX" train "${base[@]}" --gin.MODEL_DIR="'$work/m$n'" "$@")"; rc_t=$?
  if [ "$rc_c" = 2 ] && [ "$rc_t" = 2 ] && [ "$c" = "$t" ] && grep -qF -- "$want" <<<"$c"; then
    pass=$((pass + 1))
  else
    echo "FAIL $name: config rc=$rc_c, train rc=$rc_t (want 2, the same error, containing: $want)"
    echo "  config: $c"; echo "  train:  $t"; failures=$((failures + 1))
  fi
}

# name | what train says | the change
row mixture_rated_by_uncached_tasks "cache_tasks" -- --gin.MIXTURE_OR_TASK_NAME="'pf_mix'"
row unknown_task "'pf_tsak'" -- --gin.MIXTURE_OR_TASK_NAME="'pf_tsak'"
row use_cached_without_a_cache "cache_tasks" -- --gin.USE_CACHED_TASKS=True \
  --gin.MIXTURE_OR_TASK_NAME="'pf_cached_task'"
row zero_length "inputs" -- "--gin.TASK_FEATURE_LENGTHS={'inputs': 0, 'targets': 16}"
row vocab_size_too_small "vocab_size" -- --gin.network.T5Config.vocab_size=8
row microbatches_do_not_divide "num_microbatches" -- --gin.trainer.Trainer.num_microbatches=3
row num_partitions_over_processes "num_partitions" -- --gin.partitioning.PjitPartitioner.num_partitions=3
row empty_train_split "yields no full batch" -- --gin.PF_TRAIN="'$work/empty.jsonl'"
row empty_train_eval_split "train.train_eval_dataset_cfg = None" -- --gin.PF_VALIDATION="'$work/empty.jsonl'"
row bad_record_in_the_first_batch "example has no feature 'text'" -- --gin.PF_TRAIN="'$work/bad.jsonl'"
row missing_restore_checkpoint "$work/nowhere" -- --gin.utils.RestoreCheckpointConfig.path="'$work/nowhere/checkpoint_1'" \
  --gin.utils.CheckpointConfig.restore=@utils.RestoreCheckpointConfig\(\)
row eval_period_negative "eval_period" -- --gin.train.eval_period=-1
row unset_required_macro "TRAIN_STEPS" -- --gin.TRAIN_STEPS=%gin.REQUIRED
row unknown_parameter "emb_dimm" -- --gin.network.T5Config.emb_dimm=8

echo "$pass passed, $failures failed ($n rows)"
[ "$failures" = 0 ]
