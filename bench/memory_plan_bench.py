#!/usr/bin/env python3
"""The memory plan against the measured peak: `t5xx train` per cell of a
matrix, peak RSS of every process (GNU time's %M, KiB) beside the peak the
plan printed ("[setup] memory plan per process: ... peak X GiB").

Cells: layout x remat policy x network x size. Layouts (N = --processes):
  1x1        one process
  Nx1        data parallel (parameters replicated)
  zero3-Nx1  ZeRO-3: parameter_partitioning_dims = 2 on N data replicas
  1xN        Megatron-style tensor parallelism (num_partitions = N)
  2x2        data 2 x model 2
  act2-1xN   1xN under activation_partitioning_dims = 2
Each cell trains 2 steps (batch --batch x the lengths below, float32,
Adafactor), evaluates 1 batch and saves one checkpoint (the async snapshot
is part of the peak).

Usage: bench/memory_plan_bench.py --t5xx build/bin/t5xx [--cells ci]
  [--networks decoder_only,t5_1_1] [--sizes small,base] [--layouts ...]
  [--remats none,minimal,full] [--out table.md]
--cells ci runs the CI-sized part (CI_CELLS, the ctest run_memory_plan_matrix):
one cell of each layout, remat policy and network at the small size.
Exits 1 when a cell's plan misses its measured peak by more than
--tolerance (default 0.15). Runs from the repository root (configs/).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SIZES = {  # dims of each network at each size
    "decoder_only": {
        "small": dict(emb_dim=512, num_heads=8, head_dim=64, mlp_dim=1024, num_layers=8),
        "base": dict(emb_dim=768, num_heads=12, head_dim=64, mlp_dim=2048, num_layers=12),
        # configs/models/decoder_only/large.gin's (issue 34's headline cell)
        "large": dict(emb_dim=1024, num_heads=16, head_dim=64, mlp_dim=2816, num_layers=24),
    },
    "t5_1_1": {
        "small": dict(emb_dim=512, num_heads=6, head_dim=64, mlp_dim=1024,
                      num_encoder_layers=8, num_decoder_layers=8),
        "base": dict(emb_dim=768, num_heads=12, head_dim=64, mlp_dim=2048,
                     num_encoder_layers=12, num_decoder_layers=12),
    },
}
CI_CELLS = ["decoder_only-small-1x1-none", "decoder_only-small-zero3-Nx1-minimal",
            "decoder_only-small-1xN-full", "t5_1_1-small-Nx1-full", "t5_1_1-small-2x2-minimal",
            "t5_1_1-small-act2-1xN-none"]
LAYOUTS = ["1x1", "Nx1", "zero3-Nx1", "1xN", "2x2", "act2-1xN"]
REMATS = ["none", "minimal", "full"]


def gin_text(network, size, remat, batch, layout, processes, vocab=8192, lm_length=128):
    cfg = "T5Config" if network == "t5_1_1" else "TransformerConfig"
    mod = "t5" if network == "t5_1_1" else "decoder_only"
    lines = [
        "from __gin__ import dynamic_registration",
        "import __main__ as train_script",
        "import seqio",
        "from t5x import partitioning",
        "from t5x import utils",
        f"from t5x.examples.{mod} import network",
        f"include 'models/{network}/tiny.gin'",
        "include 'runs/pretrain.gin'",
    ]
    if network == "t5_1_1":
        lines += ["MIXTURE_OR_TASK_NAME = 'c4_demo_span_corruption'",
                  "TASK_FEATURE_LENGTHS = {'inputs': 128, 'targets': 32}"]
    else:
        lines += ["MIXTURE_OR_TASK_NAME = 'c4_demo_full_lm'",
                  f"TASK_FEATURE_LENGTHS = {{'targets': {lm_length}}}"]
    lines += [f"TRAIN_STEPS = 2", f"BATCH_SIZE = {batch}", "DROPOUT_RATE = 0.0",
              "RANDOM_SEED = 0", "EVAL_PERIOD = None", "EVAL_STEPS = 1",
              f"network.{cfg}.vocab_size = {vocab}",
              f"network.{cfg}.remat_policy = '{remat}'",
              "seqio.SentencePieceVocabulary.sentencepiece_model_file = "
              "'c4_demo/sentencepiece.model'",
              "utils.SaveCheckpointConfig.period = None",
              "utils.SaveCheckpointConfig.save_dataset = False"]
    for k, v in SIZES[network][size].items():
        lines.append(f"network.{cfg}.{k} = {v}")
    n = processes
    parts = {"1x1": 1, "Nx1": 1, "zero3-Nx1": 1, "1xN": n, "2x2": 2, "act2-1xN": n}[layout]
    lines.append(f"partitioning.PjitPartitioner.num_partitions = {parts}")
    if layout == "zero3-Nx1":
        lines.append("partitioning.standard_logical_axis_rules.parameter_partitioning_dims = 2")
    if layout == "act2-1xN":
        lines.append("partitioning.standard_logical_axis_rules.activation_partitioning_dims = 2")
    return "\n".join(lines) + "\n"


def run_cell(t5xx, network, size, remat, batch, layout, processes, workdir, data_dir, vocab,
             lm_length=128):
    nproc = 1 if layout == "1x1" else (4 if layout == "2x2" else processes)
    name = f"{network}-{size}-{layout}-{remat}"
    gin = os.path.join(workdir, name + ".gin")
    with open(gin, "w") as f:
        f.write(gin_text(network, size, remat, batch, layout, processes, vocab, lm_length))
    # Each process's peak is appended to a file of its own line (one short
    # write each: lines of processes ending together on the shared stderr
    # could interleave character by character).
    peaks_file = os.path.join(workdir, name + ".peaks")
    cmd = [t5xx, "launch", f"--nproc_per_node={nproc}", "--",
           "/usr/bin/time", "-a", "-o", peaks_file, "-f", "PEAK_RSS_KB %M", t5xx, "train",
           f"--gin_file={gin}", f"--data_dir={data_dir}",
           f"--gin.MODEL_DIR='{os.path.join(workdir, name)}'"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    try:
        with open(peaks_file) as f:
            peaks = [int(x) for x in re.findall(r"PEAK_RSS_KB (\d+)", f.read())]
    except OSError:
        peaks = []
    if len(peaks) != nproc:
        sys.stderr.write(f"{name}: {len(peaks)} peaks for {nproc} processes\n")
        peaks = []
    plan = re.findall(r"memory plan per process: (.*?)peak ([0-9.]+) GiB", out)
    if p.returncode != 0 or not peaks or not plan:
        sys.stderr.write(f"{name}: failed (exit {p.returncode})\n{out[-3000:]}\n")
        return name, None, None, ""
    losses = re.findall(r"loss per target token: first ([0-9.]+), last ([0-9.]+)", out)
    return name, max(peaks) / 1048576.0, float(plan[0][1]), "losses %s %s" % losses[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t5xx", default="build/bin/t5xx")
    ap.add_argument("--networks", default="decoder_only,t5_1_1")
    ap.add_argument("--sizes", default="small,base")
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    ap.add_argument("--remats", default=",".join(REMATS))
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--tolerance", type=float, default=0.15)
    ap.add_argument("--lm_length", type=int, default=128,
                    help="decoder-only targets length (issue 34's large cell: 64)")
    ap.add_argument("--out")
    ap.add_argument("--cells", choices=["all", "ci"], default="all")
    ap.add_argument("--data_dir", help="holding c4_demo (default: a small corpus built here, "
                    "3,000 documents and 1,000 pieces, with vocab_size 1152)")
    ap.add_argument("--vocab", type=int, default=8192, help="the network's vocab_size with "
                    "--data_dir (the corpus's vocabulary, padded as t5x pads)")
    a = ap.parse_args()
    rows = ["| cell | measured peak RSS / process | plan's peak | plan / measured |",
            "|---|---|---|---|"]
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        data_dir, vocab = a.data_dir, a.vocab
        if not data_dir:
            data_dir, vocab = os.path.join(work, "data"), 1152
            subprocess.run([a.t5xx, "build_corpus", f"--data_dir={data_dir}",
                            "--max_documents=3000", "--vocab_size=1000"], check=True,
                           capture_output=True)
        for network in a.networks.split(","):
            for size in a.sizes.split(","):
                for layout in a.layouts.split(","):
                    for remat in a.remats.split(","):
                        if (a.cells == "ci" and
                                f"{network}-{size}-{layout}-{remat}" not in CI_CELLS):
                            continue
                        name, measured, planned, parts = run_cell(
                            os.path.abspath(a.t5xx), network, size, remat, a.batch, layout,
                            a.processes, work, data_dir, vocab, a.lm_length)
                        if measured is None:
                            rows.append(f"| {name} | failed | | |")
                            bad += 1
                        else:
                            r = planned / measured
                            bad += abs(r - 1) > a.tolerance
                            rows.append(f"| {name} | {measured:.3f} GiB | {planned:.3f} GiB | "
                                        f"{r:.3f} |")
                        print(rows[-1], parts, flush=True)
    table = "\n".join(rows)
    print(table)
    if a.out:
        with open(a.out, "w") as f:
            f.write(table + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
