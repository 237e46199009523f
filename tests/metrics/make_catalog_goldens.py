#!/usr/bin/env python3
"""Writes catalog_goldens.json: fixed cases of the metrics and postprocessors
of t5's task catalog, answered by t5's OWN functions (t5.data.glue_utils'
GLUE_METRICS / SUPERGLUE_METRICS / get_glue_postprocess_fn,
t5.evaluation.metrics, t5.data.postprocessors), for
tests/data/evaluation/catalog_golden_test.cc.

  PYTHONPATH=../shared/t5 ~/.cache/t5xx/t5x-venv/bin/python3 \\
      tests/metrics/make_catalog_goldens.py

(the venv holds TensorFlow, tensorflow-datasets, seqio, scikit-learn,
sacrebleu and rouge_score; PYTHONPATH a checkout of t5.)

A case is {"request": ..., "expected": ...}. Requests:
  {"fn": "metric", "metric": NAME, "targets": [...], "predictions": [...]}
      NAME: "glue:<config>" / "super_glue:<config>" (every metric_fn of
      GLUE_METRICS[config] / SUPERGLUE_METRICS[config], results merged),
      or one of METRICS below. expected: {key: value} (NaN as null) or
      {"error": "<Python exception type>"}.
  {"fn": "postprocess", "postprocessor": NAME, "text": ..., "is_target": b,
   "example": {feature: {"text": s} | {"int32": n} | {"int64": n} |
                        {"strings": [...]}}}
      the example as seqio hands it to a postprocessor (text as bytes,
      scalars as numpy scalars, string lists as numpy arrays of bytes).
      expected: the returned value as JSON (tuples as lists, NaN as null,
      infinities as "inf"/"-inf"), or an error.
Values in targets/predictions: JSON ints, floats, strings, lists and
objects stand for Python ints, floats, str, lists (a list of ints for a
tuple: t5's record groups) and dicts.
"""

import json
import math
import os
import platform
import sys

import numpy as np
import sklearn
from t5.data import glue_utils
from t5.data import postprocessors
from t5.evaluation import metrics

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalog_goldens.json")

METRICS = {
    "matthews_corrcoef": metrics.sklearn_metrics_wrapper("matthews_corrcoef"),
    "cola_matthews_corrcoef": metrics.sklearn_metrics_wrapper(
        "matthews_corrcoef", metric_post_process_fn=lambda x: 100 * x),
    "multirc_f1_over_all_answers": metrics.multirc_f1_over_all_answers,
    "all_match": metrics.all_match,
    "mean_group_metric(all_match)": metrics.mean_group_metric(metrics.all_match),
    "mean_group_metric(all_match,subgroups)": metrics.mean_group_metric(
        metrics.all_match, return_subgroup_scores=True),
    "mean_group_metric(accuracy)": metrics.mean_group_metric(metrics.accuracy),
    "deduplicate_metric(squad)": metrics.deduplicate_metric(metrics.squad),
    "span_squad": metrics.span_squad,
    "f1_score_with_invalid": metrics.f1_score_with_invalid,
    "accuracy": metrics.accuracy,
}

POSTPROCESSORS = {
    "multirc": postprocessors.multirc,
    "record": postprocessors.record,
    "span_qa": postprocessors.span_qa,
    "qa": postprocessors.qa,
    "wsc_simple": postprocessors.wsc_simple,
    "string_to_float": postprocessors.string_to_float,
    "lower_text": postprocessors.lower_text,
    "glue:cola": None,  # get_glue_postprocess_fn of the TFDS builder config
    "glue:stsb": None,
    "super_glue:cb": None,
}


def tuples(v):
  """JSON lists of ints in a dict's "group" are Python tuples (record)."""
  if isinstance(v, dict):
    return {k: (tuple(x) if k == "group" and isinstance(x, list) else tuples(x))
            for k, x in v.items()}
  return v


