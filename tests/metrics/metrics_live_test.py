#!/usr/bin/env python3
"""Live check of t5xx's metrics against the installed reference libraries.

  metrics_live_test.py PATH/TO/metrics_json_tool

Sends every request of metrics_reference.requests() (BLEU over a corpus and
per sentence with '13a', 'intl' and 'none', the tokenizers' output, ROUGE
scores and tokens with and without the Porter stemmer, the stemmer in its
three modes on ~1000 words, the correlations, edit distance, Python's
str.lower) plus the Unicode tables to the t5xx tool and to sacrebleu,
rouge-score, NLTK, scipy and editdistance (called as t5's metrics.py calls
them), and requires:
  - strings, tokens, counts and every BLEU and ROUGE value bit for bit equal;
  - pearson/spearman within 1e-12 (×100 scale; scipy's BLAS dot sums in
    another order);
  - t5's randomised rouge (BootstrapAggregator "mid", NumPy seeded here) is
    within a quarter of its own 95% interval of t5xx's rouge (the mean), and
    prints the measured gaps.
squad/trivia_qa are compared too when T5_SRC names a t5 checkout (their
goldens in metrics_goldens.json come from t5's qa_utils.py).
Exits 77 (skip) when a library is missing: scripts/setup.sh --test.
"""

import json
import warnings
import os
import subprocess
import sys
import tempfile

try:
  sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
  import metrics_reference  # pylint: disable=g-import-not-at-top
except ImportError as e:
  print(f"SKIP: {e}; install the test packages with scripts/setup.sh --test "
        "(sacrebleu rouge-score nltk scipy editdistance)")
  sys.exit(77)


def run_tool(tool, requests):
  with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
    json.dump(requests, f, ensure_ascii=False)
    path = f.name
  try:
    out = subprocess.run([tool, path], check=True, capture_output=True, text=True).stdout
  finally:
    os.unlink(path)
  return json.loads(out)


def compare(want, got, tol, where, failures):
  if isinstance(want, dict) and "error" in want:
    if not (isinstance(got, dict) and "error" in got):
      failures.append(f"{where}: expected an error ({want['error']}), got {got}")
    return
  if isinstance(want, (int, float)) and not isinstance(want, bool):
    if not isinstance(got, (int, float)) or (
        got != want if tol == 0 else abs(got - want) > tol):
      failures.append(f"{where}: python {want!r} vs t5xx {got!r}")
    return
  if isinstance(want, list):
    if not isinstance(got, list) or len(got) != len(want):
      failures.append(f"{where}: python {str(want)[:200]} vs t5xx {str(got)[:200]}")
      return
    for i, (w, g) in enumerate(zip(want, got)):
      compare(w, g, tol, f"{where}[{i}]", failures)
    return
  if isinstance(want, dict):
    if not isinstance(got, dict) or set(got) != set(want):
      failures.append(f"{where}: python {want} vs t5xx {got}")
      return
    for k in want:
      compare(want[k], got[k], tol, f"{where}.{k}", failures)
    return
  if want != got:
    failures.append(f"{where}: python {want!r} vs t5xx {got!r}")


def main():
  if len(sys.argv) != 2:
    print(__doc__)
    return 2
  tool = sys.argv[1]
  warnings.simplefilter("ignore")  # scipy's ConstantInputWarning: NaN is the expected answer
  qa_utils = None
  if os.environ.get("T5_SRC"):
    qa_utils = metrics_reference.load_qa_utils(os.environ["T5_SRC"])
  requests = metrics_reference.requests() + [{"fn": "unicode_ranges"}]
  got = run_tool(tool, requests)
  failures, counts, skipped = [], {}, 0
  max_corr_gap = 0.0
  for i, (request, answer) in enumerate(zip(requests, got)):
    fn = request["fn"]
    want = metrics_reference.answer(request, qa_utils)
    if want is None:
      skipped += 1
      continue
    tol = 1e-12 if fn in ("pearson_corrcoef", "spearman_corrcoef") else 0
    compare(want, answer, tol, f"request {i} ({fn})", failures)
    if tol and isinstance(want, dict) and "error" not in want:
      for k, v in want.items():
        if v is not None and isinstance(answer.get(k), float):
          max_corr_gap = max(max_corr_gap, abs(v - answer[k]))
    counts[fn] = counts.get(fn, 0) + 1

  # t5's rouge is the bootstrap "mid"; t5xx's rouge is the mean.
  gaps = []
  for stem in (False, True):
    targets = [t for t, _ in metrics_reference.ROUGE_PAIRS]
    preds = [p for _, p in metrics_reference.ROUGE_PAIRS]
    mean = run_tool(tool, [{"fn": "rouge", "targets": targets, "predictions": preds,
                            "use_stemmer": stem}])[0]
    for seed in range(5):
      boot = metrics_reference.t5_rouge_bootstrap(
          targets, preds, metrics_reference.DEFAULT_ROUGE_KEYS, stem, seed)
      for key, (low, mid, high) in boot.items():
        gap = abs(mid - mean[key])
        gaps.append((gap, gap / (high - low), key, stem, seed))
        if gap > 0.25 * (high - low):
          failures.append(f"rouge {key} stem={stem} seed={seed}: bootstrap mid {mid} is "
                          f"{gap:.3f} from t5xx's mean {mean[key]} (interval {low}..{high})")
  worst = max(gaps)
  print(f"compared {sum(counts.values())} requests: "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
  if skipped:
    print(f"not compared: {skipped} squad/trivia_qa requests (set T5_SRC to a t5 checkout)")
  print(f"largest pearson/spearman difference (×100 scale): {max_corr_gap:.3g}")
  print(f"t5 rouge bootstrap mid vs t5xx mean, {len(gaps)} draws: largest gap {worst[0]:.4f} "
        f"points = {worst[1]:.3f} of the 95% interval ({worst[2]}, stemmer={worst[3]})")
  if failures:
    print(f"{len(failures)} mismatches:")
    for f in failures[:40]:
      print("  " + f)
    if any("unicode_ranges" in f or "python_lower" in f for f in failures):
      print("Unicode tables differ: after a Python or `regex` upgrade, regenerate "
            "src/t5xx/metrics/unicode_tables.inc with make_unicode_tables.py (its header "
            "names the versions it was made with) and the goldens with "
            "make_metrics_goldens.py.")
    return 1
  print("OK: t5xx equals the reference libraries")
  return 0


if __name__ == "__main__":
  sys.exit(main())
