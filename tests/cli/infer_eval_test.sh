#!/usr/bin/env bash
# Issue 13 through the binary: `t5xx infer` (predict, score,
# predict_with_aux with all beams; resumable chunks; shard_id/num_shards),
# `t5xx eval` (one checkpoint; mode 'all' skipping done ones; metrics JSON and
# TensorBoard), inference evaluation during `t5xx train` (runs/finetune.gin's
# infer_eval_dataset_cfg), and the errors of bad decoding/infer settings. The
# model is T5.1.1 tiny trained for a few steps on the demo translation task
# (freedict_en_de_translate), so its outputs are poor but deterministic.
# Usage: infer_eval_test.sh /path/to/t5xx PYTHON3
set -u
T5XX="$1"
PY="${2:-python3}"
work="$(mktemp -d)"
cleanup() { if [ -n "${KEEP_WORK:-}" ]; then echo "(work files kept in $work)"; else rm -rf "$work"; fi; }
trap cleanup EXIT
. "$(dirname "$0")/cli_lib.sh"
t5xx() { timeout -k 5 300 "$T5XX" "$@"; }
t0=$SECONDS

demo_corpus_or_exit
if [ ! -s "$work/data/freedict_en_de/validation.jsonl" ] &&
   ! compgen -G "$work/data/freedict_en_de/*validation*" >/dev/null; then
  echo "SKIP: the demo translation data was not built (dict-freedict-eng-deu missing?)"
  cat "$work/corpus.log"; exit 77
fi
D=(--data_dir="$work/data")
TASK=freedict_en_de_translate
LENS="{'inputs': 24, 'targets': 12}"
model=(--gin_file=models/t5_1_1/tiny.gin --gin.network.T5Config.vocab_size=1152
       "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file='c4_demo/sentencepiece.model'"
       --gin.seqio.SentencePieceVocabulary.extra_ids=100)

# runs/finetune.gin without its inference evaluation: its binding of
# train.inference_evaluator_cls is a train parameter, used either way.
t5xx config "${model[@]}" --gin_file=runs/finetune.gin "${D[@]}" --gin.MODEL_DIR="'$work/noie'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.TRAIN_STEPS=2 \
  --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None \
  --gin.train.infer_eval_dataset_cfg=None >"$work/noie.log" 2>&1
show="$work/noie.log" check "finetune.gin with train.infer_eval_dataset_cfg=None configures" test $? = 0

# --- train 6 steps (checkpoints at 0, 3, 6), with inference evaluation
# every 3 steps on 8 validation examples (runs/finetune.gin from scratch:
# no INITIAL_CHECKPOINT_PATH restore).
run="$work/run"
t5xx train "${model[@]}" --gin_file=runs/finetune.gin "${D[@]}" --gin.MODEL_DIR="'$run'" \
  --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" --gin.TRAIN_STEPS=6 \
  --gin.BATCH_SIZE=4 --gin.EVAL_PERIOD=3 --gin.EVAL_STEPS=1 --gin.USE_CACHED_TASKS=False \
  --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None \
  --gin.utils.SaveCheckpointConfig.period=3 --gin.EVALUATOR_NUM_EXAMPLES=8 --gin.RANDOM_SEED=1 \
  --gin.DROPOUT_RATE=0.0 >"$work/train.log" 2>&1
check "train with infer_eval exits 0" test $? = 0
show="$work/train.log"
check "infer_eval logged at steps 3 and 6" grep -q "^\[infer_eval $TASK\] step 6 .*sequence_accuracy" "$work/train.log"
ie="$run/inference_eval"
check "inference_eval metrics jsonl has steps 0?,3,6" \
  "$PY" -c "
