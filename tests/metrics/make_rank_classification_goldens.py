#!/usr/bin/env python3
"""Writes rank_classification_goldens.json for rank_classification_test.cc:
t5's own t5.evaluation.metrics.rank_classification (with the sklearn it
calls) on fixed, seeded cases: rows in shuffled order, tied scores, float32
weights, several correct choices, a varying number of choices, 2, 3 and 4
classes, normalization by target length, and the inputs t5 refuses.

  PYTHONPATH=../shared/t5 ~/.cache/t5xx/t5x-venv/bin/python3 \\
      tests/metrics/make_rank_classification_goldens.py
"""

import json
import os
import platform
import random

import numpy as np
import sklearn
from t5.evaluation import metrics

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "rank_classification_goldens.json")


def make_case(rng, name, inputs, num_choices, num_classes, normalize=False,
              weights=False, multi=False, ties=False, shuffle=True):
  targets, scores = [], []
  for i in range(inputs):
    k = num_choices if isinstance(num_choices, int) else rng.choice(num_choices)
    correct = {rng.randrange(k)}
    if multi and rng.random() < 0.5:
      correct.add(rng.randrange(k))
    w = float(np.float32(rng.uniform(0.25, 2.0))) if weights else 1.0
    for c in range(k):
      score = -float(rng.randrange(1, 6)) if ties else -rng.uniform(0.1, 20.0)
      targets.append([[i, c], c in correct, w, rng.randrange(1, 9)])
      scores.append(score)
  rows = list(zip(targets, scores))
  if shuffle:
    rng.shuffle(rows)
  targets, scores = [list(x) for x in zip(*rows)]
  return {"name": name, "targets": targets, "scores": scores,
          "num_classes": num_classes, "normalize_by_target_length": normalize}


def answer(case):
  targets = [(tuple(t[0]), t[1], np.float32(t[2]) if t[2] != 1.0 else 1.0, t[3])
             for t in case["targets"]]
  try:
    got = metrics.rank_classification(
        targets, case["scores"], num_classes=case["num_classes"],
        normalize_by_target_length=case["normalize_by_target_length"])
    return {k: float(v) for k, v in got.items()}
  except (ValueError, AssertionError, ZeroDivisionError) as e:
    return {"error": type(e).__name__ + ": " + str(e)}


def main():
  rng = random.Random(20261206)
  cases = [
      make_case(rng, "binary", 12, 2, 2),
      make_case(rng, "binary_weighted", 15, 2, 2, weights=True),
      make_case(rng, "binary_ties", 20, 2, 2, ties=True),
      make_case(rng, "binary_normalized", 12, 2, 2, normalize=True),
      make_case(rng, "three_classes", 18, 3, 3),
      make_case(rng, "three_classes_weighted", 18, 3, 3, weights=True),
      make_case(rng, "four_classes_multiple_answers", 10, 4, 4, multi=True),
      make_case(rng, "varying_choices", 14, [2, 3, 5], None),
      make_case(rng, "varying_choices_weighted_normalized", 14, [1, 2, 4], None,
                normalize=True, weights=True),
      make_case(rng, "none_with_ties", 10, 3, None, ties=True),
  ]
  one_class = make_case(rng, "error_one_class", 4, 2, 2, shuffle=False)
  for t in one_class["targets"]:
    t[1] = t[0][1] == 0
  cases.append(one_class)
  dup = make_case(rng, "error_duplicate_idx", 3, 2, 2, shuffle=False)
  dup["targets"][3][0] = [0, 1]
  cases.append(dup)
  cases.append(dict(make_case(rng, "error_not_multiple", 3, 3, 2, shuffle=False)))
  for case in cases:
    case["expected"] = answer(case)
  about = ("Made by tests/metrics/make_rank_classification_goldens.py: t5's "
           "t5.evaluation.metrics.rank_classification (../shared/t5) on seeded cases. "
           f"Python {platform.python_version()}, numpy {np.__version__}, "
           f"sklearn {sklearn.__version__}. A weight other than 1.0 is a float32.")
  with open(OUT, "w") as f:
    f.write(json.dumps({"about": about, "cases": cases}, indent=None) + "\n")
  print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
  main()