def to_json(v):
  if isinstance(v, dict):
    return {k: to_json(x) for k, x in v.items()}
  if isinstance(v, (list, tuple, np.ndarray)):
    return [to_json(x) for x in v]
  if isinstance(v, (bool, np.bool_)):
    return int(v)
  if isinstance(v, (int, np.integer)):
    return int(v)
  if isinstance(v, (float, np.floating)):
    if math.isnan(v):
      return None
    return float(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
  if isinstance(v, bytes):
    return v.decode("utf-8")
  return v


def example_from(spec):
  ex = {}
  for k, v in spec.items():
    (kind, x), = v.items()
    if kind == "text":
      ex[k] = x.encode("utf-8")
    elif kind == "int32":
      ex[k] = np.int32(x)
    elif kind == "int64":
      ex[k] = np.int64(x)
    elif kind == "strings":
      ex[k] = np.array([s.encode("utf-8") for s in x], dtype=object)
  return ex


def builder_config(benchmark, name):
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
  cls = tfds.text.glue.Glue if benchmark == "glue" else tfds.text.super_glue.SuperGlue
  return cls.builder_configs[name]


def answer(request):
  try:
    if request["fn"] == "metric":
      t = [tuples(x) for x in request["targets"]]
      p = [tuples(x) for x in request["predictions"]]
      name = request["metric"]
      if ":" in name:
        benchmark, config = name.split(":")
        fns = (glue_utils.get_glue_metric(config) if benchmark == "glue" else
               glue_utils.get_super_glue_metric(config))
      else:
        fns = [METRICS[name]]
      out = {}
      for fn in fns:
        out.update(fn(t, p))
      return to_json(out)
    name = request["postprocessor"]
    if ":" in name:
      fn = glue_utils.get_glue_postprocess_fn(builder_config(*name.split(":")))
    else:
      fn = POSTPROCESSORS[name]
    return to_json(fn(request["text"], example=example_from(request["example"]),
                      is_target=request["is_target"]))
  except Exception as e:  # pylint: disable=broad-except
    return {"error": type(e).__name__}


def M(metric, targets, predictions):
  return {"fn": "metric", "metric": metric, "targets": targets, "predictions": predictions}


def P(post, text, example=None, is_target=False):
  return {"fn": "postprocess", "postprocessor": post, "text": text, "example": example or {},
          "is_target": is_target}


def requests():
  r = []
  # --- sklearn's matthews_corrcoef, raw and as CoLA's metric ---------------
  mcc_cases = [
      ([0, 1, 1, 0, 1], [0, 1, 0, 0, 1]),
      ([1, 1, 1, 1], [1, 1, 1, 1]),       # one class both sides -> 0
      ([1, 1, 1, 1], [0, 1, 0, 1]),       # one class in targets -> 0
      ([0, 1, 0, 1], [1, 1, 1, 1]),       # one class in predictions -> 0
      ([1], [1]), ([0], [1]),             # one example -> 0
      ([0, 1, 0, 1], [1, 0, 1, 0]),       # -1
      ([0, 1, 1, 0, 1, 0], [0, 1, -1, 0, -1, 1]),  # unknown labels (-1)
      ([0, 1, 2, 2, 1, 0, 2], [0, 2, 2, 1, 1, 0, 0]),  # multiclass
      ([0, 1], [0, 1]),
      ([0, 0, 1], [0, 0, 0]),
      ([1.0, 0.0, 1.0], [1, 0, 0]),
      ([0.5, 1.0], [0, 1]),               # continuous: ValueError
      (["a", "b", "a"], ["a", "a", "a"]),
      ([], []),
  ]
  for t, p in mcc_cases:
    r.append(M("matthews_corrcoef", t, p))
    r.append(M("glue:cola", t, p))
  rng = np.random.RandomState(51)
  for n in (37, 500, 4000):
    t = rng.randint(0, 2, n).tolist()
    p = [x if rng.rand() < 0.7 else int(rng.randint(-1, 2)) for x in t]
    r.append(M("glue:cola", t, p))
  # --- binary F1 edge cases and the other GLUE/SuperGLUE metric lists ------
  for t, p in [([0, 0, 0], [0, 0, 0]), ([1, 1], [1, 1]), ([0, 1, 1], [0, -1, 2]),
               ([0, 0], [-1, 5]), ([1, 0, 1, 1], [1, 1, 0, 1])]:
    r.append(M("f1_score_with_invalid", t, p))
    r.append(M("glue:mrpc", t, p))
  r.append(M("glue:qqp", [0, 1, 1, 0], [0, 1, 0, -1]))
  r.append(M("glue:stsb", [1.0, 2.5, 3.0, 4.2], [1.1, 2.0, 3.5, -1.0]))
  for c in ["sst2", "mnli", "qnli", "rte", "wnli", "mnli_matched", "mnli_mismatched"]:
    r.append(M("glue:" + c, [0, 1, 2, 1], [0, 1, 1, -1]))
  r.append(M("glue:ax", [0], [0]))
  for c in ["boolq", "copa", "rte", "wic"]:
    r.append(M("super_glue:" + c, [0, 1, 1], [0, 1, -1]))
  r.append(M("super_glue:cb", [0, 1, 2, 2, 1], [0, 2, 2, 1, -1]))
  # --- MultiRC: dicts with a question group ---------------------------------
  def mt(v, g):
    return {"value": v, "group": g}

  def mp(v):
    return {"value": v}

  multirc_cases = [
      ([mt(1, 0), mt(0, 0), mt(1, 1), mt(1, 1), mt(0, 2)],
       [mp(1), mp(0), mp(1), mp(0), mp(0)]),
      ([mt(1, 5), mt(1, 5)], [mp(1), mp(-1)]),
      ([mt(0, 3), mt(0, 3), mt(0, 4)], [mp(0), mp(0), mp(0)]),  # no positives
      ([mt(1, 7), mt(0, 8), mt(1, 7), mt(0, 9), mt(1, 8)],
       [mp(1), mp(0), mp(1), mp(1), mp(-1)]),
  ]
  for t, p in multirc_cases:
    for m in ["super_glue:multirc", "multirc_f1_over_all_answers",
              "mean_group_metric(all_match)", "mean_group_metric(all_match,subgroups)",
              "mean_group_metric(accuracy)"]:
      r.append(M(m, t, p))
  rng = np.random.RandomState(7)
  t, p = [], []
  for q in range(60):
    for _ in range(rng.randint(1, 6)):
      v = int(rng.randint(0, 2))
      t.append(mt(v, q))
      p.append(mp(v if rng.rand() < 0.8 else int(rng.randint(-1, 2))))
  r.append(M("super_glue:multirc", t, p))
  r.append(M("mean_group_metric(all_match)", [1, 2], [1, 2]))  # not dicts: TypeError
  r.append(M("mean_group_metric(all_match)", [mp(1)], [mp(1)]))  # no group: KeyError
  # --- all_match on plain lists ---------------------------------------------
  for t, p in [([1, 0], [1, 0]), ([1, 0], [1.0, 0.0]), ([1, 0], [1, 1]), (["a"], ["a"]),
               (["a"], ["b"]), ([], []), ([1, 2], [1]), (["1"], [1])]:
    r.append(M("all_match", t, p))
  # --- ReCoRD: deduplicated squad -------------------------------------------
  def rt(answers, g):
    return {"value": answers, "group": g}

  record_t = [rt(["Penguin", "pigeon"], [0, 0]), rt(["Penguin", "pigeon"], [0, 0]),
              rt(["the Eiffel Tower"], [0, 1]), rt(["Paris", "paris, France"], [1, 2]),
              rt(["Paris", "paris, France"], [1, 2]), rt([], [2, 3])]
  record_p = [mp("penguin"), mp("pigeon"), mp("Eiffel tower!"), mp("France"), mp("Paris"),
              mp("x")]
  for m in ["super_glue:record", "deduplicate_metric(squad)"]:
    r.append(M(m, record_t, record_p))
    r.append(M(m, record_t[:5], record_p[:5]))
  r.append(M("super_glue:record", [rt(["a b"], [0, 0]), rt(["a b"], [0, 1])],
             [mp("A B."), mp("b c")]))
  # --- span_squad -----------------------------------------------------------
  ctx = "The Normans (Norman: Nourmands) were the people who, in the 10th-11th centuries."
  def st(answers, context=ctx):
    return {"answers": answers, "context": context}

  span_cases = [
      ("start: 1 end: 1", ["Normans"]), ("start: 0 end: 1", ["The Normans"]),
      ("start: 5 end: 3", ["x"]), ("start: 2 end: 99", ["Norman Nourmands"]),
      ("start: 99 end: 100", [""]), ("start: one end: 2", ["The"]),
      ("start: 1", ["Normans"]), ("", ["Normans"]), ("garbage", ["Normans"]),
      ("start: 1_0 end: 1_1", ["10th 11th"]), ("start: 1__0 end: 11", ["10th"]),
      ("start: _1 end: 2", ["Normans"]), ("start: ١ end: ٢", ["Normans Norman"]),
      ("s: 3 e: 4 extra tokens", ["Nourmands were"]), ("start:-2 end:-1", ["The"]),
      ("start: 007 end: 0008", ["people who"]), ("start: 2.5 end: 4", ["Norman"]),
      ("start: ² end: 3", ["Norman"]), ("x 1 y " + "9" * 30, ["Normans"]),
  ]
  r.append(M("span_squad", [st(a) for _, a in span_cases], [p for p, _ in span_cases]))
  for p, a in span_cases:
    r.append(M("span_squad", [st(a)], [p]))
  r.append(M("span_squad", [st(["café au lait"], "Ünïcode: Café au lait, s'il vous plaît")],
             ["start: 1 end: 3"]))
  # --- postprocessors -------------------------------------------------------
  idx = {"idx/paragraph": {"int32": 4}, "idx/question": {"int32": 17},
         "idx/answer": {"int32": 2}}
  for text in ["True", "False", "true", "maybe", "", " True"]:
    for is_target in (True, False):
      r.append(P("multirc", text, idx, is_target))
  rec = {"answers": {"strings": ["Penguin", "pigeon"]}, "idx/passage": {"int32": 3},
         "idx/query": {"int32": 9}}
  for text in ["penguin", ""]:
    for is_target in (True, False):
      r.append(P("record", text, rec, is_target))
  r.append(P("record", "x", {"answers": {"strings": []}, "idx/passage": {"int32": 0},
                             "idx/query": {"int32": 1}}, True))
  span_ex = {"answers": {"strings": ["Normans", "the Normans"]}, "context": {"text": ctx}}
  r.append(P("span_qa", "start: 1 end: 1", span_ex, True))
  r.append(P("span_qa", "start: 1 end: 1", span_ex, False))
  r.append(P("qa", "x", {"answers": {"strings": ["a", "b c"]}}, True))
  r.append(P("qa", "x", {"answers": {"strings": ["a", "b c"]}}, False))
  wsc = [
      ("Bob", "Bob"), ("the dog", "dog"), ("The fuzzy bunny", "bunny"),
      ("bunny", "the fuzzy bunny"), ("Bob", "Bob's hat"), ("Bob's hat", "bob's HAT"),
      ("the", "the dog"), ("", "dog"), ("   ", "dog"), ("  his  cat ", "cat"),
      ("a  cat", "cat"), ("cat dog", "dog cat"), ("cat", "dog"), ("ÉLAN", "élan"),
      ("\u3000İstanbul\n", "i̇stanbul"), ("my    ", "my"), ("your dog's", "dog"),
      ("those  two  men", "two men"), ("Σ", "σ"), ("the  ,", "x"),
  ]
  for pred, referent in wsc:
    ex = {"targets_pretokenized": {"text": referent}, "label": {"int64": 1}}
    r.append(P("wsc_simple", pred, ex, False))
  r.append(P("wsc_simple", "dog", {"targets_pretokenized": {"text": "dog"},
                                   "label": {"int64": 0}}, True))
  for text in ["1", " 2.5\n", "-3e2", "1_000.5", "nan", "-inf", "Infinity", "abc", "",
               "0x10", "1,5", "٣", "\u20031.5\u2003", "1__0", "+.5", "5."]:
    r.append(P("string_to_float", text, {}, False))
    r.append(P("glue:stsb", text, {}, True))
  for text in ["ABC", "ÀÉÎ", "İ", "ΣΑΣ", "Straße"]:
    r.append(P("lower_text", text, {}, False))
  for text in ["acceptable", "unacceptable", "Acceptable", "", "other"]:
    r.append(P("glue:cola", text, {}, True))
  for text in ["entailment", "contradiction", "neutral", "x"]:
    r.append(P("super_glue:cb", text, {}, False))
  return r


def main():
  cases = [{"request": q, "expected": answer(q)} for q in requests()]
  about = (
      "Made by tests/metrics/make_catalog_goldens.py: each request answered by t5's own "
      "t5.data.glue_utils (GLUE_METRICS, SUPERGLUE_METRICS, get_glue_postprocess_fn), "
      "t5.evaluation.metrics and t5.data.postprocessors. Versions: "
      f"Python {platform.python_version()}, numpy {np.__version__}, "
      f"scikit-learn {sklearn.__version__}; t5 from {os.path.dirname(metrics.__file__)}. "
      "NaN is null, infinities are the strings 'inf' and '-inf'; errors are the Python "
      "exception's type.")
  with open(OUT, "w", encoding="utf-8") as f:
    f.write('{"about": ' + json.dumps(about) + ',\n"cases": [\n')
    f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
    f.write("\n]}\n")
  print(f"wrote {OUT}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
  main()
