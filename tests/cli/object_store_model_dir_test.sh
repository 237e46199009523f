#!/usr/bin/env bash
# MODEL_DIR in a bucket (gs:// and s3://, on moto's S3 server and
# gcp-storage-emulator started here: tests/storage/stores_lib.sh), with the
# train data (the task's seqio cache) and the vocabulary in the bucket too,
# in both checkpoint layouts: a run of 24 steps with a checkpoint every 4, killed
# with -9 once step 12 is committed in its staging directory and run again
# (for gs://, on a "new machine": an empty object cache), ends with a
# checkpoint_24 in the bucket equal, file for file and byte for byte, to an
# uninterrupted local run's; the bucket never shows a checkpoint without its
# commit marker to a reader that waits for it, and the rerun deletes the
# prefix a kill cut short. Through the fault proxy (100 ms latency, 1% of
# connections dropped mid-body, 503 bursts) the same bytes; a store that
# goes down for good stops the run with the URL named and the committed
# checkpoints intact. TensorBoard's own reader (tensorboard, test venv)
# reads the run's event files from both servers (s3:// through its boto3
# file system, gs:// through fsspec's gcsfs). Skips (77) without the venv's
# servers.
# Usage: object_store_model_dir_test.sh T5XX
set -u
T5XX="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$here/cli_lib.sh"
. "$here/../storage/stores_lib.sh"  # $s3, $gcs, $py; skips without the venv
demo_corpus_or_exit
export AWS_ENDPOINT_URL="http://127.0.0.1:$s3" STORAGE_EMULATOR_HOST="http://127.0.0.1:$gcs"
export T5XX_OBJECT_CACHE="$work/cache"
# The pretraining task read from its seqio cache (cache_tasks), and the
# vocabulary: local for the reference runs, in the bucket for the others.
t5xx() { timeout -k 5 180 "$T5XX" "$@"; }
t5xx cache_tasks --data_dir="$work/data" --tasks=c4_demo_span_corruption_cached \
  --output_cache_dir="$work/tcache" >"$work/tcache.log" 2>&1
for scheme in s3 gs; do
  t5xx cache_tasks --data_dir="$work/data" --tasks=c4_demo_span_corruption_cached \
    --output_cache_dir=$scheme://t5xx-test/tcache >"$work/tcache.$scheme.log" 2>&1
  mkdir -p "$work/vocab" && cp "$work/data/c4_demo/sentencepiece.model" "$work/vocab/"
  upload $scheme "$work/vocab" vocab
done
localin=(--seqio_additional_cache_dirs="$work/tcache")
s3in=(--seqio_additional_cache_dirs=s3://t5xx-test/tcache
      "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='s3://t5xx-test/vocab/sentencepiece.model'")
gsin=(--seqio_additional_cache_dirs=gs://t5xx-test/tcache
      "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='gs://t5xx-test/vocab/sentencepiece.model'")
tiny=(--gin_file=examples/t5_1_1_tiny_demo.gin --data_dir="$work/data" --gin.TRAIN_STEPS=24
      --gin.MIXTURE_OR_TASK_NAME="'c4_demo_span_corruption_cached'" --gin.USE_CACHED_TASKS=True
      --gin.BATCH_SIZE=2 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.RANDOM_SEED=7 --gin.DROPOUT_RATE=0.1
      --gin.utils.SaveCheckpointConfig.period=4 --gin.train.train_eval_dataset_cfg=None)
orbax=(--gin.train.use_orbax=True)

