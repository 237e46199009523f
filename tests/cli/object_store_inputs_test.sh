#!/usr/bin/env bash
# gs:// and s3:// inputs end to end, on moto's S3 server and
# gcp-storage-emulator started here (tests/storage/stores_lib.sh): `t5xx
# infer` with CHECKPOINT_PATH in a bucket writes the predictions it writes
# from the same checkpoint on disk (for s3:// and gs://, each through a
# fresh object cache; the model gin's vocabulary names the bucket too, which
# `infer` reads for its checks); a checkpoint replaced in the bucket by
# another of the same size is fetched again; a checkpoint that is not in
# the bucket is named. Outputs in buckets, from inputs in buckets:
# finetuning (MODEL_DIR and INITIAL_CHECKPOINT_PATH on s3://), infer,
# eval, cache_tasks, export and import write there what they write locally;
# --tfds_data_dir on gs:// reads what the local directory gives
# (and no local folder named "s3:" or "gs:"). The kill -9 / fault-proxy
# runs of a bucket's MODEL_DIR: object_store_model_dir_test.sh. Skips (77)
# without the venv's servers or the demo translation data.
# Usage: object_store_inputs_test.sh T5XX
set -u
T5XX="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$here/cli_lib.sh"
. "$here/../storage/stores_lib.sh"  # $s3, $gcs, upload(); skips without the venv
t5xx() { timeout -k 5 300 "$T5XX" "$@"; }
demo_corpus_or_exit
if ! compgen -G "$work/data/freedict_en_de/*validation*" >/dev/null; then
  echo "SKIP: the demo translation data was not built (dict-freedict-eng-deu missing?)"; exit 77
fi
TASK=freedict_en_de_translate
LENS="{'inputs': 24, 'targets': 12}"
model=(--gin_file=models/t5_1_1/tiny.gin --gin.network.T5Config.vocab_size=1152
       --gin.seqio.SentencePieceVocabulary.extra_ids=100 --data_dir="$work/data")
t5xx train "${model[@]}" "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin_file=runs/finetune.gin --gin.MODEL_DIR="'$work/run'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.TRAIN_STEPS=2 \
  --gin.BATCH_SIZE=4 --gin.EVAL_PERIOD=2 --gin.USE_CACHED_TASKS=False \
  --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None \
  --gin.EVALUATOR_NUM_EXAMPLES=4 --gin.RANDOM_SEED=1 >"$work/train.log" 2>&1
show="$work/train.log" check "train 2 steps locally" test -f "$work/run/checkpoint_2/checkpoint"
upload s3 "$work/run/checkpoint_2" runs/a/checkpoint_2
upload gs "$work/run/checkpoint_2" runs/a/checkpoint_2
mkdir -p "$work/vocab" && cp "$work/data/c4_demo/sentencepiece.model" "$work/vocab/"
upload s3 "$work/vocab" vocabs/demo
upload gs "$work/vocab" vocabs/demo

infer() {  # OUT CHECKPOINT VOCABULARY [env...]
  local out="$1" ckpt="$2" vocab="$3"; shift 3
  env T5XX_OBJECT_CACHE="$work/cache.$(basename "$out")" "$@" timeout 300 "$T5XX" infer "${model[@]}" \
    "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='$vocab'" \
    --gin_file=runs/infer.gin --gin.CHECKPOINT_PATH="'$ckpt'" --gin.MIXTURE_OR_TASK_NAME="'$TASK'" \
    "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.utils.DatasetConfig.split="'validation'" \
    --gin.utils.DatasetConfig.batch_size=4 --gin.INFER_OUTPUT_DIR="'$out'" >"$out.log" 2>&1
}
pred="$TASK-predict.jsonl-00000-of-00001"
infer "$work/local" "$work/run/checkpoint_2" "$work/data/c4_demo/sentencepiece.model"
show="$work/local.log" check "infer from the local checkpoint" test -s "$work/local/$pred"
infer "$work/s3" s3://t5xx-test/runs/a/checkpoint_2 s3://t5xx-test/vocabs/demo/sentencepiece.model \
  AWS_ENDPOINT_URL="http://127.0.0.1:$s3"
show="$work/s3.log" check "infer from an s3:// checkpoint writes the same predictions" \
  cmp "$work/local/$pred" "$work/s3/$pred"
