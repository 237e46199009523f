#!/usr/bin/env bash
# gs:// and s3:// inputs end to end, on moto's S3 server and
# gcp-storage-emulator started here (tests/storage/stores_lib.sh): `t5xx
# infer` with CHECKPOINT_PATH in a bucket writes the predictions it writes
# from the same checkpoint on disk (for s3:// and gs://, each through a
# fresh object cache; the model gin's vocabulary names the bucket too, which
# `infer` reads for its checks); a checkpoint replaced in the bucket by
# another of the same size is fetched again; MODEL_DIR, INFER_OUTPUT_DIR
# and cache_tasks' --output_cache_dir in a bucket are refused (exit 2, one
# line, no local folder named "s3:"); a checkpoint that is not in the
# bucket is named. Skips (77) without the venv's servers or the
# demo translation data.
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
cd "$work"
expect_error "MODEL_DIR in a bucket: refused, with the copy command" \
  "MODEL_DIR 's3://t5xx-test/run': t5xx does not write s3:// yet" -- \
  "$T5XX" train "${model[@]}" --gin_file=runs/finetune.gin --gin.MODEL_DIR="'s3://t5xx-test/run'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.TRAIN_STEPS=2 \
  --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None
expect_error "INFER_OUTPUT_DIR in a bucket: refused" \
  "infer.output_dir (INFER_OUTPUT_DIR) 's3://t5xx-test/out': t5xx does not write s3:// yet" -- \
  env AWS_ENDPOINT_URL="http://127.0.0.1:$s3" "$T5XX" infer "${model[@]}" --gin_file=runs/infer.gin \
  --gin.CHECKPOINT_PATH="'$work/run/checkpoint_2'" --gin.MIXTURE_OR_TASK_NAME="'$TASK'" \
  "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.INFER_OUTPUT_DIR="'s3://t5xx-test/out'"
expect_error "cache_tasks --output_cache_dir in a bucket: refused" \
  "--output_cache_dir 'gs://t5xx-test/cache': t5xx does not write gs:// yet" -- \
  "$T5XX" cache_tasks --data_dir="$work/data" --tasks="$TASK" --output_cache_dir=gs://t5xx-test/cache
check "and no local folder named 's3:' or 'gs:'" test ! -e "$work/s3:" -a ! -e "$work/gs:"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
