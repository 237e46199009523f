"""t5's own postprocess_fn and metric_fns on the predictions t5xx wrote
during inference evaluation (MODEL_DIR/inference_eval/<task>-<step>.jsonl),
against the metrics t5xx reported (<task>-metrics.jsonl), within 1e-6.

  PYTHONPATH=<t5 source> python3 t5_catalog_metrics.py INFERENCE_EVAL_DIR TFDS_DATA_DIR DATA_DIR

t5's catalog is imported with its gs://t5-data vocabularies read from their
copies under DATA_DIR (as t5xx reads them) and TFDS data from TFDS_DATA_DIR.
Run by tests/cli/t5_catalog_test.sh with the t5x venv.
"""
import glob
import json
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import seqio  # noqa: E402

inference_dir, tfds_dir, data_dir = sys.argv[1:4]
_init = seqio.SentencePieceVocabulary.__init__


def _local_init(self, path, *args, **kwargs):
  if path.startswith("gs://"):
    path = os.path.join(data_dir, path[len("gs://"):])
  _init(self, path, *args, **kwargs)


seqio.SentencePieceVocabulary.__init__ = _local_init
seqio.set_tfds_data_dir_override(tfds_dir)
import t5.data.mixtures  # noqa: E402,F401  pylint: disable=unused-import

checked = 0
for metrics_file in sorted(glob.glob(os.path.join(inference_dir, "*-metrics.jsonl"))):
  name = os.path.basename(metrics_file)[: -len("-metrics.jsonl")]
  task = seqio.TaskRegistry.get(name)
  for line in open(metrics_file):
    reported = json.loads(line)
    step = reported.pop("step")
    # t5xx writes a NaN metric (a constant prediction's correlation) as null.
    reported = {k: float("nan") if v is None else v for k, v in reported.items()}
    rows = [json.loads(l) for l in open(os.path.join(inference_dir, "%s-%06d.jsonl" % (name, step)))]
    post = task.postprocess_fn or (lambda x, **_: x)
    targets = [post(r["input"]["targets_pretokenized"], example=r["input"], is_target=True)
               for r in rows]
    predictions = [post(r["output"], example=r["input"], is_target=False) for r in rows]
    want = {}
    for fn in task.metric_fns:
      want.update({k: float(v) for k, v in fn(targets, predictions).items()})
    same = set(want) == set(reported) and all(
        (math.isnan(want[k]) and math.isnan(reported[k])) or abs(want[k] - reported[k]) <= 1e-6
        for k in want)
    if not same:
      print("FAIL %s step %d: t5 %s, t5xx %s" % (name, step, want, reported))
      sys.exit(1)
    checked += 1
print("OK: t5's metrics equal t5xx's for %d (task, step) pairs" % checked)
