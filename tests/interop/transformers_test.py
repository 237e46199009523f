"""`t5xx export` and `t5xx import` against Hugging Face Transformers itself.

Usage: transformers_test.py T5XX T5XX_LOGITS WORK_DIR  (run_transformers_test.sh
runs it in the Transformers venv: Debian's python3-torch 1.13, transformers
4.40.2, safetensors, sentencepiece; nothing is downloaded -- every model is
built from a config with random weights, seed 0).

Checks, for T5.1.1 (gated GELU, untied; model.safetensors), T5.1.0 (ReLU,
tied; pytorch_model.bin sharded a tensor per file), mT5 (model_type mt5; sharded safetensors with an
index) and ByT5 (bytes, 3 encoder + 1 decoder layers):
  import: `t5xx import` of Transformers' save_pretrained directory, then
    t5xx's logits for a batch (tests/interop/t5xx_logits.cc) within 1e-5 of
    T5ForConditionalGeneration's;
  round trip: `t5xx export` of the imported checkpoint gives back every
    tensor bit for bit, and from_pretrained + the tokenizer classes load it.
Then, for T5.1.1: `t5xx train` finetunes the imported model 2 steps on a
small text task (runs/finetune.gin, strict = False), `t5xx export` writes
the trained checkpoint, and
  export: Transformers' logits are within 1e-5 of t5xx's, its T5Tokenizer
    gives the task's token ids, and its greedy `generate` gives the tokens
    `t5xx infer` (greedy temperature_sample, output_ids) gives.
Exits 1 naming each failed check.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
from safetensors.numpy import load_file
from transformers import (ByT5Tokenizer, MT5Config, MT5ForConditionalGeneration, T5Config,
                          T5ForConditionalGeneration, T5Tokenizer)

T5XX, T5XX_LOGITS, WORK = sys.argv[1:4]
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPM = os.path.join(SRC, "tests/testdata/seqio_cache/vocab/interop_upper.model")  # 80 pieces
TIED_COPIES = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
failures = []


def check(name, ok, detail=""):
  print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)), flush=True)
  if not ok:
    failures.append(name)


def run(args, **kw):
  return subprocess.run(args, capture_output=True, text=True, **kw)


def hf_logits(model, batch):
  enc = torch.tensor(batch["encoder_input_tokens"])
  dec = torch.tensor(batch["decoder_input_tokens"])
  with torch.no_grad():
    return model(input_ids=enc, attention_mask=(enc > 0).long(),
                 decoder_input_ids=dec).logits.numpy()


def t5xx_logits(gin_file, checkpoint, batch_file):
  r = run([T5XX_LOGITS, "--gin_file=" + gin_file, "--checkpoint_path=" + checkpoint,
           "--batch=" + batch_file])
  if r.returncode != 0:
    raise RuntimeError(r.stderr)
  return np.array(json.loads(r.stdout)["logits"], dtype=np.float32)


def make_batch(vocab_top, path):
  rng = np.random.RandomState(0)
  enc = rng.randint(3, vocab_top, size=(2, 9)).tolist()
  enc[1][6:] = [0, 0, 0]  # padding in the second row
  dec = [[0] + rng.randint(3, vocab_top, size=5).tolist() for _ in range(2)]
  batch = {"encoder_input_tokens": enc, "decoder_input_tokens": dec}
  with open(path, "w") as f:
    json.dump(batch, f)
  return batch


FAMILIES = {
    # name: (config class, model class, config fields, how save_pretrained writes it)
    "t5_1_1": (T5Config, T5ForConditionalGeneration,
               dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False), "safetensors"),
    "t5_1_0": (T5Config, T5ForConditionalGeneration,
               dict(feed_forward_proj="relu", tie_word_embeddings=True), "bin_sharded"),
    "mt5": (MT5Config, MT5ForConditionalGeneration,
            dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False), "sharded"),
    "byt5": (T5Config, T5ForConditionalGeneration,
             dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False, vocab_size=384,
                  num_layers=3, num_decoder_layers=1), "safetensors"),
}


def import_and_round_trip(name):
  config_cls, model_cls, fields, how = FAMILIES[name]
  sizes = dict(vocab_size=128, d_model=32, d_kv=8, num_heads=4, d_ff=64, num_layers=2,
               num_decoder_layers=2, decoder_start_token_id=0)
  sizes.update(fields)
  torch.manual_seed(0)
  model = model_cls(config_cls(**sizes)).eval()
  hf_dir = os.path.join(WORK, "hf", name)
  kwargs = {"safe_serialization": not how.startswith("bin")}
  if how == "sharded":
    kwargs["max_shard_size"] = "40KB"
  if how == "bin_sharded":
    kwargs["max_shard_size"] = "1KB"  # a shard per tensor: dicts of one tensor (pickle's SETITEM)
  model.save_pretrained(hf_dir, **kwargs)
  if name == "byt5":
    ByT5Tokenizer(extra_ids=0).save_pretrained(hf_dir)
  else:
    T5Tokenizer(SPM, extra_ids=16, legacy=True).save_pretrained(hf_dir)
  files = sorted(os.listdir(hf_dir))
  if how == "sharded":
    check(name + ": Transformers wrote sharded safetensors",
          "model.safetensors.index.json" in files, files)
  if how == "bin_sharded":
    check(name + ": Transformers wrote a pytorch_model.bin shard per tensor",
          "pytorch_model.bin.index.json" in files and
          sum(f.endswith(".bin") for f in files) > 10, files)

  out = os.path.join(WORK, "imported", name)
  r = run([T5XX, "import", "--hf_model_dir=" + hf_dir, "--output_dir=" + out])
  check(name + ": t5xx import exits 0", r.returncode == 0, r.stderr)
  if r.returncode != 0:
    return
  batch_file = os.path.join(WORK, name + "_batch.json")
  batch = make_batch(80 if name != "byt5" else 259, batch_file)
  ours = t5xx_logits(out + "/model.gin", out + "/checkpoint_0", batch_file)
  theirs = hf_logits(model, batch)
  diff = float(np.abs(ours - theirs).max())
  print(f"  {name}: import: max |t5xx - Transformers| logits = {diff:.3g} "
        f"(logits up to {float(np.abs(theirs).max()):.3g})")
  check(name + ": imported logits within 1e-5 of Transformers'", diff <= 1e-5, diff)

  exported = os.path.join(WORK, "exported", name)
  r = run([T5XX, "export", "--gin_file=" + out + "/model.gin",
           "--checkpoint_path=" + out + "/checkpoint_0", "--output_dir=" + exported])
  check(name + ": t5xx export exits 0", r.returncode == 0, r.stderr)
  if r.returncode != 0:
    return
  tensors = load_file(os.path.join(exported, "model.safetensors"))
  want = {k: v.numpy() for k, v in model.state_dict().items() if k not in TIED_COPIES}
  if fields["tie_word_embeddings"]:
    want.pop("lm_head.weight", None)
  same = set(tensors) == set(want) and all(
      tensors[k].dtype == np.float32 and np.array_equal(tensors[k], want[k]) for k in want)
  check(name + ": import -> export gives back every tensor bit for bit", same,
        sorted(set(tensors) ^ set(want)))
  again = model_cls.from_pretrained(exported).eval()
  check(name + ": from_pretrained(export) computes the same logits",
        np.array_equal(hf_logits(again, batch), theirs))
  if name == "byt5":
    tok = ByT5Tokenizer.from_pretrained(exported)
    check(name + ": ByT5Tokenizer loads", tok("AB").input_ids == [68, 69, 1], tok("AB").input_ids)
  else:
    tok = T5Tokenizer.from_pretrained(exported)
    ref = T5Tokenizer(SPM, extra_ids=16, legacy=True)
    text = "THE QUICK BROWN FOX"
    check(name + ": T5Tokenizer loads the exported vocabulary",
          tok(text).input_ids == ref(text).input_ids and
          tok.convert_tokens_to_ids("<extra_id_0>") == 95, tok(text).input_ids)


TASK_GIN = """
from __gin__ import dynamic_registration
import seqio
from seqio import preprocessors