infer "$work/gs" gs://t5xx-test/runs/a/checkpoint_2 gs://t5xx-test/vocabs/demo/sentencepiece.model \
  STORAGE_EMULATOR_HOST="http://127.0.0.1:$gcs"
show="$work/gs.log" check "infer from a gs:// checkpoint writes the same predictions" \
  cmp "$work/local/$pred" "$work/gs/$pred"

# A checkpoint replaced in the bucket by one of the same size (another
# seed): the cache notices (ETag) and infer predicts from the new one.
t5xx train "${model[@]}" "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin_file=runs/finetune.gin --gin.MODEL_DIR="'$work/run7'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.TRAIN_STEPS=2 \
  --gin.BATCH_SIZE=4 --gin.EVAL_PERIOD=2 --gin.USE_CACHED_TASKS=False \
  --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None \
  --gin.EVALUATOR_NUM_EXAMPLES=4 --gin.RANDOM_SEED=7 >"$work/train7.log" 2>&1
infer "$work/local7" "$work/run7/checkpoint_2" "$work/data/c4_demo/sentencepiece.model"
upload s3 "$work/run7/checkpoint_2" runs/a/checkpoint_2
cp -r "$work/cache.s3" "$work/cache.s3b"
infer "$work/s3b" s3://t5xx-test/runs/a/checkpoint_2 s3://t5xx-test/vocabs/demo/sentencepiece.model \
  AWS_ENDPOINT_URL="http://127.0.0.1:$s3"
show="$work/s3b.log" check "a checkpoint replaced in the bucket is fetched again (same sizes, new ETags)" \
  bash -c '! diff -rq "$0" "$1" >/dev/null && diff -r "$1" "$2" && cmp "$3" "$4"' \
  "$work/run/checkpoint_2" "$work/run7/checkpoint_2" "$work/cache.s3b/s3/t5xx-test/runs/a/checkpoint_2" \
  "$work/local7/$pred" "$work/s3b/$pred"

expect_error "a checkpoint the bucket lacks is named" \
  "s3://t5xx-test/runs/a/checkpoint_4" -- \
  env AWS_ENDPOINT_URL="http://127.0.0.1:$s3" T5XX_OBJECT_CACHE="$work/cache.x" "$T5XX" infer "${model[@]}" \
  --gin_file=runs/infer.gin --gin.CHECKPOINT_PATH="'s3://t5xx-test/runs/a/checkpoint_4'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" \
  --gin.INFER_OUTPUT_DIR="'$work/x'"
# Outputs in a bucket, from inputs in a bucket: finetuning with MODEL_DIR
# and INITIAL_CHECKPOINT_PATH on s3://; infer, eval, cache_tasks, export
# and import writing to a bucket what they write locally.
cd "$work"
export AWS_ENDPOINT_URL="http://127.0.0.1:$s3" STORAGE_EMULATOR_HOST="http://127.0.0.1:$gcs"
export T5XX_OBJECT_CACHE="$work/cache.out"
t5xx train "${model[@]}" "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='s3://t5xx-test/vocabs/demo/sentencepiece.model'" \
  --gin_file=runs/finetune.gin --gin.MODEL_DIR="'s3://t5xx-test/ft'" \
  --gin.INITIAL_CHECKPOINT_PATH="'s3://t5xx-test/runs/a/checkpoint_2'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.TRAIN_STEPS=4 \
  --gin.BATCH_SIZE=4 --gin.EVAL_PERIOD=4 --gin.USE_CACHED_TASKS=False \
  --gin.EVALUATOR_NUM_EXAMPLES=4 --gin.RANDOM_SEED=1 >"$work/ft.log" 2>&1
fetch s3://t5xx-test/ft "$work/ft"
show="$work/ft.log" check "finetune from s3:// into MODEL_DIR on s3://: checkpoint_4, config.gin, summaries, inference_eval in the bucket" \
  test -f "$work/ft/checkpoint_4/checkpoint" -a -f "$work/ft/config.gin" \
  -a -n "$(compgen -G "$work/ft/train/events.out.tfevents.*")" -a -d "$work/ft/inference_eval"
