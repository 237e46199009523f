"""seqio's Evaluator on the scores `t5xx eval` gave: the rank-classification
tasks of rank_classification_tasks.gin, defined here in seqio with t5's own
rank_classification_formatter, postprocessor and metric (keep the two in
step), evaluated by seqio.Evaluator with a score_fn that returns t5xx's
per-example scores (the "score" of t5xx's <task>-<step>.jsonl). Checks, per
task:
  * the examples: t5xx's inputs/targets text and postprocessed targets
    ((idx, is_correct, weight, len(targets))) equal seqio's, in order;
  * the metrics: t5xx's <task>-metrics.jsonl line for the step equals what
    seqio's Evaluator computes from the same scores (1e-9 relative).

Usage: rank_classification_oracle.py EVAL_DIR STEP TFDS_DATA_DIR SPM_MODEL SPLIT
Prints "ok <task> <metrics>" per task; exits 1 on a difference.
"""

import functools
import json
import math
import os
import sys

import seqio
from t5.data import postprocessors as t5_post
from t5.data import preprocessors as t5_pre
from t5.evaluation import metrics as t5_metrics


def register(vocab):
  features = {'inputs': seqio.Feature(vocab), 'targets': seqio.Feature(vocab)}
  copa = functools.partial(
      t5_pre.rank_classification_formatter,
      inputs_formats='{premise} What is the {question}? X',
      targets_formats=['I think {choice1}', 'I think {choice2}'])
  cb = functools.partial(
      t5_pre.rank_classification_formatter,
      inputs_formats='cb premise: {premise} hypothesis: {hypothesis}',
      targets_formats=['entailment', 'contradiction', 'neutral'])
  specs = [
      ('rank_copa', 'super_glue/copa:1.0.2', copa,
       functools.partial(t5_metrics.rank_classification, num_classes=2)),
      ('rank_copa_normalized', 'super_glue/copa:1.0.2', copa,
       functools.partial(t5_metrics.rank_classification, normalize_by_target_length=True)),
      ('rank_cb', 'super_glue/cb:1.0.2', cb,
       functools.partial(t5_metrics.rank_classification, num_classes=3)),
  ]
  for name, tfds_name, formatter, metric in specs:
    # seqio sorts metric_fns by their argument names: a partial keeps them.
    def score_metric(targets, scores, _metric=metric):
      return _metric(targets, scores)
    seqio.TaskRegistry.add(
        name, source=seqio.TfdsDataSource(tfds_name=tfds_name),
        preprocessors=[formatter, seqio.preprocessors.tokenize,
                       seqio.preprocessors.append_eos_after_trim],
        output_features=features, postprocess_fn=t5_post.rank_classification,
        metric_fns=[score_metric])
  return [s[0] for s in specs]


def plain(x):
  if hasattr(x, 'tolist'):
    x = x.tolist()
  if isinstance(x, (list, tuple)):
    return [plain(e) for e in x]
  if isinstance(x, bytes):
    return x.decode('utf-8')
  return x


def close(a, b):
  return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def main():
  eval_dir, step, tfds_dir, spm, split = sys.argv[1:6]
  step = int(step)
  seqio.set_tfds_data_dir_override(tfds_dir)
  vocab = seqio.SentencePieceVocabulary(spm, extra_ids=100)
  failures = 0
  for name in register(vocab):
    rows = [json.loads(l) for l in open(os.path.join(eval_dir, f'{name}-{step:06}.jsonl'))]
    lines = [json.loads(l) for l in open(os.path.join(eval_dir, f'{name}-metrics.jsonl'))]
    t5xx_metrics = [l for l in lines if l['step'] == step][-1]
    task = seqio.get_mixture_or_task(name)
    examples = list(task.get_dataset(sequence_length=None, split=split, shuffle=False,
                                     use_cached=False).as_numpy_iterator())
    if len(examples) != len(rows):
      print(f'FAIL {name}: seqio has {len(examples)} examples, t5xx logged {len(rows)}')
      failures += 1
      continue
    for i, (ex, row) in enumerate(zip(examples, rows)):
      want_target = plain(t5_post.rank_classification(None, example=ex, is_target=True))
      got = (row['input'].get('inputs_pretokenized'), row['input'].get('targets_pretokenized'),
             row['target'])
      want = (plain(ex['inputs_pretokenized']), plain(ex['targets_pretokenized']), want_target)
      if got != want:
        print(f'FAIL {name} example {i}: t5xx {got} vs seqio {want}')
        failures += 1
        break
    scores = [r['score'] for r in rows]
    evaluator = seqio.Evaluator(
        mixture_or_task_name=name,
        feature_converter=seqio.EncDecFeatureConverter(pack=False),
        eval_split=split, use_cached=False, sequence_length=None, logger_cls=())
    all_metrics, _ = evaluator.evaluate(
        compute_metrics=True, step=step,
        score_fn=lambda ds, s=scores: list(enumerate(s)))
    seqio_metrics = {k: float(v) for k, v in all_metrics.result()[name].items()}
    got = {k: v for k, v in t5xx_metrics.items() if k != 'step'}
    if set(got) != set(seqio_metrics) or not all(
        close(got[k], seqio_metrics[k]) for k in got):
      print(f'FAIL {name}: t5xx {got} vs seqio Evaluator {seqio_metrics}')
      failures += 1
      continue
    print(f'ok {name} {json.dumps(seqio_metrics, sort_keys=True)}')
  return 1 if failures else 0


if __name__ == '__main__':
  sys.exit(main())
