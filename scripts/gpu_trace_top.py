#!/usr/bin/env python3
"""Tables a Chrome trace written by libtorch's profiler (t5xx_gpu_train_bench
--trace_dir, bench/kineto_trace.h): the top kernels by device time and the
time per category, for one train step.

    scripts/gpu_trace_top.py TRACE.json[.gz] [--top 10] [--json OUT.json]

GPU traces: the "kernel", "gpu_memcpy" and "gpu_memset" events (CUPTI's
device-side durations). CPU traces (no such events, e.g. the --smoke run):
the leaf "cpu_op" events (libtorch's legacy profiler, which Debian's
libtorch 1.13 writes with: "X" events without a category), i.e. the ops
that called no other op on their thread -- their durations are the CPU's
work. Each name falls in the first
category whose pattern matches it (CATEGORIES below; "other" when none).
Exit status 2 when the file cannot be read or holds no such events.
Standard library only.
"""
import argparse
import collections
import gzip
import json
import re
import sys

# (category, pattern over the lower-cased kernel or op name), first match wins.
CATEGORIES = [
    ("nccl", r"nccl"),
    ("attention", r"fmha|flash|attention|sdpa|cudnn_.*mha|_efficient_attention|sdp_"),
    ("optimizer multi-tensor", r"foreach|multi_tensor"),
    ("gemm", r"gemm|cutlass|xmma|nvjet|cublas|sm\d\d_.*\d+x\d+|aten::(mm|bmm|addmm|matmul|baddbmm)$"),
    ("softmax", r"softmax"),
    ("norm", r"norm|rsqrt"),
    ("loss / logsumexp", r"logsumexp|log_softmax|nll|cross_entropy"),
    ("reduction", r"reduce|aten::(sum|mean|max|min|amax|argmax)$"),
    ("random (dropout)", r"bernoulli|philox|rand|dropout"),
    ("gather / index", r"index|gather|scatter|embedding|take"),
    ("copy / cast / cat", r"memcpy|memset|copy|cat|fill|aten::(to|_to_copy|clone|stack)$"),
    ("view / alloc (no kernel)", r"aten::(empty|empty_strided|empty_like|as_strided|_reshape_alias|"
                                 r"view|reshape|slice|select|unsqueeze|squeeze|expand|transpose|"
                                 r"permute|t|detach|alias|narrow|unbind|split|resize_|lift_fresh|"
                                 r"_unsafe_view|zero_|zeros)$"),
    ("elementwise", r"elementwise|vectorized|unrolled|pointwise|aten::"),
]


def category(name):
    low = name.lower()
    for cat, pattern in CATEGORIES:
        if re.search(pattern, low):
            return cat
    return "other"


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def device_events(events):
    kinds = {"kernel", "gpu_memcpy", "gpu_memset"}
    return [(e["name"], float(e.get("dur", 0))) for e in events
            if e.get("ph") == "X" and str(e.get("cat", "")).lower() in kinds]


def cpu_leaf_events(events):
    """cpu_op events (or, from libtorch's legacy profiler, "X" events without a
    category) that contain no other such event of their thread."""
    by_thread = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and str(e.get("cat", "cpu_op")).lower() == "cpu_op":
            by_thread[(e.get("pid"), e.get("tid"))].append(e)
    out = []
    for evs in by_thread.values():
        evs.sort(key=lambda e: (float(e["ts"]), -float(e.get("dur", 0))))
        for i, e in enumerate(evs):
            end = float(e["ts"]) + float(e.get("dur", 0))
            nxt = evs[i + 1] if i + 1 < len(evs) else None
            if nxt is not None and float(nxt["ts"]) < end:
                continue  # the next op starts inside this one: not a leaf
            out.append((e["name"], float(e.get("dur", 0))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--json", help="also write the tables as JSON here")
    args = ap.parse_args()
    try:
        events = load(args.trace)
    except (OSError, ValueError, KeyError) as e:
        print(f"gpu_trace_top: cannot read {args.trace}: {e}", file=sys.stderr)
        return 2
    rows = device_events(events)
    source = "GPU kernels and copies (device time)"
    if not rows:
        rows = cpu_leaf_events(events)
        source = "leaf CPU ops (no GPU events in this trace)"
    if not rows:
        print(f"gpu_trace_top: {args.trace} holds no kernel or cpu_op events", file=sys.stderr)
        return 2
    total = sum(d for _, d in rows)
    per_name = collections.defaultdict(lambda: [0, 0.0])
    per_cat = collections.defaultdict(lambda: [0, 0.0])
    for name, dur in rows:
        per_name[name][0] += 1
        per_name[name][1] += dur
        c = per_cat[category(name)]
        c[0] += 1
        c[1] += dur
    top = sorted(per_name.items(), key=lambda kv: -kv[1][1])[:args.top]
    print(f"{args.trace}: {source}: {len(rows)} events, {total / 1e3:.3f} ms in all")
    print(f"\ntop {len(top)} by time:")
    print(f"  {'ms':>9} {'%':>6} {'calls':>6}  {'category':<22} name")
    for name, (calls, dur) in top:
        short = name if len(name) <= 110 else name[:107] + "..."
        print(f"  {dur / 1e3:>9.3f} {100 * dur / total:>6.1f} {calls:>6}  {category(name):<22} {short}")
    print("\nby category:")
    print(f"  {'ms':>9} {'%':>6} {'calls':>6}  category")
    for cat, (calls, dur) in sorted(per_cat.items(), key=lambda kv: -kv[1][1]):
        print(f"  {dur / 1e3:>9.3f} {100 * dur / total:>6.1f} {calls:>6}  {cat}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"source": source, "total_ms": total / 1e3,
                       "top": [{"name": n, "calls": c, "ms": d / 1e3, "category": category(n)}
                               for n, (c, d) in top],
                       "categories": {k: {"calls": c, "ms": d / 1e3}
                                      for k, (c, d) in per_cat.items()}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