infer "$work/inferlocal" "$work/run7/checkpoint_2" "$work/data/c4_demo/sentencepiece.model"
t5xx infer "${model[@]}" "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin_file=runs/infer.gin --gin.CHECKPOINT_PATH="'$work/run7/checkpoint_2'" --gin.MIXTURE_OR_TASK_NAME="'$TASK'" \
  "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.utils.DatasetConfig.split="'validation'" \
  --gin.utils.DatasetConfig.batch_size=4 --gin.INFER_OUTPUT_DIR="'s3://t5xx-test/infer'" >"$work/infer.log" 2>&1
fetch s3://t5xx-test/infer "$work/infer.s3"
show="$work/infer.log" check "INFER_OUTPUT_DIR on s3://: the predictions written locally" \
  cmp "$work/inferlocal/$pred" "$work/infer.s3/$pred"
t5xx eval "${model[@]}" "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin_file=runs/eval.gin --gin.CHECKPOINT_PATH="'s3://t5xx-test/ft/checkpoint_4'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" --gin.utils.DatasetConfig.split="'validation'" \
  --gin.utils.DatasetConfig.batch_size=4 --gin.seqio.Evaluator.num_examples=4 \
  --gin.EVAL_OUTPUT_DIR="'gs://t5xx-test/eval'" >"$work/eval.log" 2>&1
T5XX_OBJECT_CACHE="$work/cache.out2" t5xx eval "${model[@]}" \
  "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin_file=runs/eval.gin --gin.CHECKPOINT_PATH="'s3://t5xx-test/runs/a/checkpoint_2'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" --gin.utils.DatasetConfig.split="'validation'" \
  --gin.utils.DatasetConfig.batch_size=4 --gin.seqio.Evaluator.num_examples=4 \
  --gin.EVAL_OUTPUT_DIR="'gs://t5xx-test/eval'" >"$work/eval2.log" 2>&1
fetch gs://t5xx-test/eval "$work/eval.gs"
show="$work/eval.log $work/eval2.log" check "EVAL_OUTPUT_DIR on gs://, from two machines: the metrics of steps 4 and 2, appended as seqio appends" \
  bash -c 'test "$(grep -o "\"step\": *[0-9]*" "$0" | tr -d " " | tr "\n" " ")" = "\"step\":4 \"step\":2 "' \
  "$work/eval.gs/inference_eval/$TASK-metrics.jsonl"
# mode 'latest' on a bucket directory: only its newest committed checkpoint
# is fetched.
T5XX_OBJECT_CACHE="$work/cache.latest" t5xx infer "${model[@]}" \
  "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'" \
  --gin_file=runs/infer.gin --gin.CHECKPOINT_PATH="'s3://t5xx-test/ft'" --gin.utils.RestoreCheckpointConfig.mode="'latest'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.utils.DatasetConfig.split="'validation'" \
  --gin.utils.DatasetConfig.batch_size=4 --gin.INFER_OUTPUT_DIR="'$work/latest'" >"$work/latest.log" 2>&1
show="$work/latest.log" check "mode 'latest' on s3://: restores checkpoint_4, fetching only it" \
  bash -c 'grep -q "^\[restore\] s3://t5xx-test/ft/checkpoint_4: step 4" "$0" &&
           test "$(ls "$1/s3/t5xx-test/ft")" = checkpoint_4' "$work/latest.log" "$work/cache.latest"
# A gin-defined cacheable task whose source files are in the bucket.
mkdir -p "$work/src"
for k in 0 1 2; do for l in $(seq 1 $((5 + 3 * k))); do echo "s$k line $l"; done >"$work/src/src-$k.txt"; done
upload s3 "$work/src" src
for where in "$work/src" s3://t5xx-test/src; do
  case "$where" in s3:*) name=s3;; *) name=local;; esac
  cat >"$work/task-$name.gin" <<GIN
from __gin__ import dynamic_registration
import seqio
from seqio import preprocessors
seqio.Task:
  name = 'cached_lines'
  source = @seqio.TextLineDataSource()
  preprocessors = [@preprocessors.rekey, @preprocessors.tokenize, @seqio.CacheDatasetPlaceholder(),
                   @preprocessors.append_eos]
  output_features = {'targets': @seqio.Feature()}