import json,sys
rows=[json.loads(l) for l in open('$ie/$TASK-metrics.jsonl')]
steps=[r['step'] for r in rows]
assert steps[-2:]==[3,6], steps
assert all('sequence_accuracy' in r and 0<=r['sequence_accuracy']<=100 for r in rows), rows
"
check "inference_eval per-step inferences" "$PY" -c "
import json
rows=[json.loads(l) for l in open('$ie/$TASK-000006.jsonl')]
assert len(rows)==8, len(rows)
for r in rows:
  assert set(r)=={'input','target','output','prediction'}, r.keys()
  assert r['input']['inputs_pretokenized'].startswith('translate English to German: '), r
  assert r['target']==r['input']['targets_pretokenized'], r
"
check "inference_eval TensorBoard events" compgen -G "$ie/$TASK/events.out.tfevents.*"
show=""

ckpt="$run/checkpoint_6"
infer=(--gin_file=runs/infer.gin "${D[@]}" --gin.CHECKPOINT_PATH="'$ckpt'"
       --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS"
       --gin.utils.DatasetConfig.split="'validation'" --gin.utils.DatasetConfig.batch_size=4
       --gin.models.EncoderDecoderModel.decode_fn=@decoding.temperature_sample)
nval="$("$PY" -c "print(sum(1 for _ in open('$(compgen -G "$work/data/freedict_en_de/*validation*" | head -1)')))")"

# --- infer: predict, greedy
out="$work/infer"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out'" >"$work/infer.log" 2>&1
check "infer predict exits 0" test $? = 0
pred="$out/$TASK-predict.jsonl-00000-of-00001"
show="$work/infer.log"
check "predict file and COMPLETED, tmp dir gone" test -s "$pred" -a -e "$pred.COMPLETED" -a ! -d "$out/tmp-$TASK-00000-of-00001"
check "predict: one line per validation example, t5x's fields" "$PY" -c "
import json
rows=[json.loads(l) for l in open('$pred')]
assert len(rows)==$nval, (len(rows), $nval)
for r in rows:
  assert set(r)=={'inputs','prediction'}, r.keys()
  assert set(r['inputs'])=={'inputs_pretokenized','targets_pretokenized'}, r['inputs'].keys()
  assert isinstance(r['prediction'], str)
"
show=""

# --- --int8_weights (issue 54): int8 kernels, a setting the outputs record:
# a rerun in float32 over the int8 output is refused, naming the flag.
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/int8'" --int8_weights=true \
  >"$work/int8.log" 2>&1
check "infer --int8_weights=true exits 0 and says so" grep -q "int8_weights: kernels quantized" "$work/int8.log"
check "int8: the run names the kernels it multiplied in int8" \
  grep -qE "^\[infer\] --int8_weights: [1-9][0-9]* kernels multiplied in int8" "$work/int8.log"
show="$work/int8.log"
check "int8: one prediction per validation example" "$PY" -c "
import json
rows=[json.loads(l) for l in open('$work/int8/$TASK-predict.jsonl-00000-of-00001')]
assert len(rows)==$nval and all(isinstance(r['prediction'], str) for r in rows), len(rows)
"
show=""
expect_error "a float32 rerun over an int8 output is refused" \
  "was written with --int8_weights = True; this run has none; this run would write other results there" -- \
  t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/int8'"
expect_error "--int8_weights needs a float32 network" \
  "--int8_weights replaces float32 matmuls, and network.T5Config.dtype is 'bfloat16'; set it to 'float32' or drop the flag" -- \
  t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/int8c'" --int8_weights=true \
  --gin.network.T5Config.dtype="'bfloat16'"
expect_error "--int8_weights takes true or false" "t5xx infer: --int8_weights must be true or false, got 'yes'" -- \
  t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/int8b'" --int8_weights=yes
expect_error "train has no --int8_weights" "t5xx train: unknown flag '--int8_weights'" -- \
  t5xx train "${model[@]}" --int8_weights=true

# --- resume by chunk: 2-batch chunks, chunk files kept (no merge); one
# chunk's marker removed; the rerun recomputes that chunk only and the merged
# file equals the one-shot run's.
out2="$work/infer_chunks"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out2'" --gin.infer.checkpoint_period=2 \
  --gin.infer.merge_chunked_results=False >"$work/chunks1.log" 2>&1