hf/seqio.Task:
  name = 'transformers_interop_task'
  source = @hf/t5xx.seqio.JsonLinesDataSource()
  preprocessors = [@preprocessors.tokenize, @preprocessors.append_eos]
  output_features = {'inputs': @seqio.Feature(), 'targets': @seqio.Feature()}
hf/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {
    'train': '%(data)s', 'validation': '%(data)s'}
seqio.Feature.vocabulary = %%VOCABULARY
t5xx.seqio.register.tasks = [@hf/seqio.Task()]
"""

LINES = [("THE CAT SAT", "A CAT"), ("ON THE MAT", "THE MAT"), ("A RED FOX", "FOX"),
         ("THE DOG RAN HOME", "DOG HOME"), ("SHE READ A BOOK", "BOOK"),
         ("WE SAW THE SEA", "THE SEA"), ("IT IS COLD", "COLD"), ("HE SANG", "SANG")]


def finetune_export_generate():
  imported = os.path.join(WORK, "imported", "t5_1_1")
  data = os.path.join(WORK, "task.jsonl")
  with open(data, "w") as f:
    for i, t in LINES:
      f.write(json.dumps({"inputs": i, "targets": t}) + "\n")
  task_gin = os.path.join(WORK, "task.gin")
  with open(task_gin, "w") as f:
    f.write(TASK_GIN % {"data": data})
  lengths = "--gin.TASK_FEATURE_LENGTHS={'inputs': 16, 'targets': 8}"
  model_dir = os.path.join(WORK, "finetuned")
  common = ["--gin_file=" + imported + "/model.gin", "--gin_file=" + task_gin,
            "--gin.MIXTURE_OR_TASK_NAME='transformers_interop_task'", lengths]
  r = run([T5XX, "train", *common, "--gin_file=runs/finetune.gin",
           "--gin.MODEL_DIR='" + model_dir + "'", "--gin.TRAIN_STEPS=2", "--gin.BATCH_SIZE=4",
           "--gin.INITIAL_CHECKPOINT_PATH='" + imported + "/checkpoint_0'",
           "--gin.utils.RestoreCheckpointConfig.strict=False", "--gin.EVAL_PERIOD=100"])
  check("finetuning the imported model exits 0", r.returncode == 0, r.stdout[-2000:] + r.stderr)
  if r.returncode != 0:
    return
  ckpt = model_dir + "/checkpoint_2"
  exported = os.path.join(WORK, "exported", "finetuned")
  r = run([T5XX, "export", "--gin_file=" + imported + "/model.gin",
           "--checkpoint_path=" + ckpt, "--output_dir=" + exported])
  check("t5xx export of the finetuned checkpoint exits 0", r.returncode == 0, r.stderr)
  if r.returncode != 0:
    return
  model = T5ForConditionalGeneration.from_pretrained(exported).eval()
  tok = T5Tokenizer.from_pretrained(exported)
  batch_file = os.path.join(WORK, "finetuned_batch.json")
  batch = make_batch(80, batch_file)
  diff = float(np.abs(t5xx_logits(imported + "/model.gin", ckpt, batch_file) -
                      hf_logits(model, batch)).max())
  print(f"  export: max |t5xx - Transformers| logits = {diff:.3g}")
  check("exported logits within 1e-5 of t5xx's", diff <= 1e-5, diff)

  # The task's token ids (seqio's SentencePiece + EOS) are the tokenizer's.
  r = run([T5XX, "data", "show", *common[:2], "--task=transformers_interop_task",
           "--split=validation", "--n=100"])
  rows = [json.loads(l) for l in r.stdout.splitlines()] if r.returncode == 0 else []
  check("the task's ids are T5Tokenizer's", len(rows) == len(LINES) and all(
      row["inputs"] == tok(i).input_ids for row, (i, _) in zip(rows, LINES)), r.stderr)

  out = os.path.join(WORK, "infer")
  r = run([T5XX, "infer", *common, "--gin_file=runs/infer.gin",
           "--gin.CHECKPOINT_PATH='" + ckpt + "'", "--gin.INFER_OUTPUT_DIR='" + out + "'",
           "--gin.utils.DatasetConfig.split='validation'", "--gin.utils.DatasetConfig.batch_size=4",
           "--gin.models.EncoderDecoderModel.decode_fn=@decoding.temperature_sample",
           "--gin.write_inferences_to_file.output_ids=True",
           # runs/infer.gin restores parameters in bfloat16, as t5x's does;
           # Transformers runs the float32 weights.
           "--gin.utils.RestoreCheckpointConfig.dtype='float32'"])
  check("t5xx infer (greedy) exits 0", r.returncode == 0, r.stdout[-2000:] + r.stderr)
  if r.returncode != 0:
    return
  with open(out + "/transformers_interop_task-predict.jsonl-00000-of-00001") as f:
    preds = [json.loads(l)["prediction_tokens"] for l in f]
  enc = tok([i for i, _ in LINES], padding=True, return_tensors="pt")
  with torch.no_grad():
    gen = model.generate(**enc, do_sample=False, num_beams=1, max_new_tokens=8)
  theirs = []
  for row in gen.tolist():
    row = row[1:]  # the decoder start token
    while row and row[-1] == 0:
      row.pop()
    theirs.append(row)
  print("  greedy tokens: t5xx", preds[:3], "Transformers", theirs[:3])
  check("Transformers' greedy generate equals t5xx infer's greedy tokens", preds == theirs,
        (preds, theirs))


def main():
  for name in FAMILIES:
    import_and_round_trip(name)
  finetune_export_generate()
  if failures:
    print(f"{len(failures)} checks failed: {failures}")
    return 1
  print("all checks passed")
  return 0


if __name__ == "__main__":
  sys.exit(main())