seqio.TextLineDataSource.split_to_filepattern = {'train': '$where/src-*.txt'}
preprocessors.rekey.key_map = {'targets': 'text'}
seqio.Feature.vocabulary = @seqio.ByteVocabulary()
t5xx.seqio.register.tasks = [@seqio.Task()]
GIN
done
t5xx cache_tasks --gin_file="$work/task-local.gin" --data_dir="$work/nodata" --output_cache_dir="$work/cachelocal" \
  >"$work/c1.log" 2>&1
t5xx cache_tasks --gin_file="$work/task-s3.gin" --data_dir="$work/nodata" \
  --output_cache_dir=gs://t5xx-test/cache >"$work/c2.log" 2>&1
fetch gs://t5xx-test/cache "$work/fetched_cache"
show="$work/c2.log" check "cache_tasks (source files on s3://, --output_cache_dir on gs://): the caches written locally, byte for byte" \
  bash -c 'test -d "$0/cached_lines" && diff -r "$0" "$1"' "$work/cachelocal" "$work/fetched_cache"
# --tfds_data_dir in a bucket: t5's glue_cola_v002 read from TFDS's layout
# on gs:// (versions listed, dataset_info.json and features.json read, the
# shards fetched as opened) gives the examples the local directory gives.
tfds="$here/../testdata/tfds/data"
upload gs "$tfds/glue" tfds/glue
mkdir -p "$work/cat/t5-data/vocabs/cc_all.32000"
cp "$here/../testdata/t5_catalog/vocab.model" "$work/cat/t5-data/vocabs/cc_all.32000/sentencepiece.model"
for where in "$tfds" gs://t5xx-test/tfds; do
  t5xx data show --module_import=t5.data.mixtures --task=glue_cola_v002 --split=validation --n=20 \
    --lengths=inputs=64,targets=8 --tfds_data_dir="$where" --data_dir="$work/cat" \
    >"$work/cola.$(basename "$where").out" 2>"$work/cola.$(basename "$where").err"
done
show="$work/cola.tfds.err" check "--tfds_data_dir on gs://: data show prints the local directory's 12 validation examples" \
  bash -c 'test "$(wc -l <"$0")" = 12 && cmp "$0" "$1"' "$work/cola.data.out" "$work/cola.tfds.out"
exp=(--gin_file=models/t5_1_1/tiny.gin --gin.network.T5Config.vocab_size=1152
     --gin.seqio.SentencePieceVocabulary.extra_ids=100 --data_dir="$work/data"
     "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'")
t5xx export "${exp[@]}" --checkpoint_path="$work/run7/checkpoint_2" --output_dir="$work/hflocal" >"$work/e1.log" 2>&1
t5xx export "${exp[@]}" --checkpoint_path=s3://t5xx-test/runs/a/checkpoint_2 --output_dir=s3://t5xx-test/hf \
  "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='s3://t5xx-test/vocabs/demo/sentencepiece.model'" \
  >"$work/e2.log" 2>&1
fetch s3://t5xx-test/hf "$work/hf.s3"
show="$work/e2.log" check "export from s3:// (checkpoint and vocabulary) to s3://: the files export writes locally" diff -r "$work/hflocal" "$work/hf.s3"
t5xx import --hf_model_dir=s3://t5xx-test/hf --output_dir=gs://t5xx-test/imported >"$work/i.log" 2>&1
fetch gs://t5xx-test/imported "$work/imported.gs"
show="$work/i.log" check "import from s3:// to gs://: checkpoint_0 and model.gin in the bucket, named by URL" \
  bash -c 'test -f "$0/checkpoint_0/checkpoint" -a -f "$0/model.gin" && grep -q "gs://t5xx-test/imported/checkpoint_0" "$1" &&
           grep -q "sentencepiece_model_file = .gs://t5xx-test/imported/spiece.model." "$0/model.gin"' \
  "$work/imported.gs" "$work/i.log"
expect_error "export to a bucket directory that holds objects: refused" \
  "--output_dir=s3://t5xx-test/hf already holds objects" -- \
  "$T5XX" export "${exp[@]}" --checkpoint_path="$work/run/checkpoint_2" --output_dir=s3://t5xx-test/hf
check "and no local folder named 's3:' or 'gs:'" test ! -e "$work/s3:" -a ! -e "$work/gs:"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
