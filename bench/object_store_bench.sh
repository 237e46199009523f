#!/usr/bin/env bash
# T5.1.1 base's checkpoint (t5x's legacy layout, with its Adafactor state:
# ~946 MiB) saved to and restored from moto's S3 server on 127.0.0.1
# (tests/storage/stores_lib.sh), side by side in one run with
#   - the same save and restore on local disk (MODEL_DIR a local path), and
#   - boto3 (test venv) moving the same files, 8 at a time (what t5xx does),
#     with its TransferManager (multipart above 8 MiB, 10 threads a file).
# and t5xx's storage layer alone moving the same files
# (build/bin/t5xx_object_store_transfer_bench), alternating with boto3.
# Prints the seconds and MiB/s of each, and the CPU seconds t5xx and the
# server spent on each save and restore: on one 2-core machine the server
# competes with the writer and reader for the cores.
# The save is `t5xx train` with TRAIN_STEPS=0 (it saves checkpoint_0):
# "committed ... in the background" is the save (write + for s3:// the
# upload); "published ... MiB/s" is the upload alone. The restore is a
# resumed `t5xx train` (nothing left to train): for s3:// on a "new
# machine" (an empty object cache), so it downloads, then reads.
# Usage: bench/object_store_bench.sh [T5XX]   (minutes; run it alone: top)
set -u
T5XX="$(realpath "${1:-$(dirname "$0")/../build/bin/t5xx}")"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${T5XX_BENCH_DIR:-/tmp}/t5xx_object_store_bench"
rm -rf "$work"; mkdir -p "$work"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null' EXIT
. "$root/tests/cli/cli_lib.sh"
. "$root/tests/storage/stores_lib.sh"
demo_corpus_or_exit
export AWS_ENDPOINT_URL="http://127.0.0.1:$s3"
base=(--gin_file=models/t5_1_1/base.gin --gin_file=runs/pretrain.gin --data_dir="$work/data"
      --gin.MIXTURE_OR_TASK_NAME="'c4_demo_span_corruption'"
      "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}" --gin.BATCH_SIZE=2
      "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'"
      --gin.DROPOUT_RATE=0.0 --gin.train.train_eval_dataset_cfg=None --gin.train.infer_eval_dataset_cfg=None)
moto_pid=$(pgrep -f "moto_server -H 127.0.0.1 -p $s3" | head -1)
moto_cpu() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$moto_pid/stat"; }
run() {  # NAME MODEL_DIR [env...]
  local name="$1" dir="$2"; shift 2
  local m0; m0=$(moto_cpu)
  /usr/bin/time -f "%e s wall, %U s user + %S s sys, %M KiB peak RSS" env "$@" "$T5XX" train "${base[@]}" \
    --gin.TRAIN_STEPS=0 --gin.MODEL_DIR="'$dir'" >"$work/$name.log" 2>&1 ||
    { echo "$name failed:"; tail -5 "$work/$name.log"; exit 1; }
  grep -E "^\[checkpoint\] step 0 \| committed|^\[restore\]|downloaded|s wall" "$work/$name.log" | sed "s/^/$name: /"
  echo "$name: the S3 server's CPU: $(echo "$(moto_cpu) - $m0" | bc) s"
}
run save_local "$work/local" T5XX_OBJECT_CACHE="$work/cache1"
run save_s3 s3://t5xx-test/base T5XX_OBJECT_CACHE="$work/cache1"
run restore_local "$work/local" T5XX_OBJECT_CACHE="$work/cache1"
run restore_s3 s3://t5xx-test/base T5XX_OBJECT_CACHE="$work/cache2"
cat >"$work/boto3_transfer.py" <<'PY'
import os, shutil, sys, time, concurrent.futures as cf
import boto3
from boto3.s3.transfer import TransferConfig
src, port = sys.argv[1:]
c = boto3.client('s3', endpoint_url=f'http://127.0.0.1:{port}')
cfg = TransferConfig(multipart_threshold=8 << 20, max_concurrency=10)
files = [os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs]
total = sum(os.path.getsize(f) for f in files) / 2**20
def up(f):
  c.upload_file(f, 't5xx-test', 'boto3/' + os.path.relpath(f, src), Config=cfg)
def down(f):
  out = os.path.join(src + '.boto3', os.path.relpath(f, src))
  os.makedirs(os.path.dirname(out), exist_ok=True)
  c.download_file('t5xx-test', 'boto3/' + os.path.relpath(f, src), out, Config=cfg)
for name, fn in (('upload', up), ('download', down)):
  shutil.rmtree(src + '.boto3', ignore_errors=True)
  t0 = time.time()
  with cf.ThreadPoolExecutor(8) as ex:
    list(ex.map(fn, files))
  dt = time.time() - t0
  print(f'boto3 {name}: {total:.1f} MiB in {dt:.2f} s, {total / dt:.1f} MiB/s')
PY
for round in 1 2; do
  "$(dirname "$T5XX")/t5xx_object_store_transfer_bench" "$work/local/checkpoint_0" \
    "s3://t5xx-test/t5xx_copy_$round" "$work/cache_transfer_$round" || exit 1
  "$py" "$work/boto3_transfer.py" "$work/local/checkpoint_0" "$s3" || exit 1
done