tmp="$out2/tmp-$TASK-00000-of-00001"
nchunks=$(ls "$tmp"/*-chunk?????.COMPLETED 2>/dev/null | wc -l)
check "chunks written ($nchunks)" test "$nchunks" -ge 2
rm -f "$tmp/$TASK-predict.jsonl-00000-of-00001-chunk00001.COMPLETED"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out2'" --gin.infer.checkpoint_period=2 \
  >"$work/chunks2.log" 2>&1
show="$work/chunks2.log"
check "rerun skipped the completed chunks" grep -q "$((nchunks - 1)) completed chunks skipped" "$work/chunks2.log"
check "rerun recomputed chunk 1 only" test "$(grep -c '^\[infer\] task .* chunk [0-9]*: ' "$work/chunks2.log")" = 1
check "merged chunks equal the one-shot output" cmp "$pred" "$out2/$TASK-predict.jsonl-00000-of-00001"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out2'" >"$work/chunks3.log" 2>&1
check "a COMPLETED task is skipped" grep -q "is complete; skipping task" "$work/chunks3.log"
show=""

# --- issue 32: a rerun with other settings reuses exactly the chunks that
# still hold what it would write (each chunk's marker records its examples
# and settings) and recomputes the others: every example once, in order.
# (a) Out of memory: batch 4 -> 2 -> 8 (the chunk boundaries move).
out3="$work/infer_rebatch"
tmp3="$out3/tmp-$TASK-00000-of-00001"
c0="$TASK-predict.jsonl-00000-of-00001-chunk00000"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out3'" --gin.infer.checkpoint_period=1 \
  --gin.infer.merge_chunked_results=False >"$work/rebatch1.log" 2>&1
show="$tmp3/$c0.COMPLETED" check "a chunk's marker records its examples" \
  grep -q '"examples":\[0,4\]' "$tmp3/$c0.COMPLETED"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out3'" --gin.infer.checkpoint_period=1 \
  --gin.utils.DatasetConfig.batch_size=2 --gin.infer.merge_chunked_results=False >"$work/rebatch2.log" 2>&1
show="$work/rebatch2.log" check "batch 4 -> 2: chunk 1 is recomputed, naming what changed" grep -qF \
  "[infer] chunk 00001 holds examples 4-7 (batch_size 4 x checkpoint_period 1); this run's chunk is examples 2-3 (batch_size 2 x checkpoint_period 1): recomputing it" \
  "$work/rebatch2.log"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out3'" --gin.infer.checkpoint_period=1 \
  --gin.utils.DatasetConfig.batch_size=8 >"$work/rebatch3.log" 2>&1
show="$work/rebatch3.log" check "batch 2 -> 8: stale chunks removed" grep -q "removed .*-chunk000" "$work/rebatch3.log"
check "batch 4 -> 2 -> 8: every example once, in order (= the one-shot output)" \
  cmp "$pred" "$out3/$TASK-predict.jsonl-00000-of-00001"
# (b) Another checkpoint_period over kept chunks: reused where they match.
out4="$work/infer_period"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out4'" --gin.infer.checkpoint_period=2 \
  --gin.infer.merge_chunked_results=False >"$work/period1.log" 2>&1
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out4'" --gin.infer.checkpoint_period=3 \
  >"$work/period2.log" 2>&1
check "checkpoint_period 2 -> 3: every example once, in order" \
  cmp "$pred" "$out4/$TASK-predict.jsonl-00000-of-00001"
# (c) Another checkpoint: its chunks are recomputed; a merged file written
# from another checkpoint is refused, naming the file and the setting.
out5="$work/infer_ckpt"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out5'" --gin.CHECKPOINT_PATH="'$run/checkpoint_3'" \
  --gin.infer.checkpoint_period=2 --gin.infer.merge_chunked_results=False >"$work/ckpt1.log" 2>&1
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out5'" --gin.infer.checkpoint_period=2 \
  >"$work/ckpt2.log" 2>&1
show="$work/ckpt2.log" check "checkpoint 3 -> 6: chunks recomputed, naming the checkpoint" grep -qF \
  "[infer] chunk 00000 was written with checkpoint (restored) = '$run/checkpoint_3'; this run has '$run/checkpoint_6': recomputing it" \
  "$work/ckpt2.log"
check "checkpoint 3 -> 6: the output is checkpoint 6's" cmp "$pred" "$out5/$TASK-predict.jsonl-00000-of-00001"
expect_error "a finished output from another checkpoint is refused" \
  "$out5/$TASK-predict.jsonl-00000-of-00001 was written with checkpoint (restored) = '$run/checkpoint_6'; this run has '$run/checkpoint_3'; this run would write other results there" -- \
  t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out5'" --gin.CHECKPOINT_PATH="'$run/checkpoint_3'"
# t5xx config refuses what infer refuses before reading the checkpoint.
expect_error "config: a finished output from another checkpoint is refused" \
  "$out5/$TASK-predict.jsonl-00000-of-00001 was written with checkpoint (restored) = '$run/checkpoint_6'; this run has '$run/checkpoint_3'; this run would write other results there" -- \
  t5xx config "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out5'" --gin.CHECKPOINT_PATH="'$run/checkpoint_3'"
: >"$work/a_file"
for cmd in infer config; do
  expect_error "$cmd: INFER_OUTPUT_DIR under a file is refused" \
    "infer.output_dir (INFER_OUTPUT_DIR) = '$work/a_file/out' cannot be created: $work/a_file is not a directory; choose a writable directory" -- \
    t5xx $cmd "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/a_file/out'"
done
# (d) The data changed under kept chunks (the first two validation examples
# swapped): the chunk holding them is recomputed, naming the change (each
# marker records its examples' MD5); the others are reused.
vfile="$work/data/freedict_en_de/validation.jsonl"
out6="$work/infer_data"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out6'" --gin.infer.checkpoint_period=2 \
  --gin.infer.merge_chunked_results=False >"$work/data1.log" 2>&1
cp "$vfile" "$work/validation.orig"
{ sed -n 2p "$work/validation.orig"; sed -n 1p "$work/validation.orig"; sed -n '3,$p' "$work/validation.orig"; } >"$vfile"
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$out6'" --gin.infer.checkpoint_period=2 \
  >"$work/data2.log" 2>&1
show="$work/data2.log" check "changed data: chunk 0 is recomputed, naming the change" grep -qF \
  "[infer] chunk 00000 holds other examples than this run reads for it (examples 0-7: their MD5 was" \
  "$work/data2.log"
show="$work/data2.log" check "changed data: only chunk 0 is recomputed" \
  test "$(grep -c '^\[infer\] task .* chunk [0-9]*: ' "$work/data2.log")" = 1
{ sed -n 2p "$pred"; sed -n 1p "$pred"; sed -n '3,$p' "$pred"; } >"$work/pred_swapped"
check "changed data: every example once, the new order's" cmp "$work/pred_swapped" "$out6/$TASK-predict.jsonl-00000-of-00001"
mv "$work/validation.orig" "$vfile"
show=""

# --- shard_id / num_shards: two jobs together infer every example once.
for s in 0 1; do
  t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/shards'" \
    --gin.infer.shard_id=$s --gin.infer.num_shards=2 >"$work/shard$s.log" 2>&1
  check "shard $s exits 0" test $? = 0
done
check "the two shards hold the examples of the one-shot run" "$PY" -c "
import json
one=sorted(l for l in open('$pred'))
two=sorted(l for s in (0,1) for l in open('$work/shards/$TASK-predict.jsonl-0000%d-of-00002'%s))
assert one==two, (len(one), len(two))
"

# --- score: the sum of the target tokens' log-likelihoods (<= 0).
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/score'" --gin.infer.mode="'score'" \
  >"$work/score.log" 2>&1
check "score mode" "$PY" -c "
import json
rows=[json.loads(l) for l in open('$work/score/$TASK-score.jsonl-00000-of-00001')]
assert len(rows)==$nval and all(set(r)=={'inputs','score'} and r['score']<0 for r in rows), rows[:2]
"

# --- predict_with_aux with beam search, 3 beams, all returned.
aux=(--gin.infer.mode="'predict_with_aux'" --gin.models.EncoderDecoderModel.decode_fn=@decoding.beam_search
     --gin.models.EncoderDecoderModel.default_decoder_params=@models.DecoderParams\(\)
     --gin.models.DecoderParams.num_decodes=3 --gin.models.DecoderParams.return_all_decodes=True
     --gin.write_inferences_to_file.output_ids=True)
t5xx infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/aux'" "${aux[@]}" >"$work/aux.log" 2>&1
show="$work/aux.log"
check "predict_with_aux: 3 ascending beam scores, tokens" "$PY" -c "
import json
rows=[json.loads(l) for l in open('$work/aux/$TASK-predict_with_aux.jsonl-00000-of-00001')]
assert len(rows)==$nval
for r in rows:
  s=r['aux']['scores']
  assert len(s)==3 and s==sorted(s), s
  assert isinstance(r['prediction_tokens'], list) and 0 not in r['prediction_tokens'], r
"
show=""

# --- eval: one checkpoint, then every checkpoint ('all'), then again (all skipped).
ev=(--gin_file=runs/eval.gin "${D[@]}" --gin.MIXTURE_OR_TASK_NAME="'$TASK'"
    --gin.utils.DatasetConfig.split="'validation'" --gin.utils.DatasetConfig.batch_size=8
    --gin.seqio.Evaluator.num_examples=8)
t5xx eval "${model[@]}" "${ev[@]}" --gin.CHECKPOINT_PATH="'$ckpt'" --gin.EVAL_OUTPUT_DIR="'$work/eval1'" \
  >"$work/eval1.log" 2>&1
check "eval exits 0" test $? = 0
show="$work/eval1.log"
check "eval metrics: bleu and sequence_accuracy at step 6" "$PY" -c "
import json
rows=[json.loads(l) for l in open('$work/eval1/inference_eval/$TASK-metrics.jsonl')]
assert [r['step'] for r in rows]==[6], rows
assert {'bleu','sequence_accuracy'} <= set(rows[0]), rows
"
check "eval TensorBoard eval/ tags" compgen -G "$work/eval1/inference_eval/$TASK/events.out.tfevents.*"
t5xx eval "${model[@]}" "${ev[@]}" --gin.CHECKPOINT_PATH="'$run'" --gin.EVAL_OUTPUT_DIR="'$work/eval_all'" \
  --gin.utils.RestoreCheckpointConfig.mode="'all'" >"$work/eval_all.log" 2>&1
show="$work/eval_all.log"
check "mode 'all' evaluates checkpoints 0, 3, 6 in order" "$PY" -c "
import json
rows=[json.loads(l) for l in open('$work/eval_all/inference_eval/$TASK-metrics.jsonl')]
assert [r['step'] for r in rows]==[0,3,6], rows
"
t5xx eval "${model[@]}" "${ev[@]}" --gin.CHECKPOINT_PATH="'$run'" --gin.EVAL_OUTPUT_DIR="'$work/eval_all'" \
  --gin.utils.RestoreCheckpointConfig.mode="'all'" >"$work/eval_all2.log" 2>&1
show="$work/eval_all2.log"
check "a rerun skips the 3 evaluated checkpoints" grep -q "0 checkpoint(s) evaluated, 3 skipped" "$work/eval_all2.log"
# Issue 32's kind (results reused across changed settings): a rerun on
# another split must not skip the checkpoints evaluated on the first one.
expect_error "eval 'all' refuses to skip checkpoints evaluated with other settings" \
  "the checkpoints listed in $work/eval_all/eval.$TASK.ckpt were written with t5x.utils.DatasetConfig.split = 'validation'; this run has 'train'; this run would skip them as evaluated" -- \
  t5xx eval "${model[@]}" "${ev[@]}" --gin.CHECKPOINT_PATH="'$run'" --gin.EVAL_OUTPUT_DIR="'$work/eval_all'" \
  --gin.utils.RestoreCheckpointConfig.mode="'all'" --gin.utils.DatasetConfig.split="'train'"
expect_error "config refuses it too" \
  "the checkpoints listed in $work/eval_all/eval.$TASK.ckpt were written with t5x.utils.DatasetConfig.split = 'validation'; this run has 'train'; this run would skip them as evaluated" -- \
  t5xx config "${model[@]}" "${ev[@]}" --gin.CHECKPOINT_PATH="'$run'" --gin.EVAL_OUTPUT_DIR="'$work/eval_all'" \
  --gin.utils.RestoreCheckpointConfig.mode="'all'" --gin.utils.DatasetConfig.split="'train'"
show=""

# --- inference evaluation under tensor parallelism (2 processes, 'model'
# axis 2, vocabulary-parallel logits): its decodes at step 4 equal those
# `t5xx eval` makes in one process from the checkpoint of that step.
tp="$work/tp"
timeout -k 5 300 "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train "${model[@]}" --gin_file=runs/finetune.gin \
  "${D[@]}" --gin.MODEL_DIR="'$tp'" --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" \
  --gin.TRAIN_STEPS=4 --gin.BATCH_SIZE=4 --gin.EVAL_PERIOD=4 --gin.EVAL_STEPS=1 --gin.USE_CACHED_TASKS=False \
  --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None \
  --gin.EVALUATOR_NUM_EXAMPLES=8 --gin.DROPOUT_RATE=0.0 \
  --gin.partitioning.PjitPartitioner.num_partitions=2 >"$work/tp.log" 2>&1
check "tensor-parallel train with infer_eval exits 0" test $? = 0
t5xx eval "${model[@]}" "${ev[@]}" --gin.CHECKPOINT_PATH="'$tp/checkpoint_4'" --gin.EVAL_OUTPUT_DIR="'$work/eval_tp'" \
  --gin.utils.DatasetConfig.batch_size=4 >"$work/eval_tp.log" 2>&1
show="$work/tp.log $work/eval_tp.log"
check "tensor-parallel decodes equal one process's" \
  cmp "$tp/inference_eval/$TASK-000004.jsonl" "$work/eval_tp/inference_eval/$TASK-000004.jsonl"
# ... and under data parallelism (2x1): each replica decodes one of the 2
# batches of 4 examples; the merged decodes equal one process's. This run
# saves in Orbax's layout (train.use_orbax = True, both processes writing),
# which `t5xx eval` then restores by its checkpoint_4 path (mode 'specific').
dp="$work/dp"
timeout -k 5 300 "$T5XX" launch --nproc_per_node=2 -- "$T5XX" train "${model[@]}" --gin_file=runs/finetune.gin \
  "${D[@]}" --gin.MODEL_DIR="'$dp'" --gin.MIXTURE_OR_TASK_NAME="'$TASK'" "--gin.TASK_FEATURE_LENGTHS=$LENS" \
  --gin.TRAIN_STEPS=4 --gin.BATCH_SIZE=4 --gin.EVAL_PERIOD=4 --gin.EVAL_STEPS=1 --gin.USE_CACHED_TASKS=False \
  --gin.INITIAL_CHECKPOINT_PATH=None --gin.utils.CheckpointConfig.restore=None \
  --gin.EVALUATOR_NUM_EXAMPLES=8 --gin.DROPOUT_RATE=0.0 --gin.train.use_orbax=True >"$work/dp.log" 2>&1
t5xx eval "${model[@]}" "${ev[@]}" --gin.CHECKPOINT_PATH="'$dp/checkpoint_4'" --gin.EVAL_OUTPUT_DIR="'$work/eval_dp'" \
  --gin.utils.DatasetConfig.batch_size=4 >"$work/eval_dp.log" 2>&1
show="$work/dp.log" check "data-parallel run with use_orbax: an Orbax checkpoint_4, a database per process" \
  test -f "$dp/checkpoint_4/state/manifest.ocdbt" -a -d "$dp/checkpoint_4/state/ocdbt.process_1" \
  -a ! -e "$dp/checkpoint_4/checkpoint"
show="$work/dp.log $work/eval_dp.log" check "data-parallel inference evaluation during train equals one process's (eval of the Orbax checkpoint)" \
  cmp "$dp/inference_eval/$TASK-000004.jsonl" "$work/eval_dp/inference_eval/$TASK-000004.jsonl"
show=""

# --- infer and eval across processes (issue 35): under `t5xx launch`, 2
# data replicas (2x1: each decodes every other batch) and tensor
# parallelism (1x2: vocabulary-parallel logits) write one process's bytes;
# scores under tensor parallelism sum the row-parallel pieces in another
# order (float32 rounding only). A 1x2 run stopped mid-way resumes from its
# completed chunks (and gives one process's predictions).
launch2() { timeout -k 5 300 "$T5XX" launch --nproc_per_node=2 -- "$T5XX" "$@"; }
launch2 infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/mp1'" >"$work/mp1.log" 2>&1
show="$work/mp1.log" check "infer on 2 processes (2x1): predictions = one process's" \
  cmp "$pred" "$work/mp1/$TASK-predict.jsonl-00000-of-00001"
show="$work/mp1.log" check "2x1: each data replica decodes its share, the chief writes" \
  bash -c 'grep -q "each data replica decodes one batch in every 2" "$0" &&
           [ "$(grep -c "^\[infer\] task .* chunk 0: " "$0")" = 1 ]' "$work/mp1.log"
launch2 infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/mpa'" "${aux[@]}" >"$work/mpa.log" 2>&1
show="$work/mpa.log" check "2x1 beam search, all beams, scores and ids = one process's" \
  cmp "$work/aux/$TASK-predict_with_aux.jsonl-00000-of-00001" "$work/mpa/$TASK-predict_with_aux.jsonl-00000-of-00001"
for np in 1 2; do
  launch2 infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/mps$np'" --gin.infer.mode="'score'" \
    --gin.partitioning.PjitPartitioner.num_partitions=$np >"$work/mps$np.log" 2>&1
done
show="$work/mps1.log" check "2x1 score = one process's" \
  cmp "$work/score/$TASK-score.jsonl-00000-of-00001" "$work/mps1/$TASK-score.jsonl-00000-of-00001"
show="$work/mps2.log" check "1x2 score: the inputs of one process's, scores within float32 rounding" "$PY" -c "
import json
one=[json.loads(l) for l in open('$work/score/$TASK-score.jsonl-00000-of-00001')]
two=[json.loads(l) for l in open('$work/mps2/$TASK-score.jsonl-00000-of-00001')]
assert [r['inputs'] for r in one]==[r['inputs'] for r in two]
worst=max(abs(a['score']-b['score'])/abs(a['score']) for a,b in zip(one,two))
assert worst < 2e-6, worst
"
mpr="$work/mpr"
launch2 infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$mpr'" --gin.infer.checkpoint_period=2 \
  --gin.partitioning.PjitPartitioner.num_partitions=2 >"$work/mpr1.log" 2>&1 &
for _ in $(seq 600); do
  [ "$(ls "$mpr"/tmp-*/*-chunk?????.COMPLETED 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.1
done
kill -TERM %% 2>/dev/null; wait %%; rc=$?
show="$work/mpr1.log" check "1x2 infer stopped mid-way (exit $rc), its merged file not written" \
  test "$rc" != 0 -a ! -e "$mpr/$TASK-predict.jsonl-00000-of-00001"
launch2 infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$mpr'" --gin.infer.checkpoint_period=2 \
  --gin.partitioning.PjitPartitioner.num_partitions=2 >"$work/mpr2.log" 2>&1
show="$work/mpr2.log" check "the restarted 1x2 infer reuses the completed chunks; its predictions = one process's" \
  bash -c 'grep -q "chunk 2 of task .* is complete; skipping it" "$0" && cmp "$1" "$2"' \
  "$work/mpr2.log" "$pred" "$mpr/$TASK-predict.jsonl-00000-of-00001"
# (eval in batches of 2: 4 batches per checkpoint, 2 for each replica)
evmp=("${ev[@]}" --gin.CHECKPOINT_PATH="'$run'" --gin.utils.RestoreCheckpointConfig.mode="'all'"
      --gin.utils.DatasetConfig.batch_size=2)
t5xx eval "${model[@]}" "${evmp[@]}" --gin.EVAL_OUTPUT_DIR="'$work/mpe0'" >"$work/mpe0.log" 2>&1
for np in 1 2; do
  launch2 eval "${model[@]}" "${evmp[@]}" --gin.EVAL_OUTPUT_DIR="'$work/mpe$np'" \
    --gin.partitioning.PjitPartitioner.num_partitions=$np >"$work/mpe$np.log" 2>&1
  show="$work/mpe0.log $work/mpe$np.log" check "eval 'all' on 2 processes (num_partitions $np) = one process's decodes, metrics, list" \
    bash -c 'n=0; cd "$0/inference_eval" && for f in *.jsonl; do cmp "$f" "$1/inference_eval/$f" || exit 1; n=$((n+1)); done &&
             [ "$n" = 4 ] && cmp "$0/eval.$2.ckpt" "$1/eval.$2.ckpt"' "$work/mpe0" "$work/mpe$np" "$TASK"
done
launch2 infer "${model[@]}" "${infer[@]}" --gin.INFER_OUTPUT_DIR="'$work/x'" \
  --gin.partitioning.PjitPartitioner.num_partitions=3 >"$work/np3.log" 2>&1
rc=$?
show="$work/np3.log" check "num_partitions 3 on 2 processes: exit 2, the binding and the fix named, no output dir" \
  bash -c '[ "$0" = 2 ] && grep -q "^t5xx: error: rank [01] of 2 on host [^:]*: t5xx infer: partitioning.PjitPartitioner.num_partitions = 3 does not divide the run.s process count, 2; launch a multiple of it" "$1" && [ ! -e "$2" ]' \
  "$rc" "$work/np3.log" "$work/x"
show=""

# --- errors
expect_error "bad infer mode" "infer.mode" -- t5xx infer "${model[@]}" "${infer[@]}" \
  --gin.INFER_OUTPUT_DIR="'$work/x'" --gin.infer.mode="'decode'"
expect_error "topk and topp" "topk and topp cannot both be set" -- t5xx infer "${model[@]}" "${infer[@]}" \
  --gin.INFER_OUTPUT_DIR="'$work/x'" --gin.decoding.temperature_sample.topk=4 \
  --gin.decoding.temperature_sample.topp=0.9
expect_error "missing checkpoint" "is not a checkpoint" -- t5xx infer "${model[@]}" "${infer[@]}" \
  --gin.INFER_OUTPUT_DIR="'$work/x'" --gin.CHECKPOINT_PATH="'$work/nowhere'"
expect_error "shard_id >= num_shards" "must be below" -- t5xx infer "${model[@]}" "${infer[@]}" \
  --gin.INFER_OUTPUT_DIR="'$work/x'" --gin.infer.shard_id=2 --gin.infer.num_shards=2
expect_error "decode_fn called" "without the parentheses" -- t5xx infer "${model[@]}" "${infer[@]}" \
  --gin.INFER_OUTPUT_DIR="'$work/x'" --gin.models.EncoderDecoderModel.decode_fn=@decoding.beam_search\(\)

echo "$pass passed, $failures failed ($((SECONDS - t0)) s)"
[ "$failures" = 0 ]