# same_dir A B: the same files, byte for byte (Orbax's commit_success.txt,
# which names where it was written, aside). For an Orbax checkpoint the
# OCDBT database's files are named at random and its manifest names them,
# and _CHECKPOINT_METADATA holds the save's wall-clock times: those are
# left out, and the arrays are compared through t5xx_checksums.json, which
# must then be byte-equal: the CRC-32C of every stored (zstd) chunk.
same_dir() {
  local x=(-x commit_success.txt)
  [ -d "$1/state" ] && x+=(-x _CHECKPOINT_METADATA -x manifest.ocdbt -x d)
  diff -r "${x[@]}" "$1" "$2" >"$work/diff.out" 2>&1 || { head -5 "$work/diff.out"; return 1; }
  [ ! -d "$1/state" ] || [ "$(grep -c '/0' "$1/t5xx_checksums.json")" -gt 20 ] ||
    { echo "(few chunks in $1/t5xx_checksums.json)"; return 1; }
}
committed_steps() {  # URL: the steps with a commit marker, ascending
  "$py" - "$1" "$s3" "$gcs" <<'PY'
import json, re, sys, urllib.parse, urllib.request
import boto3
url, s3, gcs = sys.argv[1:]
scheme, rest = url.split('://')
bucket, prefix = rest.split('/', 1)
if scheme == 's3':
  c = boto3.client('s3', endpoint_url=f'http://127.0.0.1:{s3}')
  keys = [o['Key'] for p in c.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix + '/')
          for o in p.get('Contents', [])]
else:
  keys, token = [], ''
  while True:
    q = urllib.parse.urlencode({'prefix': prefix + '/', **({'pageToken': token} if token else {})})
    r = json.load(urllib.request.urlopen(f'http://127.0.0.1:{gcs}/storage/v1/b/{bucket}/o?' + q))
    keys += [o['name'] for o in r.get('items', [])]
    token = r.get('nextPageToken')
    if not token:
      break
steps = sorted({int(m.group(1)) for k in keys
                for m in [re.search(r'/checkpoint_(\d+)/(checkpoint|commit_success\.txt)$', k)] if m})
print(' '.join(map(str, steps)))
PY
}

# The uninterrupted local runs, one per layout.
t5xx train "${tiny[@]}" "${localin[@]}" --gin.MODEL_DIR="'$work/local'" >"$work/local.log" 2>&1
show="$work/local.log" check "local run, legacy layout" test -f "$work/local/checkpoint_24/checkpoint"
t5xx train "${tiny[@]}" "${localin[@]}" "${orbax[@]}" --gin.MODEL_DIR="'$work/local_orbax'" \
  >"$work/local_orbax.log" 2>&1
show="$work/local_orbax.log" check "local run, Orbax layout" test -d "$work/local_orbax/checkpoint_24/state"

