#!/usr/bin/env python3
"""t5xx infer against CTranslate2 and Transformers decoding on this CPU.

Run through scripts/bench_decoding_peers.sh (it makes the venv). Every
engine decodes the same token ids with the same weights, in alternating
order, round after round, on the machine's intra-op threads:

  * the model: T5.1.1 small dimensions with the demo vocabulary (8192; a
    t5xx checkpoint: --checkpoint, else one made here with random weights
    by `t5xx train` at step 0), exported by `t5xx export` to a Transformers
    directory, converted by CTranslate2's ct2-transformers-converter;
  * the inputs: the first --examples examples of the demo's
    c4_demo_span_corruption validation split (`t5xx data show`, inputs of at
    most 128 tokens), written as token ids for a JSON-lines task;
  * the cases: greedy at batch 1 and 32, beam search with 4 beams at batch
    16, at most --max_decode tokens per output;
  * the engines: `t5xx infer` (float32: network dtype and restore dtype),
    `t5xx infer --int8_weights=true` (t5xx_int8), CTranslate2 float32 and int8 (compute_type), Transformers eager
    (float32, generate()); with --t5xx_baseline, another t5xx binary (an
    earlier commit's build) as one more engine.

Reported per engine and case (medians over --rounds):
  tokens_per_s  output tokens (up to and including EOS; a beam search's
                best output per example) over the decoding seconds: for
                t5xx its [infer] chunk time (batches, decoding, writing),
                for the others the translate/generate calls;
  startup_s     process start to the first batch (t5xx: its wall time
                less the chunk time; the others: imports and model load
                in the worker process);
  ratio         tokens_per_s over t5xx's in the same round.
It also counts the greedy outputs of every engine that are the same ids as
t5xx float32's (CTranslate2 float32 and Transformers differ from it by float
rounding only; the int8 engines by quantization), and the share of output
tokens that agree position by position. Nothing it makes goes into the repository (--work).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

CASES = {"greedy1": ("greedy", 1), "greedy32": ("greedy", 32), "beam4": ("beam", 16)}
ENGINES = ["t5xx", "t5xx_int8", "ct2_float32", "ct2_int8", "transformers"]

TASK_GIN = """
from __gin__ import dynamic_registration
import seqio

bench/seqio.Task:
  name = 'decoding_peers_task'
  source = @bench/t5xx.seqio.JsonLinesDataSource()
  output_features = {'inputs': @seqio.Feature(), 'targets': @seqio.Feature()}
  shuffle_buffer_size = None
bench/t5xx.seqio.JsonLinesDataSource.split_to_filepattern = {'validation': '%(data)s'}
seqio.Feature.vocabulary = %%VOCABULARY
t5xx.seqio.register.tasks = [@bench/seqio.Task()]
"""

# The worker run in the venv: loads one peer engine, decodes, prints JSON.
WORKER = r"""
import json, sys, time
t_start = float(sys.argv[1])
engine, model_dir, examples_file, mode, batch, max_decode, threads = sys.argv[2:9]
batch, max_decode, threads = int(batch), int(max_decode), int(threads)
rows = [json.loads(l)["inputs"] for l in open(examples_file)]
beams = 4 if mode == "beam" else 1
out = []
if engine.startswith("ct2"):
  import ctranslate2
  vocab = json.load(open(model_dir + "/ct2/shared_vocabulary.json"))
  index = {t: i for i, t in enumerate(vocab)}
  tr = ctranslate2.Translator(model_dir + "/ct2", device="cpu",
                              compute_type=engine.split("_")[1], intra_threads=threads,
                              inter_threads=1)
  src = [[vocab[i] for i in r] for r in rows]
  ready = time.time()
  t0 = time.time()
  for i in range(0, len(src), batch):
    res = tr.translate_batch(src[i:i + batch], beam_size=beams, max_decoding_length=max_decode,
                             length_penalty=0.6 if beams > 1 else 1.0, num_hypotheses=1,
                             return_end_token=True)
    for r in res:
      out.append([index[t] for t in r.hypotheses[0]])
  seconds = time.time() - t0
else:
  import torch, transformers
  torch.set_num_threads(threads)
  model = transformers.T5ForConditionalGeneration.from_pretrained(model_dir + "/hf").eval()
  ready = time.time()
  t0 = time.time()
  with torch.no_grad():
    for i in range(0, len(rows), batch):
      chunk = rows[i:i + batch]
      n = max(len(r) for r in chunk)
      ids = torch.tensor([r + [0] * (n - len(r)) for r in chunk])
      mask = torch.tensor([[1] * len(r) + [0] * (n - len(r)) for r in chunk])
      gen = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, num_beams=beams,
                           max_new_tokens=max_decode, length_penalty=0.6 if beams > 1 else 1.0,
                           early_stopping=beams > 1)
      for g in gen.tolist():
        g = g[1:]
        while g and g[-1] == 0:
          g.pop()
        out.append(g)
  seconds = time.time() - t0
