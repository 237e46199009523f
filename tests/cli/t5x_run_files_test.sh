#!/usr/bin/env bash
# Issue 32: t5x's own gin files, unmodified, from a t5x checkout.
#  1. `t5xx config` accepts runs/pretrain.gin, finetune.gin, eval.gin and
#     infer.gin with examples/t5/t5_1_1/small.gin and with
#     examples/decoder_only/models/base.gin, binding only macros and the
#     vocabulary file (the task is ours: t5x's come from Python modules).
#  2. Every gin file of the checkout parses (syntax and includes), but for
#     includes of files the checkout itself lacks (t5x's umt5 files include
#     runs/pretrain_deterministic.gin, absent at the pinned commit).
# The checkout: $T5X_DIR, else ../shared/t5x beside this checkout, else
# ~/.cache/t5xx/t5x (scripts/setup.sh --test fetches it there). Without one
# the test prints SKIP with the reason and exits 77.
# Usage: t5x_run_files_test.sh T5XX GIN_CALLS_TOOL
set -u
T5XX="$1"
TOOL="$2"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/t5x_checkout.sh"  # sets $t5x, or SKIP (77)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$here/cli_lib.sh"
echo "t5x checkout: $t5x"

# Our task, in the shape t5x's pretrain/finetune/eval/infer read, over the
# test SentencePiece model (the model's vocabulary is bound to the same file).
spm="$root/tests/testdata/seqio_cache/vocab/interop_upper.model"
for i in 1 2 3 4 5 6 7 8; do echo "{\"text\": \"THE QUICK BROWN FOX $i\"}"; done >"$work/data.jsonl"
cat >"$work/task.gin" <<EOF2
import seqio
import t5xx.seqio
from seqio import preprocessors
files/seqio.Task:
  name = 't5x_files_task'
  source = @t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@files/preprocessors.rekey, @preprocessors.tokenize, @preprocessors.append_eos]
  output_features = {'inputs': @seqio.Feature(), 'targets': @seqio.Feature()}
seqio.Feature.vocabulary = @seqio.SentencePieceVocabulary()
files/preprocessors.rekey.key_map = {'inputs': 'text', 'targets': 'text'}
files/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {
    'train': '$work/data.jsonl', 'validation': '$work/data.jsonl', 'test': '$work/data.jsonl'}
t5xx.seqio.register.tasks = [@files/seqio.Task()]
EOF2
ckpt="$root/tests/testdata/t5x_checkpoint/checkpoint_2"  # written by t5x's Checkpointer
common=(--gin_search_paths="$t5x" --gin_file="$work/task.gin"
        --gin.MIXTURE_OR_TASK_NAME="'t5x_files_task'"
        "--gin.TASK_FEATURE_LENGTHS={'inputs': 16, 'targets': 16}" --gin.DROPOUT_RATE=0.0
        --gin.seqio.SentencePieceVocabulary.sentencepiece_model_file="'$spm'")
for model in t5x/examples/t5/t5_1_1/small.gin t5x/examples/decoder_only/models/base.gin; do
  for run in pretrain finetune eval infer; do
    case $run in
      pretrain) extra=(--gin.MODEL_DIR="'$work/m_pretrain'" --gin.TRAIN_STEPS=10 --gin.USE_CACHED_TASKS=False) ;;
      finetune) extra=(--gin.MODEL_DIR="'$work/m_finetune'" --gin.TRAIN_STEPS=10 --gin.USE_CACHED_TASKS=False
                       --gin.INITIAL_CHECKPOINT_PATH="'$ckpt'") ;;
      eval) extra=(--gin.CHECKPOINT_PATH="'$ckpt'" --gin.EVAL_OUTPUT_DIR="'$work/eval'") ;;
      infer) extra=(--gin.CHECKPOINT_PATH="'$ckpt'" --gin.INFER_OUTPUT_DIR="'$work/infer'") ;;
    esac
    out="$work/$run.$(basename "$(dirname "$model")").out"
    show="$out.err" check "t5xx config: $model + runs/$run.gin" \
      bash -c '"$@" >"'"$out"'" 2>"'"$out.err"'"' _ \
      "$T5XX" config --gin_file="$model" --gin_file="t5x/configs/runs/$run.gin" "${common[@]}" "${extra[@]}"
  done
done
# What the run files say, as t5x reads them: pretrain.gin's path = [] is no
# restore; small.gin's network overrides reach the model (called in scope
# MODEL, as gin calls %MODEL's value); eval/infer read their own entry point.
show="$work/pretrain.t5_1_1.out" check "pretrain.gin: path = [] restores nothing; small.gin's emb_dim" \
  grep -qx "MODEL/t5x.examples.t5.network.T5Config.emb_dim = 512" "$work/pretrain.t5_1_1.out"
show="$work/infer.t5_1_1.out" check "infer.gin configures __main__.infer" \
  grep -qx "__main__.infer.mode = 'predict'" "$work/infer.t5_1_1.out"
[ ! -e "$work/m_pretrain" ] && [ ! -e "$work/infer" ] && pass=$((pass + 1)) ||
  { echo "FAIL t5xx config wrote a directory"; failures=$((failures + 1)); }

# Every gin file of the checkout parses.
(cd "$t5x" && "$TOOL" --registry=t5xx --search_path="$t5x" --parse $(find t5x -name '*.gin' | sort)) >"$work/parse.txt"
total=$(wc -l <"$work/parse.txt")
bad=$(grep '^error' "$work/parse.txt" | grep -v "included file 't5x/configs/runs/pretrain_deterministic.gin' not found")
show="$work/parse.txt" check "every t5x gin file parses ($total files)" test -z "$bad" -a "$total" -gt 100
echo "$(grep -c '^ok' "$work/parse.txt") of $total t5x gin files parse; the rest include a file the checkout lacks"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