# kill_and_rerun NAME URL LOCAL_REFERENCE [flags...]: the run killed with -9
# once checkpoint_12 is committed in its staging directory, then again to
# the end; checkpoint_24 fetched from the bucket equals the local run's.
kill_and_rerun() {
  local name="$1" url="$2" ref="$3"; shift 3
  local staged="$T5XX_OBJECT_CACHE/staging/${url/:\/\//\/}"
  "$T5XX" train "${tiny[@]}" "$@" --gin.MODEL_DIR="'$url'" >"$work/$name.1.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1200); do [ -d "$staged/checkpoint_12" ] && break; sleep 0.05; done
  kill -9 "$pid"; wait "$pid" 2>/dev/null
  show="$work/$name.1.log" check "$name: killed once checkpoint_12 was committed locally" \
    test -d "$staged/checkpoint_12" -a ! -e "$staged/checkpoint_24"
  local before; before="$(committed_steps "$url")"
  [ "$name" = gs_legacy ] && export T5XX_OBJECT_CACHE="$work/cache2"  # a new machine
  t5xx train "${tiny[@]}" "$@" --gin.MODEL_DIR="'$url'" >"$work/$name.2.log" 2>&1
  show="$work/$name.2.log" check "$name: the rerun resumes from the bucket's latest committed checkpoint ($before)" \
    grep -q "resuming from MODEL_DIR's latest checkpoint .*/checkpoint_${before##* }: step ${before##* }" "$work/$name.2.log"
  show="$work/$name.2.log" check "$name: the rerun ends naming the bucket's checkpoint_24" \
    grep -q "^\[done\] step 24 reached .*; checkpoint $url/checkpoint_24$" "$work/$name.2.log"
  check "$name: the bucket has committed checkpoints 0-24 every 4 ($(committed_steps "$url"))" \
    test "$(committed_steps "$url")" = "0 4 8 12 16 20 24"
  fetch "$url/checkpoint_24" "$work/$name.ckpt"
  fetch "$url/train" "$work/$name.train"
  show="$work/$name.train/metrics.jsonl" check "$name: the bucket's train/metrics.jsonl has every summary, before and after the kill" \
    bash -c 'diff <(grep -o "\"step\":[0-9]*" "$0" | sort -u) <(grep -o "\"step\":[0-9]*" "$1" | sort -u)' \
    "$work/$name.train/metrics.jsonl" "$ref/train/metrics.jsonl"
  check "$name: checkpoint_24 from the bucket equals the uninterrupted local run's, byte for byte" \
    same_dir "$ref/checkpoint_24" "$work/$name.ckpt"
  export T5XX_OBJECT_CACHE="$work/cache"
}
kill_and_rerun s3_legacy s3://t5xx-test/runs/legacy "$work/local" "${s3in[@]}"
kill_and_rerun s3_orbax s3://t5xx-test/runs/orbax "$work/local_orbax" "${s3in[@]}" "${orbax[@]}"
kill_and_rerun gs_legacy gs://t5xx-test/runs/legacy "$work/local" "${gsin[@]}"
kill_and_rerun gs_orbax gs://t5xx-test/runs/orbax "$work/local_orbax" "${gsin[@]}" "${orbax[@]}"
check "an Orbax checkpoint's commit marker is Orbax's" \
  grep -q "^Checkpoint commit was successful to gs://t5xx-test/runs/orbax/checkpoint_24" "$work/gs_orbax.ckpt/commit_success.txt"

# Prefixes without a commit marker: t5xx's own unfinished upload (its
# checkpoint_<N>.t5xx-incomplete beside it) is deleted at start-up; another
# program's is left alone and not restored.
mkdir -p "$work/junk/x"; echo partial >"$work/junk/x/0.0"
upload s3 "$work/junk" runs/legacy/checkpoint_28
upload s3 "$work/junk" runs/legacy/checkpoint_32
"$py" -c "
import boto3, sys
boto3.client('s3', endpoint_url='http://127.0.0.1:$s3').put_object(
    Bucket='t5xx-test', Key='runs/legacy/checkpoint_28.t5xx-incomplete', Body=b'x')"
t5xx train "${tiny[@]}" "${s3in[@]}" --gin.MODEL_DIR="'s3://t5xx-test/runs/legacy'" >"$work/junk.log" 2>&1
show="$work/junk.log" check "t5xx's unfinished upload is deleted, another program's prefix left alone, checkpoint_24 resumed" \
  bash -c 'grep -q "deleted s3://t5xx-test/runs/legacy/checkpoint_28: a checkpoint t5xx.s upload" "$0" &&
           grep -q "left s3://t5xx-test/runs/legacy/checkpoint_32 alone" "$0" &&
           grep -q "resuming from MODEL_DIR.s latest checkpoint .*/checkpoint_24: step 24" "$0"' "$work/junk.log"
rm -rf "$work/left"; fetch s3://t5xx-test/runs/legacy "$work/left"
check "the bucket: no checkpoint_28 nor its .t5xx-incomplete; checkpoint_32 as it was" \
  bash -c 'test ! -e "$0/checkpoint_28" -a ! -e "$0/checkpoint_28.t5xx-incomplete" -a -f "$0/checkpoint_32/x/0.0"' "$work/left"

# TensorBoard's reader over each server: s3:// through its boto3 file
# system, gs:// through fsspec (gcsfs, which honours STORAGE_EMULATOR_HOST).
cat >"$work/tb.py" <<'PY'
import sys
from tensorboard.backend.event_processing import event_accumulator
acc = event_accumulator.EventAccumulator(sys.argv[1], size_guidance={'tensors': 0, 'scalars': 0})
acc.Reload()
tags = acc.Tags()
steps = sorted({e.step for e in acc.Tensors('loss')} if 'loss' in tags['tensors'] else
               {e.step for e in acc.Scalars('loss')} if 'loss' in tags['scalars'] else set())