print(json.dumps({"startup_s": ready - t_start, "seconds": seconds, "outputs": out}))
"""


def run(cmd, **kw):
  r = subprocess.run(cmd, capture_output=True, text=True, **kw)
  if r.returncode != 0:
    sys.exit("error: %s failed (exit %d):\n%s%s" % (" ".join(cmd[:3]), r.returncode,
                                                    r.stdout[-3000:], r.stderr[-3000:]))
  return r


def gin_common(a):
  return ["--gin_file=models/t5_1_1/small.gin", "--data_dir=" + a.data_dir,
          "--gin.network.T5Config.vocab_size=8192",
          "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file="
          "'c4_demo/sentencepiece.model'"]


def prepare(a):
  os.makedirs(a.work, exist_ok=True)
  ckpt = a.checkpoint
  if not ckpt:
    ckpt = os.path.join(a.work, "model", "checkpoint_0")
    if not os.path.isdir(ckpt):
      run([a.t5xx, "train", "--peak_flops_per_s=1e11", "--gin_file=examples/t5_1_1_tiny_demo.gin",
           *gin_common(a), "--gin.DROPOUT_RATE=0.0", "--gin.TRAIN_STEPS=0",
           "--gin.MODEL_DIR='%s'" % os.path.dirname(ckpt),
           "--gin.utils.SaveCheckpointConfig.period=1"])
  hf = os.path.join(a.work, "peers", "hf")
  if not os.path.isfile(os.path.join(hf, "config.json")):
    run([a.t5xx, "export", *gin_common(a), "--gin.DROPOUT_RATE=0.0",
         "--checkpoint_path=" + ckpt, "--output_dir=" + hf])
  ct2 = os.path.join(a.work, "peers", "ct2")
  if not os.path.isfile(os.path.join(ct2, "model.bin")):
    run([os.path.join(a.venv, "bin", "ct2-transformers-converter"), "--model", hf,
         "--output_dir", ct2])
  examples = os.path.join(a.work, "examples.jsonl")
  r = run([a.t5xx, "data", "show", "--task=c4_demo_span_corruption", "--split=validation",
           "--n=%d" % a.examples, "--lengths=inputs=128,targets=64",
           "--data_dir=" + a.data_dir])
  with open(examples, "w") as f:
    for line in r.stdout.splitlines():
      row = json.loads(line)
      f.write(json.dumps({"inputs": row["inputs"], "targets": row["targets"]}) + "\n")
  task = os.path.join(a.work, "task.gin")
  with open(task, "w") as f:
    f.write(TASK_GIN % {"data": examples})
  worker = os.path.join(a.work, "worker.py")
  with open(worker, "w") as f:
    f.write(WORKER)
  return ckpt, examples, task, worker


def run_t5xx(a, ckpt, task, mode, batch, out_dir, binary, extra=()):
  decode = (["--gin.models.EncoderDecoderModel.decode_fn=@decoding.temperature_sample"]
            if mode == "greedy" else
            ["--gin.models.EncoderDecoderModel.decode_fn=@decoding.beam_search",
             "--gin.models.EncoderDecoderModel.predict_batch_with_aux.num_decodes=4"])
  cmd = [binary, "infer", *gin_common(a), "--gin_file=runs/infer.gin", "--gin_file=" + task,
         "--gin.MIXTURE_OR_TASK_NAME='decoding_peers_task'",
         "--gin.TASK_FEATURE_LENGTHS={'inputs': 128, 'targets': %d}" % a.max_decode,
         "--gin.CHECKPOINT_PATH='%s'" % ckpt, "--gin.INFER_OUTPUT_DIR='%s'" % out_dir,
         "--gin.utils.DatasetConfig.split='validation'",
         "--gin.utils.DatasetConfig.batch_size=%d" % batch,
         "--gin.network.T5Config.dtype='float32'",
         "--gin.utils.RestoreCheckpointConfig.dtype='float32'",
         "--gin.write_inferences_to_file.output_ids=True", *decode, *extra]
  shutil.rmtree(out_dir, ignore_errors=True)  # else infer skips a finished task
  t0 = time.time()
  r = run(cmd)
  wall = time.time() - t0
  seconds = sum(float(l.split(" examples in ")[1].split(" s")[0])
                for l in r.stdout.splitlines() if l.startswith("[infer] task ") and " chunk " in l)
  with open(os.path.join(out_dir, "decoding_peers_task-predict.jsonl-00000-of-00001")) as f:
    outs = [json.loads(l)["prediction_tokens"] for l in f]
  return {"startup_s": wall - seconds, "seconds": seconds, "outputs": outs}


def count_tokens(outputs):
  return sum(len(o) for o in outputs)


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  p.add_argument("--t5xx", default="build/bin/t5xx")
  p.add_argument("--venv", default=os.path.expanduser("~/.cache/t5xx/ct2-venv"))
  p.add_argument("--data_dir", default=os.path.expanduser("~/.cache/t5xx"))
  p.add_argument("--checkpoint", default="", help="a T5.1.1 small checkpoint (demo vocabulary)")
  p.add_argument("--work", default="/tmp/t5xx_decoding_peers")
  p.add_argument("--rounds", type=int, default=3)
  p.add_argument("--cases", default="greedy1,greedy32,beam4")
  p.add_argument("--engines", default=",".join(ENGINES))
  p.add_argument("--examples", type=int, default=64)
  p.add_argument("--max_decode", type=int, default=64)
  p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
  p.add_argument("--t5xx_baseline", default="",
                 help="another t5xx binary (e.g. an earlier commit's) run as engine t5xx_baseline")
  p.add_argument("--json_out", default="")
  a = p.parse_args()
  ckpt, examples, task, worker = prepare(a)
  engines = a.engines.split(",") + (["t5xx_baseline"] if a.t5xx_baseline else [])
  results = {}  # (case, engine) -> list of rounds
  for rnd in range(a.rounds):
    for case in a.cases.split(","):
      mode, batch = CASES[case]
      order = engines[rnd % len(engines):] + engines[:rnd % len(engines)]  # alternate
      for engine in order:
        if engine.startswith("t5xx"):
          r = run_t5xx(a, ckpt, task, mode, batch,
                       os.path.join(a.work, "infer", engine, case, str(rnd)),
                       a.t5xx_baseline if engine == "t5xx_baseline" else a.t5xx,
                       ["--int8_weights=true"] if engine == "t5xx_int8" else [])
        else:
          r = json.loads(run([os.path.join(a.venv, "bin", "python3"), worker, repr(time.time()),
                              engine, os.path.join(a.work, "peers"), examples, mode, str(batch),
                              str(a.max_decode), str(a.threads)]).stdout)
        r["tokens"] = count_tokens(r["outputs"])
        r["tokens_per_s"] = r["tokens"] / r["seconds"]
        results.setdefault((case, engine), []).append(r)
        print("[round %d] %-9s %-12s %7.1f tokens/s  start-up %.2f s  (%d tokens in %.2f s)" % (
            rnd, case, engine, r["tokens_per_s"], r["startup_s"], r["tokens"], r["seconds"]),
            flush=True)
  summary = {}
  print("\ncase       engine        tokens/s  x t5xx  start-up s")
  for case in a.cases.split(","):
    base = [r["tokens_per_s"] for r in results[(case, "t5xx")]] if "t5xx" in engines else None
    for engine in engines:
      rs = results[(case, engine)]
      tps = statistics.median(r["tokens_per_s"] for r in rs)
      ratios = [r["tokens_per_s"] / b for r, b in zip(rs, base)] if base else []
      s = {"tokens_per_s": tps, "ratio_to_t5xx": statistics.median(ratios) if ratios else None,
           "startup_s": statistics.median(r["startup_s"] for r in rs)}
      summary["%s/%s" % (case, engine)] = s
      print("%-10s %-12s %9.1f  %6s  %6.2f" % (case, engine, tps,
            "%.2f" % s["ratio_to_t5xx"] if ratios else "-", s["startup_s"]))
    # Greedy: the same ids from every float32 engine; int8's agreement.
    if CASES[case][0] == "greedy":
      ref = results[(case, engines[0])][0]["outputs"]
      strip = lambda o: [t for t in o if t != 1]  # EOS: CTranslate2 returns it, t5xx too
      for engine in engines[1:]:
        got = results[(case, engine)][0]["outputs"]
        same = sum(strip(x) == strip(y) for x, y in zip(ref, got))
        pos = sum(len(strip(x)) for x in ref)
        agree = sum(sum(u == v for u, v in zip(strip(x), strip(y))) for x, y in zip(ref, got))
        print("  %s: %d of %d outputs equal to %s's; %.1f%% of its tokens agree by position" % (
            engine, same, len(ref), engines[0], 100.0 * agree / max(pos, 1)))
        summary["%s/%s" % (case, engine)]["outputs_equal_to_" + engines[0]] = same
        summary["%s/%s" % (case, engine)]["token_agreement"] = agree / max(pos, 1)
  if a.json_out:
    with open(a.json_out, "w") as f:
      json.dump(summary, f, indent=1)


if __name__ == "__main__":
  main()
