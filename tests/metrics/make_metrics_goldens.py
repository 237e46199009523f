#!/usr/bin/env python3
"""Writes metrics_goldens.json: the fixed metric requests of
metrics_reference.py with the answers of the Python libraries, called as
t5's t5/evaluation/metrics.py calls them, for metrics_golden_test.cc.

  ~/.cache/t5xx/test-venv/bin/python3 tests/metrics/make_metrics_goldens.py \
      --t5_src=PATH_TO_A_T5_CHECKOUT

The venv needs sacrebleu, rouge-score (with nltk), scipy and editdistance
(scripts/setup.sh --test installs them). squad/trivia_qa answers come from
t5's own t5/evaluation/qa_utils.py in the checkout given (loaded alone,
without t5's TensorFlow imports); without --t5_src they are left out.
"""

import argparse
import json
import os
import platform
import sys

import nltk
import numpy
import rouge_score
import sacrebleu
import scipy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics_reference  # pylint: disable=g-import-not-at-top

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metrics_goldens.json")


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--t5_src", default=None, help="a checkout of "
                      "google-research/text-to-text-transfer-transformer")
  args = parser.parse_args()
  qa_utils = metrics_reference.load_qa_utils(args.t5_src) if args.t5_src else None
  cases = []
  for request in metrics_reference.requests():
    expected = metrics_reference.answer(request, qa_utils)
    if expected is None:
      continue
    cases.append({"request": request, "expected": expected})
  try:
    rouge_version = __import__("importlib.metadata").metadata.version("rouge-score")
  except Exception:  # pylint: disable=broad-except
    rouge_version = "?"
  about = (
      "Made by tests/metrics/make_metrics_goldens.py: each request of metrics_reference.py "
      "answered by the Python libraries as t5's metrics.py calls them. Versions: "
      f"Python {platform.python_version()}, sacrebleu {sacrebleu.__version__}, "
      f"rouge-score {rouge_version}, nltk {nltk.__version__}, scipy {scipy.__version__}, "
      f"numpy {numpy.__version__}; squad/trivia_qa from t5's qa_utils.py "
      f"({'included' if qa_utils else 'left out: no --t5_src'}). Metric values are "
      "×100 as t5's; NaN is null.")
  with open(OUT, "w", encoding="utf-8") as f:
    # One case per line, so that a change shows as a readable diff.
    f.write('{"about": ' + json.dumps(about) + ',\n"cases": [\n')
    f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
    f.write("\n]}\n")
  print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
  main()
