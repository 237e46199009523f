#!/usr/bin/env bash
# scalable_t5 with scan_layers = True through the binary (issue 36): a tiny
# model with the dimensions of t5x's Adafactor golden trains, its checkpoint
# holds t5x's scanned names and shapes for parameters and slots (checked
# against tests/testdata/parity/adafactor_scalable_t5.json, made by t5x),
# a stop and resume continues bit for bit, `t5xx convert_checkpoint` goes to
# per layer and back with the same bytes, and several processes are refused.
# Usage: scan_layers_test.sh /path/to/t5xx [python-with-msgpack]
set -u
T5XX="$1"
PY="${2:-python3}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"
t0=$SECONDS
demo_corpus_or_exit
cat >"$work/scan.gin" <<GIN
from __gin__ import dynamic_registration
import __main__ as train_script
import seqio
from t5x import utils
from t5x.examples.scalable_t5 import network
include 'models/scalable_t5/mt5/tiny.gin'
include 'runs/pretrain.gin'
MIXTURE_OR_TASK_NAME = 'c4_demo_span_corruption'
TASK_FEATURE_LENGTHS = {'inputs': 32, 'targets': 8}
BATCH_SIZE = 2
DROPOUT_RATE = 0.1
RANDOM_SEED = 7
# The dimensions of t5x's golden (adafactor_scalable_t5.json), vocab aside.
network.T5Config:
  vocab_size = 1152
  emb_dim = 16
  num_heads = 2
  head_dim = 8
  mlp_dim = 32
  num_encoder_layers = 2
  num_decoder_layers = 3
seqio.SentencePieceVocabulary.sentencepiece_model_file = 'c4_demo/sentencepiece.model'
seqio.SentencePieceVocabulary.extra_ids = 100
train_script.train.stats_period = 1
train_script.train.train_eval_dataset_cfg = None
utils.SaveCheckpointConfig.period = 3
GIN
run=(--gin_file="$work/scan.gin" --data_dir="$work/data")
t5xx() { timeout -k 5 120 "$T5XX" "$@"; }
losses() { grep -o '^\[train\] step [0-9]* of [0-9]* | loss [^|]*' "$1" | sed 's/ of [0-9]*//'; }
same_checkpoint() {  # every array and the index, byte for byte
  diff -r -q -x t5xx_checksums.json -x 't5xx_train_ds-*' "$1" "$2"
}

# Uninterrupted: 6 steps. Interrupted: 3 steps, then resumed to 6.
show="$work/A.log" check "train 6 steps" t5xx train "${run[@]}" --gin.TRAIN_STEPS=6 \
  --gin.MODEL_DIR="$work/A" >"$work/A.log" 2>&1
show="$work/B1.log" check "train 3 steps" t5xx train "${run[@]}" --gin.TRAIN_STEPS=3 \
  --gin.MODEL_DIR="$work/B" >"$work/B1.log" 2>&1
show="$work/B2.log" check "resume to 6" t5xx train "${run[@]}" --gin.TRAIN_STEPS=6 \
  --gin.MODEL_DIR="$work/B" >"$work/B2.log" 2>&1
check "resumed losses" cmp -s <(losses "$work/A.log" | tail -3) <(losses "$work/B2.log")
check "resumed checkpoint_6 bit for bit" same_checkpoint "$work/A/checkpoint_6" "$work/B/checkpoint_6"

# t5x's names and shapes, parameters and Adafactor slots.
"$PY" "$ROOT/tests/cli/scanned_checkpoint_shapes.py" "$work/A/checkpoint_6" \
  "$ROOT/tests/testdata/parity/adafactor_scalable_t5.json" adafactor 1152 >"$work/shapes.txt" 2>&1
rc=$?
if [ $rc = 77 ]; then echo "skipped the shape check: $(cat "$work/shapes.txt")"
else show="$work/shapes.txt" check "t5x's stacked names and shapes" test $rc = 0; fi

# Per layer and back: the same bytes.
check "convert to per layer" t5xx convert_checkpoint --checkpoint_path="$work/A/checkpoint_6" \
  --output_dir="$work/P" --scan_layers=false >"$work/P.log"
check "per-layer names" test -d "$work/P/checkpoint_6/target.decoder.layers_2.mlp.wo.kernel"
check "convert back to scanned" t5xx convert_checkpoint --checkpoint_path="$work/P/checkpoint_6" \
  --output_dir="$work/S" --scan_layers=true >"$work/S.log"
check "round trip bit for bit" same_checkpoint "$work/A/checkpoint_6" "$work/S/checkpoint_6"

# A per-layer checkpoint into a scanned model: told how to convert.
expect_error "per-layer checkpoint" "holds scalable_t5's per-layer layout but the model has network.T5Config.scan_layers = True" -- \
  t5xx train "${run[@]}" --gin.TRAIN_STEPS=7 --gin.MODEL_DIR="$work/P"
# Several processes: refused before anything runs, naming the binding.
expect_error "two processes" "network.T5Config.scan_layers = True: t5xx saves and restores t5x's scanned layout on one process only, and this run has 2 processes" -- \
  env WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29555 \
  "$T5XX" config "${run[@]}" --gin.TRAIN_STEPS=6 --gin.MODEL_DIR="$work/Z"

echo "$pass passed, $failures failed ($((SECONDS - t0)) s)"
[ "$failures" = 0 ]