print('loss steps', steps)
assert steps and steps[-1] == int(sys.argv[2]), steps
PY
for url in s3://t5xx-test/runs/legacy/train gs://t5xx-test/runs/legacy/train; do
  S3_ENDPOINT="http://127.0.0.1:$s3" "$py" "$work/tb.py" "$url" 24 >"$work/tb.log" 2>&1
  tb_rc=$?
  show="$work/tb.log" check "TensorBoard reads the run's train summaries from $url (to step 24)" test "$tb_rc" = 0
done

# Through the fault proxy: the same bytes.
ps3=$(port)
"$py" "$here/../storage/fault_proxy.py" --listen "$ps3" --upstream "127.0.0.1:$s3" --latency-ms 100 \
  --drop 0.01 --burst-every 40 --burst-length 3 --seed 3 --stats "$work/proxy.json" &
proxy=$!
wait_port "$ps3"
AWS_ENDPOINT_URL="http://127.0.0.1:$ps3" T5XX_OBJECT_CACHE="$work/cache.faults" \
  t5xx train "${tiny[@]}" "${s3in[@]}" --gin.MODEL_DIR="'s3://t5xx-test/runs/faults'" \
  >"$work/faults.log" 2>&1
fetch s3://t5xx-test/runs/faults/checkpoint_24 "$work/faults.ckpt"
show="$work/faults.log" check "through the fault proxy: checkpoint_24 equals the local run's" \
  same_dir "$work/local/checkpoint_24" "$work/faults.ckpt"
kill "$proxy"; wait "$proxy" 2>/dev/null
check "the proxy injected faults ($(cat "$work/proxy.json" 2>/dev/null))" \
  "$py" -c "import json, sys; s = json.load(open(sys.argv[1])); sys.exit(not (s.get('dropped', 0) > 0 or s.get('bursts', 0) > 0))" "$work/proxy.json"

# A store that goes down for good after checkpoint 8 is committed: the run
# stops with the URL named; checkpoints 0-8 stay committed in the bucket.
pdown=$(port)
"$py" "$here/../storage/fault_proxy.py" --listen "$pdown" --upstream "127.0.0.1:$s3" &
proxy=$!
wait_port "$pdown"
AWS_ENDPOINT_URL="http://127.0.0.1:$pdown" T5XX_STORAGE_RETRY_SECONDS=2 \
  "$T5XX" train "${tiny[@]}" "${localin[@]}" --gin.MODEL_DIR="'s3://t5xx-test/runs/down'" >"$work/down.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do [ "$(committed_steps s3://t5xx-test/runs/down)" = "0 4 8" ] && break; sleep 0.05; done
kill -9 "$proxy"; wait "$proxy" 2>/dev/null
wait "$pid"; rc=$?
show="$work/down.log" check "a store down for good stops the run (rc $rc) naming the URL" \
  bash -c '[ "$0" != 0 ] && grep -q "error: .*s3://t5xx-test/runs/down" "$1"' "$rc" "$work/down.log"
check "and the bucket's committed checkpoints are intact ($(committed_steps s3://t5xx-test/runs/down))" \
  bash -c 'case "$0" in "0 4 8"*) exit 0;; *) exit 1;; esac' "$(committed_steps s3://t5xx-test/runs/down)"
fetch s3://t5xx-test/runs/down/checkpoint_8 "$work/down8.ckpt"
check "its checkpoint_8 equals the local run's" same_dir "$work/local/checkpoint_8" "$work/down8.ckpt"

expect_error "MODEL_DIR in a bucket that does not exist is named" "s3://no-such-bucket/run" -- \
  "$T5XX" train "${tiny[@]}" "${localin[@]}" --gin.MODEL_DIR="'s3://no-such-bucket/run'"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
